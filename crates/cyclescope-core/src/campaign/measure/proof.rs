//! A job's proof of work, in the order the job runs it: the reference digest of the harness's
//! message from a worker of its own before any trial; each kept process's trials against it and
//! against the physical floor; after the guide's trials, one fresh-message probe process (the
//! same length, each call a message of its own) whose figure the guide's may not be far below.
//! Judgements are `measure::proof`'s; this only runs the workers and keeps the verdict.

use std::hash::{BuildHasher, RandomState};

use super::Measuring;
use crate::measure::job::ProcessRun;
use crate::measure::proof::{self, PROBE_PROCESSES, PROBE_TRIALS, PROBE_WARMUPS, floor};
use crate::measure::trial::TrialSpec;
use crate::vocabulary::{JobFailure, JobOutcome};

mod checks;

/// Bytes of fresh messages one probe trial hashes at most (the trial worker's pool,
/// `cyclescope_worker::proof`).
pub(crate) const PROBE_POOL_BYTES: u64 = 1 << 20;

impl Measuring<'_> {
    /// The KAT's known answers, hashed again before any timing in the program the timed calls
    /// run in, in one job with this job's timing message, whose digest becomes the reference
    /// digest; false (the job's failure set) when the library gave another digest. One such
    /// job a length: a library that fails at one length fails that length's job only.
    pub(super) fn known_answer_holds(&mut self) -> bool {
        if self.job.kat.known_answers.is_empty() {
            return true;
        }
        match self.runner.known_answers_hold(
            &self.job.inst,
            &self.job.kat.known_answers,
            self.job.key.input_bytes,
        ) {
            Some(Err(f)) => {
                self.m.failure = Some(f);
                false
            }
            _ => true,
        }
    }

    /// Asks the runner for the reference digest; false (the job's failure set) when it could
    /// not be had.
    pub(super) fn fetch_reference_digest(&mut self) -> bool {
        match self
            .runner
            .reference_digest(&self.job.inst, self.job.key.input_bytes)
        {
            None => true,
            Some(Ok(d)) => {
                self.expected_digest = Some(d);
                true
            }
            Some(Err(f)) => {
                self.m.failure = Some(f);
                false
            }
        }
    }

    /// Why a complete process's trials are no figure: a digest unlike the reference, or more
    /// bytes than a core can load.
    pub(super) fn disproved(&self, run: &ProcessRun) -> Option<JobFailure> {
        let expected = self.expected_digest.as_deref()?;
        let bytes = self.job.key.input_bytes;
        let core = run.info.as_ref().is_some_and(|i| i.core_cycles);
        proof::check_digests(expected, &run.digests, bytes)
            .and_then(|()| {
                floor::check(
                    &run.record.trials,
                    bytes,
                    core,
                    &floor::Floor::of_this_host(self.clock.fixed_clock_hz),
                )
            })
            .err()
    }

    /// The fresh-message probe after the guide's trials (only where a reference digest proves
    /// work, and the message is not empty); a refusal becomes the job's failure. The probe is
    /// judged on its CPU time as the kernel counts it, which a busy host does not inflate:
    /// against the guide's fastest trial, and against its twin (`proof::twin`), a process run
    /// right after it on the timing message. A refusal is only kept while further pairs of
    /// probe and twin confirm it, on the fastest of each (the host's spells slow whole
    /// processes), and a pass only ends them once settled (`proof::twin::settled`), up to
    /// `PROBE_PROCESSES` probes; the last has no twin after it. False when the run was
    /// cancelled.
    pub(super) fn probe_fresh_messages(&mut self) -> bool {
        let bytes = self.job.key.input_bytes;
        if self.expected_digest.is_none()
            || bytes == 0
            || self.done_trials.is_empty()
            || !self.runner.first_probe(&self.job.key)
        {
            return true;
        }
        let mut fastest: Option<(std::time::Duration, u64)> = None;
        let mut fastest_twin: Option<f64> = None;
        // What the probe's loop costs a call with no candidate in the process: measured only
        // once a probe would be refused without it.
        let mut loop_cost: Option<Option<f64>> = None;
        for k in 0..PROBE_PROCESSES {
            let spec = self.probe_spec();
            let (cpu, calls, trials) = match self.one_probe(&spec) {
                Probe::Cancelled => return false,
                Probe::Failed(f) => {
                    self.m.failure = Some(f);
                    return true;
                }
                Probe::Timed { cpu, calls, trials } => (cpu, calls, trials),
            };
            let judged = match cpu {
                Some(Err(why)) => Err(JobFailure::new(
                    crate::vocabulary::FailureKind::Tampered,
                    format!("in the fresh-message probe: {why}, so its CPU time cannot be read"),
                )),
                Some(Ok(cpu)) => {
                    let per_call = |(c, n): (std::time::Duration, u64)| c.as_secs_f64() / n as f64;
                    let best = match fastest {
                        Some(f) if per_call(f) <= per_call((cpu, calls)) => f,
                        _ => (cpu, calls),
                    };
                    fastest = Some(best);
                    // The last probe has no twin after it: a refusal is kept only on a probe,
                    // so a spell of the host's that ends right before a twin does not decide.
                    let twin = match k + 1 < PROBE_PROCESSES {
                        true => self.one_twin(&spec),
                        false => Twin::Timed(None),
                    };
                    match twin {
                        Twin::Cancelled => return false,
                        Twin::Failed(f) => {
                            self.m.failure = Some(f);
                            return true;
                        }
                        Twin::Timed(ns) => {
                            fastest_twin = ns.into_iter().chain(fastest_twin).reduce(f64::min);
                        }
                    }
                    let mut figure = proof::ProbeFigure::new(
                        &self.done_trials,
                        &self.done_waits,
                        best.0,
                        best.1,
                    );
                    figure.twin_ns_per_call = fastest_twin;
                    let judged = self.judge_probe(&mut figure, &spec, &mut loop_cost);
                    self.m.fresh_probe = Some(figure);
                    judged
                }
                // No CPU clock on the probe (a kernel without it): its own report is all there
                // is, judged by the factor for claimed figures.
                None => proof::probe_refusal(&self.done_trials, &trials, bytes),
            };
            match judged {
                // Not (or no longer) marked: a first process's refusal the second does not
                // confirm is not kept. A pass ends the turns only once it is settled, well
                // inside the line beside a calm twin (`proof::twin::settled`); otherwise the
                // next pair decides, and the last probe's verdict stands.
                Ok(()) => {
                    self.m.failure = None;
                    let settled = self.m.fresh_probe.as_ref().is_none_or(proof::twin::settled);
                    if settled || cpu.is_none() {
                        return true;
                    }
                }
                Err(f) => self.m.failure = Some(f),
            }
        }
        true
    }

    /// The probe's `figure` judged against the guide's claim, then against its twin. Each rule
    /// that refuses on its factor alone is judged again with the probe loop's own cost
    /// allowed for, measured once a job (`loop_cost`) and kept in `figure`.
    fn judge_probe(
        &mut self,
        figure: &mut proof::ProbeFigure,
        spec: &TrialSpec,
        loop_cost: &mut Option<Option<f64>>,
    ) -> Result<(), JobFailure> {
        let bytes = self.job.key.input_bytes;
        if proof::probe_cpu_refusal(figure, bytes, 0.0).is_err() {
            let ns = *loop_cost.get_or_insert_with(|| self.probe_loop_ns(spec));
            figure.loop_ns_per_call = ns;
            proof::probe_cpu_refusal(figure, bytes, proof::loop_allowance_ns(ns))?;
        }
        let probe_ns = figure.cpu_ns_per_call;
        let twin_ns = figure.twin_ns_per_call.unwrap_or(f64::NAN);
        if proof::twin::refusal(probe_ns, twin_ns, 0.0, bytes).is_err() {
            let ns = *loop_cost.get_or_insert_with(|| self.probe_loop_ns(spec));
            figure.loop_ns_per_call = ns;
            let allowance = ns.unwrap_or(proof::PROBE_CALL_ALLOWANCE_NS);
            proof::twin::refusal(probe_ns, twin_ns, allowance, bytes)?;
        }
        Ok(())
    }

    /// The probe's twin after probe `spec`: the same spec on the timing message (new seeds,
    /// which it uses as the probe does, but for its messages); its CPU time per call, None
    /// where the kernel offers no process CPU clock.
    fn one_twin(&mut self, spec: &TrialSpec) -> Twin {
        let state = RandomState::new();
        let twin = TrialSpec {
            repeat: true,
            any_width: false,
            fresh_seed: Some(state.hash_one(spec.input_bytes)),
            fresh_heads: Some(state.hash_one((spec.input_bytes, "heads"))),
            ..spec.clone()
        };
        match self.one_probe(&twin) {
            Probe::Cancelled => Twin::Cancelled,
            Probe::Failed(f) => Twin::Failed(f),
            Probe::Timed { cpu: None, .. } => Twin::Timed(None),
            Probe::Timed {
                cpu: Some(Err(why)),
                ..
            } => Twin::Failed(JobFailure::new(
                crate::vocabulary::FailureKind::Tampered,
                format!("in the fresh-message probe's twin: {why}, so its CPU time cannot be read"),
            )),
            Probe::Timed {
                cpu: Some(Ok(cpu)),
                calls,
                ..
            } => Twin::Timed(Some(cpu.as_secs_f64() * 1e9 / calls.max(1) as f64)),
        }
    }

    /// The fresh-message probe of an instruction count: fresh messages counted under valgrind
    /// like the job's calls, every digest reported and spot-checked as the timed probe's; a
    /// count on the harness's message far below it is PROBEFAIL. Counts are exact, so one
    /// process decides. False when the run was cancelled.
    pub(super) fn probe_counted(&mut self) -> bool {
        let bytes = self.job.key.input_bytes;
        let Some(guide) = self.m.instructions.as_ref().map(|c| c.per_call()) else {
            return true;
        };
        if self.expected_digest.is_none() || bytes == 0 || !self.runner.first_probe(&self.job.key) {
            return true;
        }
        let state = RandomState::new();
        let spec = TrialSpec {
            iterations: crate::counter::callgrind::COUNTED_CALLS,
            warmups: PROBE_WARMUPS,
            trials: 1,
            sample_calls: 0,
            fresh_seed: Some(state.hash_one(bytes)),
            fresh_heads: Some(state.hash_one((bytes, "heads"))),
            ..self.layout.spec.clone()
        };
        let run = self.runner.trial(
            &self.job.inst,
            &spec,
            self.layout.timeout,
            &mut |_, _| {},
            &mut |_| {},
        );
        let failure = match run.outcome {
            JobOutcome::Cancelled => return false,
            JobOutcome::Failed(f) => Some(JobFailure::new(
                f.kind,
                format!("in the fresh-message probe: {}", f.detail),
            )),
            JobOutcome::Complete => self.probe_digests_hold(&spec, &run).err().or_else(|| {
                let fresh = run.instructions.as_ref()?.per_call();
                proof::probe_count_refusal(guide, fresh, bytes).err()
            }),
        };
        if failure.is_some() {
            self.m.failure = failure;
        }
        true
    }

    /// A probe process's spec: the guide's, with fresh messages from new seeds.
    fn probe_spec(&self) -> TrialSpec {
        let bytes = self.job.key.input_bytes;
        let state = RandomState::new();
        TrialSpec {
            iterations: probe_calls(
                bytes,
                self.layout.spec.iterations,
                self.done_trials
                    .iter()
                    .map(|t| t.seconds * 1e9 / t.measurements.max(1) as f64)
                    .fold(f64::NAN, f64::min),
            ),
            warmups: PROBE_WARMUPS,
            trials: PROBE_TRIALS,
            sample_calls: 0,
            fresh_seed: Some(state.hash_one(bytes)),
            fresh_heads: Some(state.hash_one((bytes, "heads"))),
            ..self.layout.spec.clone()
        }
    }

    /// One probe process: its CPU time and calls, or how it failed. A process that timed out
    /// is started once more: a probe's calls take a fraction of a guide trial, and a loaded CI
    /// machine once saw one time out after 6.9 s; its verdict rests on the CPU time of a
    /// process that finished, which a stalled one does not give. A second timeout fails the
    /// job as before, so a library that hangs in probes gets no figure.
    fn one_probe(&mut self, spec: &TrialSpec) -> Probe {
        let bytes = self.job.key.input_bytes;
        let timeout = self.layout.timeout.mul_f64(f64::from(PROBE_TRIALS));
        let mut run = self
            .runner
            .trial(&self.job.inst, spec, timeout, &mut |_, _| {}, &mut |_| {});
        if let JobOutcome::Failed(f) = &run.outcome
            && f.kind == crate::vocabulary::FailureKind::Timeout
        {
            run = self
                .runner
                .trial(&self.job.inst, spec, timeout, &mut |_, _| {}, &mut |_| {});
        }
        let core = run.info.as_ref().is_some_and(|i| i.core_cycles);
        if self.m.probe_protections.is_none() {
            self.m.probe_protections = run.protections.clone();
        }
        match run.outcome {
            JobOutcome::Cancelled => Probe::Cancelled,
            // The probe's process is in no record: what it printed last goes with its failure
            // (escaped, bounded), as a guide process's goes into the record's `stderr`.
            JobOutcome::Failed(f) => Probe::Failed(JobFailure::new(
                f.kind,
                match run.record.stderr.trim().lines().last() {
                    Some(said) if !said.trim().is_empty() => format!(
                        "in the fresh-message probe: {} (its stderr ended: {})",
                        f.detail,
                        crate::sanitize::log_field(said.trim())
                    ),
                    _ => format!("in the fresh-message probe: {}", f.detail),
                },
            )),
            JobOutcome::Complete => match floor::check(
                &run.record.trials,
                bytes,
                core,
                &floor::Floor::of_this_host(self.clock.fixed_clock_hz),
            )
            .and_then(|()| self.probe_digests_hold(spec, &run))
            {
                Err(f) => Probe::Failed(f),
                Ok(()) => Probe::Timed {
                    cpu: run.cpu_after_go,
                    // The warm-ups ran before the window.
                    calls: spec.iterations,
                    trials: run.record.trials.clone(),
                },
            },
        }
    }
}

