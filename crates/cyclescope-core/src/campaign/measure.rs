//! Measuring one planned job through the runner: its trial processes (one per trial when
//! set-up is cheap, as the guide's method wants; as many as the adaptive mode needs), each
//! re-run while a trial of it was disturbed (at most `MAX_ATTEMPTS`), the per-call histogram
//! of the job and of each process, and progress events at a bounded rate. Stops at the next
//! process on cancel. Writes nothing.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::RunRequest;
use super::plan::Job;
use super::runner::TrialRunner;
use crate::counter::CycleSource;
use crate::measure::job::{self, ProcessRun};
use crate::measure::plan::{Adaptive, MIN_ADAPTIVE_TRIALS};
use crate::measure::stats::{PerCall, Trial, loop_stats, new_histogram, per_call, trial_spread};
use crate::measure::trial::TrialSpec;
use crate::vocabulary::{
    EngineEvent, HistogramSnapshot, JobFailure, JobOutcome, PROGRESS_INTERVAL,
};

/// Attempts per process when a trial of it was disturbed (the 3rd is kept regardless).
pub(super) const MAX_ATTEMPTS: u32 = 3;

/// The measured processes of a job.
pub(crate) struct JobMeasurement {
    pub(crate) processes: Vec<ProcessRun>,
    pub(crate) histogram: hdrhistogram::Histogram<u64>,
    /// Per-call figures of each kept process (one per trial when trials run separately).
    pub(crate) per_process: Vec<PerCall>,
    pub(crate) disturbed_retries: u32,
    pub(crate) failure: Option<JobFailure>,
}

pub(super) enum Measured {
    Done(JobMeasurement),
    Cancelled,
}

/// How a job's trials are laid out over processes.
struct Layout {
    spec: TrialSpec,
    processes: u32,
    timeout: Duration,
    total_trials: u32,
    calls_total: u64,
}

impl Layout {
    fn of(req: &RunRequest, j: &Job) -> Self {
        let p = &j.plan;
        // Adaptive jobs and cheap set-ups run one trial per process; otherwise one process
        // runs them all.
        let one_per_process = p.separate_processes || req.adaptive.is_some();
        let per_process = if one_per_process { 1 } else { p.trials };
        let processes = match req.adaptive {
            Some(a) => a.max_trials.max(MIN_ADAPTIVE_TRIALS),
            None if p.separate_processes => p.trials,
            None => 1,
        };
        let total_trials = processes * per_process;
        Self {
            spec: TrialSpec {
                library: j.inst.library.clone(),
                digest_bits: j.inst.digest_bits,
                input_bytes: j.key.input_bytes,
                iterations: p.iterations_per_trial,
                warmups: p.warmups,
                trials: per_process,
                sample_calls: job::sample_calls_for(p, j.t1, req.planning.trial_target_s),
            },
            processes,
            timeout: req.capped(Duration::from_secs_f64(p.timeout_per_process_s)),
            total_trials,
            calls_total: u64::from(total_trials) * p.iterations_per_trial,
        }
    }
}

/// What the live progress events need across the processes of a job.
struct Live {
    done_trials: Vec<Trial>,
    last_progress: Instant,
    overhead: f64,
    source: String,
}

pub(super) fn measure_job(
    runner: &mut dyn TrialRunner,
    req: &RunRequest,
    fixed_clock_hz: Option<f64>,
    j: &Job,
    send: &mut dyn FnMut(EngineEvent),
) -> Measured {
    send(EngineEvent::JobStarted { job: j.key.clone() });
    let layout = Layout::of(req, j);
    let mut m = JobMeasurement {
        processes: Vec::new(),
        histogram: new_histogram(),
        per_process: Vec::new(),
        disturbed_retries: 0,
        failure: None,
    };
    let mut live = Live {
        done_trials: Vec::new(),
        last_progress: Instant::now() - PROGRESS_INTERVAL,
        overhead: 0.0,
        source: String::new(),
    };
    for index in 0..layout.processes {
        let kept = keep_one_process(
            runner,
            &layout,
            j,
            fixed_clock_hz,
            index,
            &mut m,
            &mut live,
            send,
        );
        if !kept {
            return Measured::Cancelled;
        }
        if m.failure.is_some() || precise_enough(req.adaptive, &live.done_trials) {
            break;
        }
    }
    Measured::Done(m)
}

