//! Turning a job's processes into a schema-2 record and writing it: the statistics come from
//! `stats`, the environment from the host gate, KAT fields from the KAT gate. A failed job
//! still gets a `failed_or_partial` record carrying the reason and the candidate's stderr.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::RunRequest;
use super::host_gate::HostGate;
use super::kat_gate::KatResult;
use super::measure::{JobMeasurement, per_call_label};
use super::plan::Job;
use crate::catalog::{Instance, display_path};
use crate::kat::KatVerdict;
use crate::measure::job::ProcessRun;
use crate::measure::plan::TrialPlan;
use crate::measure::stats::{Trial, loop_stats, per_call, trial_spread};
use crate::record::run_dir::read_record;
use crate::record::schema::{SCHEMA, hash_sizes};
use crate::record::{Additions, RunDir, RunDirError, TimingRecord, histogram};
use crate::vocabulary::{HistogramSnapshot, JobFailure, JobSummary, ProcessStatus, RecordStatus};

/// True when a complete record of this job exists (resume skips it).
pub(crate) fn is_complete(run_dir: &Path, inst: &Instance, len: u64) -> bool {
    read_record(run_dir, &inst.candidate, &inst.label, len).is_some_and(|r| r.status.is_complete())
}

/// Builds and writes the record of a measured job; returns its path (or why it could not be
/// written), the summary for the frontends, the final histogram snapshot and the job's
/// failure (the measurement's, or the uninterrupted-call figure's refusal).
pub(super) fn job_record(
    dir: &RunDir,
    req: &RunRequest,
    j: &Job,
    host: &HostGate,
    m: JobMeasurement,
) -> (
    Result<PathBuf, RunDirError>,
    JobSummary,
    HistogramSnapshot,
    Option<JobFailure>,
) {
    let (inst, len, kat) = (&j.inst, j.key.input_bytes, &j.kat);
    // Adaptive jobs ran as many single-trial processes as they needed: the record's plan
    // says so, which keeps it valid by the harness's rules.
    let mut plan = j.plan;
    if req.adaptive.is_some() {
        plan.trials = m
            .processes
            .iter()
            .map(|p| p.record.trials.len() as u32)
            .sum();
        plan.separate_processes = true;
    }
    let info = m.processes.iter().find_map(|p| p.info.clone());
    let pc = per_call(&m.histogram);
    let trials: Vec<Trial> = m
        .processes
        .iter()
        .flat_map(|p| p.record.trials.iter().copied())
        .collect();
    let snapshot = HistogramSnapshot {
        per_call: pc,
        loop_mean_cycles: loop_stats(&trials, len).and_then(|s| s.mean_cycles),
        timer_overhead_ticks: info.as_ref().map_or(0.0, |i| i.timer_overhead_ticks),
        per_call_source: info
            .as_ref()
            .map_or_else(String::new, |i| per_call_label(i.per_call_source)),
        histogram: Arc::new(m.histogram.clone()),
    };
    let additions = Additions {
        per_call_source: info.as_ref().and_then(|i| i.per_call_source),
        timer_overhead_ticks: snapshot.timer_overhead_ticks,
        per_call: pc,
        per_call_by_process: m.per_process.clone(),
        preempted_ns_by_trial: m
            .processes
            .iter()
            .flat_map(|p| p.waited_ns.iter().copied())
            .collect(),
        trial_spread: trial_spread(&trials),
        histogram_v2_base64: histogram::encode(&m.histogram),
        failure: m.failure.clone(),
        clock_hz_by_trial: m.clock_hz_by_trial.clone(),
        layouts: m.layouts.clone(),
        fresh_probe: m.fresh_probe,
        instructions: m.instructions.clone(),
        ..base_additions(req, inst, host, info.as_ref())
    };
    // A count is exact: it has no interrupted calls to leave out.
    let bodies: Vec<_> = m
        .processes
        .iter()
        .flat_map(|p| p.trial_bodies.iter().copied())
        .collect();
    let robust = additions
        .per_call_scale()
        .filter(|_| !req.counter.under_valgrind())
        .and_then(|scale| crate::measure::robust::of_trials(&bodies, scale));
    // The samples are the worker's word: the figure meets the floor and the probe's CPU time
    // as the guide's trials do, or it is no figure and the job fails.
    let refused = robust.as_ref().and_then(|r| {
        crate::measure::proof::uninterrupted::refusal(
            r,
            &trials,
            m.fresh_probe.as_ref(),
            &crate::measure::proof::floor::Floor::of_this_host(host.fixed_clock_hz()),
            len,
        )
    });
    let (robust, failure) = match refused {
        Some(f) => (None, additions.failure.clone().or(Some(f))),
        None => (robust, additions.failure.clone()),
    };
    let protections = m.protections().map(crate::worker::observed::Observed::from);
    let additions = Additions {
        robust,
        protections,
        failure: failure.clone(),
        ..additions
    };
    let rec = assemble(
        inst,
        len,
        kat,
        host,
        &plan,
        m.processes,
        m.disturbed_retries,
        additions,
    );
    let summary = rec.summary();
    let path = dir.write_record(&rec);
    (path, summary, snapshot, failure)
}