/// What a twin process gave: its CPU time per call, ns (None where the kernel offers no
/// process CPU clock), or how it failed.
enum Twin {
    Timed(Option<f64>),
    Failed(JobFailure),
    Cancelled,
}

/// What one probe process gave: its CPU time from its seed to its trial line (None where the
/// kernel offers no process CPU clock), the calls inside that window, and its own trials.
enum Probe {
    Timed {
        cpu: Option<Result<std::time::Duration, &'static str>>,
        calls: u64,
        trials: Vec<crate::measure::stats::Trial>,
    },
    Failed(JobFailure),
    Cancelled,
}

/// Calls per probe trial: a fifth of the guide's (at least the guide's minimum of 20), and at
/// least as many as fill `PROBE_MIN_WINDOW` at the guide's fastest pace, so that the fixed
/// cost of starting and ending the window (a pipe read, a write) is small beside the calls;
/// each on a message of its own, within the pool.
pub(crate) fn probe_calls(input_bytes: u64, guide_iterations: u64, guide_ns_per_call: f64) -> u64 {
    let for_window = if guide_ns_per_call > 0.0 {
        (PROBE_MIN_WINDOW.as_secs_f64() * 1e9 / guide_ns_per_call).ceil() as u64
    } else {
        0
    };
    (guide_iterations / 5)
        .max(20)
        .min(guide_iterations)
        .max(for_window.min(PROBE_MAX_CALLS))
        .min(PROBE_POOL_BYTES / input_bytes.max(1))
        .max(1)
}

/// The shortest probe window, by the guide's figure.
const PROBE_MIN_WINDOW: std::time::Duration = std::time::Duration::from_millis(20);
/// The most calls a probe makes (their digests all come back to the engine).
const PROBE_MAX_CALLS: u64 = 100_000;

#[cfg(test)]
mod tests;
