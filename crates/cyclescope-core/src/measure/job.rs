//! The parent side of one measurement worker process: start it with the spec's arguments,
//! follow its messages, keep its evidence (the process record, per-trial preemption, what the
//! worker said about itself) and classify how it ended (complete, crash by signal, hang by
//! timeout, error return, overflow, exit without result, cancelled). Also the per-trial rules
//! the campaign applies to what came back (the disturbance test, per-call sample counts). It
//! never retries, plans or writes files: that is the campaign's.

pub(crate) mod meta;
mod outcome;
mod rules;

pub(crate) use rules::{MAX_PREEMPTED_SHARE, disturbance, record_samples, sample_calls_for};

use meta::{load_error, process_meta, recorded_command, worker_meta};

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::stats::Trial;
use super::trial::verify::{self, Observed, TrialOrder};
use super::trial::{TrialMessage, TrialSpec};
use super::trial_args::MeasureInvocation;
use crate::catalog::Instance;
use crate::counter::CycleSource;
use crate::counter::witness::ClockPair;
use crate::plugin::NgccMeta;
use crate::record::ProcessRecord;
use crate::vocabulary::{FailureKind, JobFailure, JobOutcome, ProcessStatus};
use crate::worker::{self, Exit, Limits, WorkerCommand};

/// Where and how workers run.
#[derive(Debug, Clone)]
pub(crate) struct WorkerSetup {
    pub(crate) exe: PathBuf,
    pub(crate) cpu: usize,
    /// The extended perf type of `cpu`'s core PMU on a hybrid CPU (`host::pmu`).
    pub(crate) pmu_type: Option<u32>,
    pub(crate) limits: Limits,
    pub(crate) cancel: Arc<AtomicBool>,
    /// The reference counter's rate the clock probe measured (Hz), when known: a worker
    /// counting with it must report cycles at that rate.
    pub(crate) reference_clock_hz: Option<f64>,
}

/// What the worker said about itself before measuring.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WorkerInfo {
    pub meta: Option<NgccMeta>,
    pub(crate) cycle_source: CycleSource,
    pub(crate) core_cycles: bool,
    pub(crate) perf_unavailable: Option<String>,
    pub(crate) per_call_source: Option<CycleSource>,
    pub(crate) timer_overhead_ticks: f64,
    pub(crate) baseline_rss_bytes: u64,
}

/// One worker process's result.
#[derive(Debug, Clone)]
pub(crate) struct ProcessRun {
    pub(crate) record: ProcessRecord,
    /// Per trial, the nanoseconds the worker waited for the CPU during the loop.
    pub(crate) waited_ns: Vec<Option<u64>>,
    /// Per trial, the clock witness pair (None where the hardware gives none).
    pub(crate) clock: Vec<Option<ClockPair>>,
    /// Per trial, the digest its loop's last call wrote (hex), for `measure::proof`.
    pub(crate) digests: Vec<String>,
    pub(crate) info: Option<WorkerInfo>,
    /// How the process ended.
    pub(crate) outcome: JobOutcome,
    pub(crate) peak_rss_bytes: u64,
    /// The instruction count, when the process ran under valgrind (`measure::count`).
    pub(crate) instructions: Option<crate::counter::callgrind::InstructionCount>,
    /// The fresh-message probe's digests of its last trial, call after call (empty for the
    /// guide's trials).
    pub(crate) probe_digests: Vec<u8>,
    /// The fresh-message probe's CPU time from its seed to its last line, by the kernel's
    /// clock (`worker::Outcome::cpu_after_go`).
    pub(crate) cpu_after_go: Option<Result<Duration, &'static str>>,
    /// The most memory the process held, by its control group (`worker::Outcome`).
    pub(crate) peak_memory_bytes: Option<u64>,
    /// The CPU time of all that ran in its control group (`worker::Outcome::group_cpu`).
    pub(crate) group_cpu: Option<Duration>,
    /// Per trial with enough per-call samples, its uninterrupted calls (`measure::robust`).
    pub(crate) trial_bodies: Vec<super::robust::TrialBody>,
    /// The protections the process was under, read from outside (`worker::observed`).
    pub(crate) protections: Option<crate::worker::observed::Protections>,
}

