//! Measuring one planned job: its trial processes (one per trial when set-up is cheap, as the
//! guide's method wants), the disturbance retry, the per-call histogram of the job and of each
//! process, and progress events at a bounded rate. Stops at the next process on cancel.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Job, RunRequest};
use crate::measure::job::{self, MAX_ATTEMPTS, ProcessRun, WorkerSetup};
use crate::measure::plan::MIN_ADAPTIVE_TRIALS;
use crate::measure::stats::{Trial, loop_stats, new_histogram, per_call, trial_spread};
use crate::measure::trial::TrialSpec;
use crate::vocabulary::{
    EngineEvent, HistogramSnapshot, JobFailure, JobOutcome, PROGRESS_INTERVAL,
};

/// The measured processes of a job.
pub(crate) struct JobMeasurement {
    pub(crate) processes: Vec<ProcessRun>,
    pub(crate) histogram: hdrhistogram::Histogram<u64>,
    /// Per-call figures of each kept process (one per trial when trials run separately).
    pub(crate) per_process: Vec<crate::measure::stats::PerCall>,
    pub(crate) disturbed_retries: u32,
    pub(crate) failure: Option<JobFailure>,
}

pub(super) enum Measured {
    Done(JobMeasurement),
    Cancelled,
}

pub(super) fn measure_job(
    req: &RunRequest,
    setup: &WorkerSetup,
    j: &Job,
    send: &mut dyn FnMut(EngineEvent),
) -> Measured {
    send(EngineEvent::JobStarted { job: j.key.clone() });
    let p = &j.plan;
    let per_process_trials = if p.separate_processes { 1 } else { p.trials };
    let processes_needed = match req.adaptive {
        Some(a) => a.max_trials.max(MIN_ADAPTIVE_TRIALS),
        None if p.separate_processes => p.trials,
        None => 1,
    };
    let per_process_trials = if req.adaptive.is_some() {
        1
    } else {
        per_process_trials
    };
    let spec = TrialSpec {
        library: j.inst.library.clone(),
        digest_bits: j.inst.digest_bits,
        input_bytes: j.key.input_bytes,
        iterations: p.iterations_per_trial,
        warmups: p.warmups,
        trials: per_process_trials,
        sample_calls: job::sample_calls_for(p, j.t1, req.planning.trial_target_s),
    };
    let timeout = req.capped(Duration::from_secs_f64(p.timeout_per_process_s));
    let total_trials = processes_needed * per_process_trials;
    let calls_total = u64::from(total_trials) * p.iterations_per_trial;
    let mut m = JobMeasurement {
        processes: Vec::new(),
        histogram: new_histogram(),
        per_process: Vec::new(),
        disturbed_retries: 0,
        failure: None,
    };
    let mut done_trials: Vec<Trial> = Vec::new();
    let mut last_progress = Instant::now() - PROGRESS_INTERVAL;
    let mut overhead = 0.0;
    let mut source = String::new();
    for proc_index in 0..processes_needed {
        let mut attempt = 1;
        loop {
            let mut h = m.histogram.clone();
            let mut h_process = new_histogram();
            let mut trials_here: Vec<Trial> = Vec::new();
            let trial_no =
                |extra: usize| (done_trials.len() + extra + 1).min(total_trials as usize) as u32;
            let run = job::run_process(setup, &j.inst, &spec, timeout, &mut |ticks, trial| {
                job::record_samples(&mut h, ticks);
                job::record_samples(&mut h_process, ticks);
                if let Some(t) = trial {
                    trials_here.push(*t);
                }
                if last_progress.elapsed() >= PROGRESS_INTERVAL {
                    last_progress = Instant::now();
                    let all: Vec<Trial> = done_trials
                        .iter()
                        .chain(trials_here.iter())
                        .copied()
                        .collect();
                    send(EngineEvent::TrialProgress {
                        job: j.key.clone(),
                        trial: trial_no(trials_here.len()),
                        trials: total_trials,
                        calls_done: all.iter().map(|t| t.measurements).sum(),
                        calls_total,
                        snapshot: HistogramSnapshot {
                            per_call: per_call(&h),
                            histogram: Arc::new(h.clone()),
                            loop_mean_cycles: loop_stats(&all, j.key.input_bytes)
                                .and_then(|s| s.mean_cycles),
                            timer_overhead_ticks: overhead,
                            per_call_source: source.clone(),
                        },
                    });
                }
            });
            if let Some(info) = &run.info {
                overhead = info.timer_overhead_ticks;
                source = per_call_label(info.per_call_source);
            }
            let failure = match &run.outcome {
                JobOutcome::Cancelled => return Measured::Cancelled,
                JobOutcome::Complete => None,
                JobOutcome::Failed(f) => Some(f.clone()),
            };
            let why = run
                .record
                .trials
                .iter()
                .zip(run.waited_ns.iter())
                .find_map(|(t, w)| job::disturbance(t, *w, setup.fixed_clock_hz));
            if let (None, Some(reason), true) = (&failure, why, attempt < MAX_ATTEMPTS) {
                attempt += 1;
                m.disturbed_retries += 1;
                send(EngineEvent::TrialRetried {
                    job: j.key.clone(),
                    trial: proc_index + 1,
                    reason,
                });
                continue;
            }
            let mut run = run;
            run.record.disturbed_retries = attempt - 1;
            if failure.is_none() {
                m.histogram = h;
                m.per_process.extend(per_call(&h_process));
                done_trials.extend(run.record.trials.iter().copied());
            } else {
                m.failure = failure;
            }
            m.processes.push(run);
            break;
        }
        if m.failure.is_some() {
            break;
        }
        if let Some(a) = req.adaptive
            && done_trials.len() as u32 >= MIN_ADAPTIVE_TRIALS
            && trial_spread(&done_trials).is_some_and(|s| s.ci95_relative <= a.precision)
        {
            break;
        }
    }
    Measured::Done(m)
}

/// The per-call counter as the live histogram names it (`none` when the worker has none).
pub(crate) fn per_call_label(source: Option<crate::counter::CycleSource>) -> String {
    source
        .map_or("none", crate::counter::CycleSource::name)
        .to_string()
}