/// The adaptive mode's stop: enough trials and a tight enough confidence interval.
pub(super) fn precise_enough(adaptive: Option<Adaptive>, trials: &[Trial]) -> bool {
    adaptive.is_some_and(|a| {
        trials.len() as u32 >= MIN_ADAPTIVE_TRIALS
            && trial_spread(trials).is_some_and(|s| s.ci95_relative <= a.precision)
    })
}

/// Runs process `index` of the job until it is not disturbed (or the last attempt), and
/// keeps it. False when the run was cancelled meanwhile.
#[allow(clippy::too_many_arguments)]
fn keep_one_process(
    runner: &mut dyn TrialRunner,
    layout: &Layout,
    j: &Job,
    fixed_clock_hz: Option<f64>,
    index: u32,
    m: &mut JobMeasurement,
    live: &mut Live,
    send: &mut dyn FnMut(EngineEvent),
) -> bool {
    let mut attempt = 1;
    loop {
        let mut h = m.histogram.clone();
        let mut h_process = new_histogram();
        let mut run = run_one(runner, layout, j, &mut h, &mut h_process, live, send);
        if let Some(info) = &run.info {
            live.overhead = info.timer_overhead_ticks;
            live.source = per_call_label(info.per_call_source);
        }
        let failure = match &run.outcome {
            JobOutcome::Cancelled => return false,
            JobOutcome::Complete => None,
            JobOutcome::Failed(f) => Some(f.clone()),
        };
        if failure.is_none()
            && attempt < MAX_ATTEMPTS
            && let Some(reason) = disturbance_of(&run, fixed_clock_hz)
        {
            attempt += 1;
            m.disturbed_retries += 1;
            send(EngineEvent::TrialRetried {
                job: j.key.clone(),
                trial: index + 1,
                reason,
            });
            continue;
        }
        run.record.disturbed_retries = attempt - 1;
        match failure {
            None => {
                m.histogram = h;
                m.per_process.extend(per_call(&h_process));
                live.done_trials.extend(run.record.trials.iter().copied());
            }
            Some(f) => m.failure = Some(f),
        }
        m.processes.push(run);
        return true;
    }
}

/// The first disturbed trial of a process, and why.
fn disturbance_of(run: &ProcessRun, fixed_clock_hz: Option<f64>) -> Option<String> {
    run.record
        .trials
        .iter()
        .zip(run.waited_ns.iter())
        .find_map(|(t, w)| job::disturbance(t, *w, fixed_clock_hz))
}

/// One attempt of one process, its samples folded into `h` (the job's so far plus this
/// process's) and `h_process`, progress sent at most every `PROGRESS_INTERVAL`.
fn run_one(
    runner: &mut dyn TrialRunner,
    layout: &Layout,
    j: &Job,
    h: &mut hdrhistogram::Histogram<u64>,
    h_process: &mut hdrhistogram::Histogram<u64>,
    live: &mut Live,
    send: &mut dyn FnMut(EngineEvent),
) -> ProcessRun {
    let mut trials_here: Vec<Trial> = Vec::new();
    runner.trial(
        &j.inst,
        &layout.spec,
        layout.timeout,
        &mut |ticks, trial| {
            job::record_samples(h, ticks);
            job::record_samples(h_process, ticks);
            if let Some(t) = trial {
                trials_here.push(*t);
            }
            if live.last_progress.elapsed() < PROGRESS_INTERVAL {
                return;
            }
            live.last_progress = Instant::now();
            let all: Vec<Trial> = live
                .done_trials
                .iter()
                .chain(trials_here.iter())
                .copied()
                .collect();
            let trial_no = (all.len() + 1).min(layout.total_trials as usize) as u32;
            send(EngineEvent::TrialProgress {
                job: j.key.clone(),
                trial: trial_no,
                trials: layout.total_trials,
                calls_done: all.iter().map(|t| t.measurements).sum(),
                calls_total: layout.calls_total,
                snapshot: HistogramSnapshot {
                    per_call: per_call(h),
                    histogram: Arc::new(h.clone()),
                    loop_mean_cycles: loop_stats(&all, j.key.input_bytes)
                        .and_then(|s| s.mean_cycles),
                    timer_overhead_ticks: live.overhead,
                    per_call_source: live.source.clone(),
                },
            });
        },
    )
}

/// The per-call counter as the live histogram names it (`none` when the worker has none).
pub(crate) fn per_call_label(source: Option<CycleSource>) -> String {
    source.map_or("none", CycleSource::name).to_string()
}