/// Writes the record of a job that failed before its plan (in calibration).
#[allow(clippy::too_many_arguments)]
pub(super) fn failed_record(
    dir: &RunDir,
    req: &RunRequest,
    inst: &Instance,
    len: u64,
    kat: &KatResult,
    host: &HostGate,
    calibration: ProcessRun,
    reason: &JobFailure,
) -> Result<PathBuf, RunDirError> {
    // The calibration's own shape: one process of one call.
    let plan = TrialPlan {
        iterations_per_trial: 1,
        warmups: 0,
        trials: 1,
        separate_processes: true,
        estimated_s: 0.0,
        timeout_per_process_s: 0.0,
    };
    let info = calibration.info.clone();
    let processes = vec![calibration];
    let additions = Additions {
        failure: Some(reason.clone()),
        ..base_additions(req, inst, host, info.as_ref())
    };
    let rec = assemble(inst, len, kat, host, &plan, processes, 0, additions);
    dir.write_record(&rec)
}

/// The additions every record carries, with empty per-call figures.
fn base_additions(
    req: &RunRequest,
    inst: &Instance,
    host: &HostGate,
    info: Option<&crate::measure::job::WorkerInfo>,
) -> Additions {
    Additions {
        version: env!("CARGO_PKG_VERSION").into(),
        mode: if req.adaptive.is_some() {
            "adaptive"
        } else {
            "guide"
        }
        .into(),
        adaptive_precision: req.adaptive.map(|a| a.precision),
        cycle_source: info.map(|i| i.cycle_source),
        reference_cycles: info.is_some_and(|i| i.cycle_source.counts_reference_ticks()),
        ref_to_core_ratio: host.ref_to_core_ratio(),
        per_call_source: None,
        timer_overhead_ticks: 0.0,
        per_call: None,
        per_call_by_process: Vec::new(),
        preempted_ns_by_trial: Vec::new(),
        trial_spread: None,
        robust: None,
        protections: None,
        histogram_v2_base64: None,
        elf_load_bytes: crate::plugin::sealed::elf_load_bytes_of(&inst.library),
        abi: inst.abi,
        measurement_cpu: host.cpu(),
        engine_shared_cpu: host.engine_shared_cpu(),
        worker: crate::worker::TRIAL_WORKER_NAME.to_string(),
        tui_attached: req.tui_attached,
        host_problems: host.problems(),
        failure: None,
        reference_job: req.is_reference_job(&inst.candidate, &inst.label),
        clock_verification: Some(host.clock_verification().clone()),
        clock_hz_by_trial: Vec::new(),
        conformance: None,
        layouts: None,
        fresh_probe: None,
        instructions: None,
        peak_memory_bytes: None,
        cpu_time_s: None,
        kat_worker: None,
    }
}