/// Runs one worker process; `on_samples` sees each batch of per-call ticks as it arrives,
/// `on_wait` the time since its start while it runs (see `worker::run_watched`).
pub(crate) fn run_process(
    setup: &WorkerSetup,
    inst: &Instance,
    spec: &TrialSpec,
    timeout: Duration,
    on_samples: &mut dyn FnMut(&[u64], Option<&Trial>),
    on_wait: &mut dyn FnMut(Duration),
) -> ProcessRun {
    // The bytes the run sealed (`plugin::sealed`): checked here, loaded by the worker. One
    // that cannot be read is checked by its path, which says what is wrong with it.
    // A loop-only probe (`TrialSpec::loop_only`) is handed no library at all.
    let sealed = (!spec.loop_only)
        .then(|| crate::plugin::sealed::for_path(&spec.library).ok())
        .flatten();
    let here = sealed
        .as_ref()
        .map_or_else(|| spec.library.clone(), |s| s.here());
    let count = spec
        .count
        .then(|| super::count::CountRun::prepare(&here, sealed.as_deref(), &setup.exe));
    // valgrind loads a private copy of the sealed bytes (it reads symbols by path), a native
    // worker the descriptor.
    let copy = count
        .as_ref()
        .and_then(|c| c.as_ref().ok())
        .and_then(|c| c.library_copy.clone());
    let loaded = match (copy, &sealed) {
        (Some(copy), _) => copy,
        (None, Some(_)) => crate::plugin::sealed::worker_path(0),
        (None, None) => spec.library.clone(),
    };
    let limits = match count {
        Some(_) => super::count::CountRun::limits(setup.limits),
        None => setup.limits,
    };
    let invocation = MeasureInvocation {
        spec: TrialSpec {
            library: loaded.clone(),
            ..spec.clone()
        },
        cpu: Some(setup.cpu),
        pmu_type: setup.pmu_type,
        sample_period_ns: None,
        limits,
    };
    let args = invocation.to_args();
    let cmd = WorkerCommand {
        exe: match &count {
            Some(Ok(c)) => c.worker(&setup.exe).to_path_buf(),
            _ => setup.exe.clone(),
        },
        args: args.clone(),
        timeout,
        cancel: Some(setup.cancel.clone()),
        limits,
        pinned_cpu: Some(setup.cpu),
        launcher: match &count {
            Some(Ok(c)) => Some((c.valgrind.clone(), c.launcher_args())),
            _ => None,
        },
        go_line: invocation.go_line(),
        libraries: sealed.iter().cloned().collect(),
        cwd: None,
        files: Some(match &count {
            Some(Ok(c)) => c.files(),
            _ => Default::default(),
        }),
    };
    let mut sandbox = None;
    let mut info = None;
    let mut trials = Vec::new();
    let mut waited = Vec::new();
    let mut clock_pairs = Vec::new();
    let mut digests = Vec::new();
    let mut probe_digests = Vec::new();
    let mut bodies = super::robust::TrialBodies::default();
    let mut fault: Option<JobFailure> = None;
    // The engine's own verdict on what the worker reported (its metadata): the worker is
    // stopped, and the job fails with this rather than as tampered with.
    let mut refused: Option<JobFailure> = None;
    let mut done_peak = None;
    let mut order = TrialOrder::new(spec);
    // What the parent can check of the file, it checks before anything runs it.
    let checked = match spec.loop_only {
        true => Ok(()),
        false => crate::plugin::check_elf(&here)
            .map(|_| ())
            .map_err(|e| match &sealed {
                Some(s) => s.name_here(&e.to_string()),
                None => e.to_string(),
            }),
    };
    let result = match checked {
        Err(e) => Err(e),
        Ok(_) if matches!(count, Some(Err(_))) => Err(count
            .as_ref()
            .and_then(|c| c.as_ref().err())
            .map(ToString::to_string)
            .unwrap_or_default()),
        Ok(_) => worker::run_watched(&cmd, on_wait, |m: TrialMessage| {
            order.accept(&m)?;
            match m {
                TrialMessage::Ready {
                    meta_block,
                    build_flags,
                    baseline_rss_bytes,
                    cycle_source,
                    perf_unavailable,
                    per_call_source,
                    timer_overhead_ticks,
                    sandbox: in_force,
                } => match worker_meta(spec, meta_block, build_flags) {
                    Ok(meta) => {
                        sandbox = in_force;
                        info = Some(WorkerInfo {
                            meta,
                            cycle_source,
                            core_cycles: cycle_source.counts_core_cycles(),
                            perf_unavailable: perf_unavailable.map(|p| p.explain()),
                            per_call_source,
                            timer_overhead_ticks: timer_overhead_ticks as f64,
                            baseline_rss_bytes,
                        })
                    }
                    Err(e) => {
                        let why = e.to_string();
                        refused = Some(JobFailure::new(FailureKind::Loadfail, why.clone()));
                        return Err(worker::Tampering(why));
                    }
                },
                TrialMessage::Trial {
                    measurements,
                    nanoseconds,
                    cycles,
                    waited_ns,
                    clock,
                    digest,
                } => {
                    waited.push(waited_ns);
                    clock_pairs.push(clock);
                    digests.push(digest);
                    let t = Trial {
                        measurements,
                        seconds: nanoseconds as f64 / 1e9,
                        cycles,
                    };
                    bodies.trial_line();
                    on_samples(&[], Some(&t));
                    trials.push(t);
                }
                // Refused by the order (`verify`): only a framed table sends it.
                TrialMessage::Wrote { .. } => {}
                TrialMessage::Samples { ticks } => {
                    bodies.samples(&ticks);
                    on_samples(&ticks, None)
                }
                TrialMessage::Digests { hex } => match hex::decode(&hex) {
                    Ok(bytes) => probe_digests.extend(bytes),
                    Err(_) => {
                        return Err(worker::Tampering("probe digests that are not hex".into()));
                    }
                },
                // The guide's trials are never sampled: a worker that says so is not ours.
                TrialMessage::IpSamples { .. } => {
                    return Err(worker::Tampering(
                        "instruction pointer samples from a timed trial".into(),
                    ));
                }
                TrialMessage::Cryptofail { rc } => {
                    fault = Some(JobFailure::new(
                        FailureKind::Cryptofail,
                        format!("CryptHash returned {rc}"),
                    ))
                }
                TrialMessage::Overflow { .. } => {
                    fault = Some(JobFailure::new(
                        FailureKind::Overflow,
                        format!(
                            "CryptHash wrote outside its buffers (msg_len={} bits)",
                            8 * spec.input_bytes
                        ),
                    ))
                }
                TrialMessage::InputChanged { offset } => {
                    fault = Some(JobFailure::new(
                        FailureKind::Tampered,
                        format!(
                            "CryptHash wrote into its read-only message: byte {offset} of the \
                             {}-byte message had changed after the calls",
                            spec.input_bytes
                        ),
                    ))
                }
                TrialMessage::Error { stage, detail } => {
                    fault = Some(JobFailure::new(
                        FailureKind::Loadfail,
                        load_error(
                            spec,
                            stage,
                            crate::plugin::sealed::name_originals(&detail, &cmd.libraries),
                        ),
                    ))
                }
                TrialMessage::InstructionsUnavailable { refusal } => {
                    fault = Some(JobFailure::new(
                        FailureKind::Counterfault,
                        refusal.explain_instructions(),
                    ))
                }
                TrialMessage::CounterFault {
                    fault: kind,
                    enabled_ns,
                    running_ns,
                } => {
                    fault = Some(JobFailure::new(
                        FailureKind::Counterfault,
                        kind.explain(enabled_ns, running_ns),
                    ))
                }
                TrialMessage::Done { peak_rss_bytes } => done_peak = Some(peak_rss_bytes),
            }
            Ok(())
        })
        .map_err(|e| e.to_string()),
    };
    if let Err(why) = &result
        && fault.is_none()
    {
        fault = Some(JobFailure::new(FailureKind::Loadfail, why.clone()));
    }
    let peak_memory_bytes = result.as_ref().ok().and_then(|o| o.peak_memory_bytes);
    let group_cpu = result.as_ref().ok().and_then(|o| o.group_cpu);
    let protections = result.as_ref().ok().and_then(|o| o.protections.clone());
    let (note, exit, stderr, wall, cpu, cpu_after_go) = match result {
        Ok(o) => (
            o.death_note(),
            o.exit,
            o.stderr_tail,
            o.wall,
            o.cpu,
            o.cpu_after_go,
        ),
        Err(e) => (String::new(), Exit::Code(-1), e, Duration::ZERO, None, None),
    };
    // A report that went by the protocol is still checked against what was seen from outside.
    let seen = Observed {
        wall,
        cpu,
        reference_hz: setup.reference_clock_hz.filter(|_| {
            info.as_ref()
                .is_some_and(|i| i.cycle_source.counts_reference_ticks())
        }),
    };
    // A count's figure is valgrind's, not the worker's: its report's times are not it.
    let forged = match (&exit, done_peak) {
        (Exit::Code(0), Some(_)) if !spec.count => {
            verify::check_outside(spec, &trials, &seen).err()
        }
        _ => None,
    };
    let wall = wall.as_secs_f64();
    let outcome = outcome::classify(&exit, fault, done_peak, refused, forged, &note);
    let exit_code = outcome::exit_code(&exit);
    let peak = done_peak.unwrap_or(0);
    let meta = process_meta(inst, spec, info.as_ref(), &trials, done_peak);
    let complete = outcome == JobOutcome::Complete && trials.len() as u32 == spec.trials;
    let command = recorded_command(&setup.exe, &spec.library, args, &loaded);
    let mut run = ProcessRun {
        record: ProcessRecord {
            status: if complete {
                ProcessStatus::Complete
            } else {
                ProcessStatus::Partial
            },
            exit_code,
            meta,
            trials,
            stderr: outcome::tail(&stderr, crate::worker::STDERR_TAIL_BYTES),
            command,
            wall_s: wall,
            disturbed_retries: 0,
        },
        waited_ns: waited,
        clock: clock_pairs,
        digests,
        info,
        outcome,
        peak_rss_bytes: peak,
        instructions: None,
        probe_digests,
        cpu_after_go,
        peak_memory_bytes,
        group_cpu,
        trial_bodies: bodies.finish(),
        protections,
    };
    if let Some(Ok(c)) = &count {
        c.finish(spec, &setup.exe, &mut run, sandbox);
    }
    run
}

#[cfg(test)]
mod tests;