#[allow(clippy::too_many_arguments)]
fn assemble(
    inst: &Instance,
    len: u64,
    kat: &KatResult,
    host: &HostGate,
    plan: &TrialPlan,
    processes: Vec<ProcessRun>,
    disturbed_retries: u32,
    additions: Additions,
) -> TimingRecord {
    // Every record carries the conformance its KAT gate found, and the peak memory the
    // workers' control groups saw.
    let additions = Additions {
        conformance: crate::conform::RecordedChecks::of(&kat.conformance),
        kat_worker: kat.worker,
        peak_memory_bytes: processes.iter().filter_map(|p| p.peak_memory_bytes).max(),
        // A sum with a process missing would pass for the whole: all of them, or none.
        cpu_time_s: processes
            .iter()
            .map(|p| p.group_cpu.map(|d| d.as_secs_f64()))
            .sum::<Option<f64>>()
            .filter(|_| !processes.is_empty()),
        ..additions
    };
    let trials: Vec<Trial> = processes
        .iter()
        .flat_map(|p| p.record.trials.iter().copied())
        .collect();
    let complete = additions.failure.is_none()
        && processes
            .iter()
            .all(|p| p.record.status == ProcessStatus::Complete)
        && trials.len() as u32 == plan.trials;
    let stats = loop_stats(&trials, len);
    let meta = processes
        .iter()
        .find_map(|p| p.info.as_ref().and_then(|i| i.meta.clone()));
    let baseline = processes
        .iter()
        .filter_map(|p| p.info.as_ref())
        .map(|i| i.baseline_rss_bytes)
        .max()
        .unwrap_or(0);
    let peak = processes
        .iter()
        .map(|p| p.peak_rss_bytes)
        .max()
        .unwrap_or(0);
    let now = crate::record::utc_now();
    TimingRecord {
        schema: SCHEMA,
        status: if complete {
            RecordStatus::Complete
        } else {
            RecordStatus::FailedOrPartial
        },
        candidate: inst.candidate.clone(),
        label: inst.label.clone(),
        instance: inst.kat_name.clone().unwrap_or_else(|| inst.label.clone()),
        variant: inst.variant.clone(),
        flags: inst.flags.clone(),
        operation: "hash".into(),
        input_bytes: len,
        plan: *plan,
        kat: KatVerdict::Status(kat.status),
        kat_not_passed: !kat.status.is_pass(),
        disturbed_retries,
        library: display_path(&inst.library),
        library_sha256: crate::plugin::sealed::sha256_of(&inst.library).unwrap_or_default(),
        kat_log: kat.log.clone(),
        kat_log_sha256: kat.log_sha256.clone(),
        started_utc: host.started_utc(),
        ended_utc: now,
        load_average_start: host.load_average_start(),
        load_average_end: crate::record::load_average(),
        environment: host.environment(),
        trials,
        measurements: stats.map_or(0, |s| s.measurements),
        guide_100_measurements_met: stats.is_some_and(|s| s.measurements >= 100),
        mean_seconds: stats.map(|s| s.mean_seconds),
        median_trial_seconds: stats.map(|s| s.median_trial_seconds),
        min_trial_seconds: stats.map(|s| s.min_trial_seconds),
        max_trial_seconds: stats.map(|s| s.max_trial_seconds),
        mean_cycles: stats.and_then(|s| s.mean_cycles),
        median_trial_cycles: stats.and_then(|s| s.median_trial_cycles),
        operations_per_second: stats.map(|s| s.operations_per_second),
        throughput_MB_per_second: stats.map(|s| s.throughput_mb_per_second),
        sizes: hash_sizes(len, u64::from(inst.digest_bits / 8)),
        kex: Default::default(),
        build_flags: meta.map(|m| m.build_flags).unwrap_or_default(),
        baseline_rss_bytes: baseline,
        peak_rss_bytes: peak,
        timing_scope: "loop".into(),
        processes: processes.into_iter().map(|p| p.record).collect(),
        cyclescope: Some(additions),
    }
}
