//! Measuring one planned job through the runner: its trial processes (one per trial when
//! set-up is cheap, as the guide's method wants; as many as the adaptive mode needs), each
//! re-run while a trial of it was disturbed (at most `MAX_ATTEMPTS`), the per-call histogram
//! of the job and of each process, and progress events at a bounded rate (also while a process
//! runs far past what its plan expects). Stops at the next process on cancel. Writes nothing.
//! Each job also proves its work (`proof`): the digest to hold each trial against comes first,
//! every kept process is checked against it and the physical floor, and a fresh-message probe
//! follows the guide's trials. With `--layouts` the job is timed at other buffer layouts too
//! (`layouts`).

mod layouts;
mod processes;
mod proof;

use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::RunRequest;
use super::plan::Job;
use super::runner::TrialRunner;
use crate::counter::{Counter, CycleSource};
use crate::measure::clock::ClockRule;
use crate::measure::job::{self, ProcessRun};
use crate::measure::plan::{Adaptive, MAX_ATTEMPTS, MIN_ADAPTIVE_TRIALS};
use crate::measure::stats::{PerCall, Trial, loop_stats, new_histogram, per_call, trial_spread};
use crate::vocabulary::{
    EngineEvent, HistogramSnapshot, JobFailure, JobOutcome, PROGRESS_INTERVAL,
};

use processes::Layout;

/// The measured processes of a job.
pub(crate) struct JobMeasurement {
    pub(crate) processes: Vec<ProcessRun>,
    pub(crate) histogram: hdrhistogram::Histogram<u64>,
    /// Per-call figures of each kept process (one per trial when trials run separately).
    pub(crate) per_process: Vec<PerCall>,
    pub(crate) disturbed_retries: u32,
    pub(crate) failure: Option<JobFailure>,
    /// Effective core clock of each kept trial, Hz, where a witness measured it.
    pub(crate) clock_hz_by_trial: Vec<Option<f64>>,
    /// The figures at the other buffer layouts (`--layouts`).
    pub(crate) layouts: Option<crate::measure::layout::LayoutSpread>,
    /// The instruction count (`--counter instructions`).
    pub(crate) instructions: Option<crate::counter::callgrind::InstructionCount>,
    /// The fresh-message probe's figure, when it ran and the kernel timed it.
    pub(crate) fresh_probe: Option<crate::measure::proof::ProbeFigure>,
    /// The protections the fresh-message probe's process was seen under (it waits for its go
    /// line, so it is always there to be seen; a short trial's process may be gone by then).
    pub(crate) probe_protections: Option<crate::worker::observed::Protections>,
}

impl JobMeasurement {
    /// Nothing measured yet: the start of a job, or of one side of an interleaved comparison.
    pub(super) fn empty() -> Self {
        Self {
            processes: Vec::new(),
            histogram: new_histogram(),
            per_process: Vec::new(),
            disturbed_retries: 0,
            failure: None,
            clock_hz_by_trial: Vec::new(),
            layouts: None,
            instructions: None,
            fresh_probe: None,
            probe_protections: None,
        }
    }

    /// The protections its workers were seen under: a timed process's, else the probe's.
    pub(crate) fn protections(&self) -> Option<crate::worker::observed::Protections> {
        self.processes
            .iter()
            .find_map(|p| p.protections.clone())
            .or_else(|| self.probe_protections.clone())
    }
}

pub(super) enum Measured {
    Done(Box<JobMeasurement>),
    Cancelled,
}

/// A process counts as overdue once it has run this many times what its plan expects...
const OVERDUE_FACTOR: f64 = 3.0;
/// ... and at least this long (start-up alone can take a good part of a second on a busy host).
const OVERDUE_AFTER: Duration = Duration::from_secs(1);
/// Spacing of the events of an overdue process.
const OVERDUE_INTERVAL: Duration = Duration::from_secs(1);

/// One job being measured: where its processes come from, what was kept so far, and what the
/// live progress events need across its processes.
struct Measuring<'a> {
    runner: &'a mut dyn TrialRunner,
    layout: Layout,
    job: &'a Job,
    clock: ClockRule,
    send: &'a mut dyn FnMut(EngineEvent),
    m: JobMeasurement,
    done_trials: Vec<Trial>,
    /// Per kept trial (beside `done_trials`), the nanoseconds it waited for the CPU.
    done_waits: Vec<Option<u64>>,
    last_progress: Instant,
    overhead: f64,
    source: String,
    /// The digest every trial's last call must have written (None: this runner proves no
    /// work).
    expected_digest: Option<Vec<u8>>,
}

pub(super) fn measure_job(
    runner: &mut dyn TrialRunner,
    req: &RunRequest,
    clock: ClockRule,
    job: &Job,
    send: &mut dyn FnMut(EngineEvent),
) -> Measured {
    // Instructions per second are no clock: the fixed clock's slow rule is for cycles (the
    // witness, which measures the core clock itself, still checks each trial).
    let clock = match req.counter.counts() {
        Counter::Cycles => clock,
        Counter::Instructions => ClockRule {
            fixed_clock_hz: None,
            ..clock
        },
    };
    let mut run = Measuring {
        runner,
        layout: Layout::of(req, job),
        job,
        clock,
        send,
        m: JobMeasurement::empty(),
        done_trials: Vec::new(),
        done_waits: Vec::new(),
        last_progress: Instant::now() - PROGRESS_INTERVAL,
        overhead: 0.0,
        source: String::new(),
        expected_digest: None,
    };
    if !run.known_answer_holds() || !run.fetch_reference_digest() {
        return Measured::Done(Box::new(run.m));
    }
    for index in 0..run.layout.processes {
        if !run.keep_one_process(index) {
            return Measured::Cancelled;
        }
        if run.m.failure.is_some() || precise_enough(req.adaptive, &run.done_trials) {
            break;
        }
    }
    // valgrind's count is the candidate's instructions, not its time: the fresh-message probe
    // and the layouts time, so they belong to the timed counters (their specs count what the
    // job's count, hardware instructions included).
    let timed = !req.counter.under_valgrind();
    if timed && run.m.failure.is_none() && !run.probe_fresh_messages() {
        return Measured::Cancelled;
    }
    if !timed && run.m.failure.is_none() && !run.probe_counted() {
        return Measured::Cancelled;
    }
    if timed && req.layouts && run.m.failure.is_none() && !run.time_layouts() {
        return Measured::Cancelled;
    }
    Measured::Done(Box::new(run.m))
}

/// The adaptive mode's stop: enough trials and a tight enough confidence interval.
pub(super) fn precise_enough(adaptive: Option<Adaptive>, trials: &[Trial]) -> bool {
    adaptive.is_some_and(|a| {
        trials.len() as u32 >= MIN_ADAPTIVE_TRIALS
            && trial_spread(trials).is_some_and(|s| s.ci95_relative <= a.precision)
    })
}

impl Measuring<'_> {
    /// Runs process `index` of the job until it is not disturbed (or the last attempt), and
    /// keeps it. False when the run was cancelled meanwhile.
    fn keep_one_process(&mut self, index: u32) -> bool {
        let mut attempt = 1;
        loop {
            let mut h = self.m.histogram.clone();
            let mut h_process = new_histogram();
            let mut run = self.run_one(&mut h, &mut h_process);
            if let Some(info) = &run.info {
                self.overhead = info.timer_overhead_ticks;
                self.source = per_call_label(info.per_call_source);
            }
            let failure = match &run.outcome {
                JobOutcome::Cancelled => return false,
                JobOutcome::Complete => self.disproved(&run),
                JobOutcome::Failed(f) => Some(f.clone()),
            };
            let (clock_hz, clock_drift) = self.witnessed_clock(&run);
            for (i, hz) in clock_hz.iter().enumerate() {
                if let Some(hz) = *hz {
                    (self.send)(EngineEvent::TrialClock {
                        job: self.job.key.clone(),
                        trial: (self.done_trials.len() + i + 1) as u32,
                        effective_hz: hz,
                        in_band: clock_drift.is_none(),
                    });
                }
            }
            // A count is not disturbed by a busy host: it is never run again for one.
            if failure.is_none()
                && !self.layout.spec.count
                && attempt < MAX_ATTEMPTS
                && let Some(reason) =
                    disturbance_of(&run, self.clock.fixed_clock_hz).or(clock_drift)
            {
                attempt += 1;
                self.m.disturbed_retries += 1;
                (self.send)(EngineEvent::TrialRetried {
                    job: self.job.key.clone(),
                    trial: index + 1,
                    reason,
                    cpu_wait: cpu_wait_of(&run),
                });
                continue;
            }
            run.record.disturbed_retries = attempt - 1;
            match failure {
                None => {
                    self.m.histogram = h;
                    self.m.per_process.extend(per_call(&h_process));
                    self.done_trials.extend(run.record.trials.iter().copied());
                    let waits = (0..run.record.trials.len())
                        .map(|i| run.waited_ns.get(i).copied().flatten());
                    self.done_waits.extend(waits);
                }
                Some(f) => self.m.failure = Some(f),
            }
            self.m.instructions = self.m.instructions.take().or(run.instructions.clone());
            self.m.clock_hz_by_trial.extend(clock_hz);
            self.m.processes.push(run);
            return true;
        }
    }

    /// The effective clock of each trial of `run` (None without a witness pair), and the first
    /// trial's reason to run again when its clock left the host's band.
    fn witnessed_clock(&self, run: &ProcessRun) -> (Vec<Option<f64>>, Option<String>) {
        let mut drift = None;
        let hz = run
            .record
            .trials
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let pair = run.clock.get(i).copied().flatten();
                let (hz, why) = self.clock.check(t, pair.as_ref());
                drift = drift.take().or(why);
                hz
            })
            .collect();
        (hz, drift)
    }

    /// One attempt of one process, its samples folded into `h` (the job's so far plus this
    /// process's) and `h_process`, progress sent at most every `PROGRESS_INTERVAL`, and about
    /// once a second once it runs far past what the plan expects (`TrialOverdue`).
    fn run_one(
        &mut self,
        h: &mut hdrhistogram::Histogram<u64>,
        h_process: &mut hdrhistogram::Histogram<u64>,
    ) -> ProcessRun {
        let (j, layout) = (self.job, &self.layout);
        let (done_trials, last_progress) = (&self.done_trials, &mut self.last_progress);
        let (overhead, source) = (self.overhead, &self.source);
        // Both callbacks send: the samples' progress, and the waits' overdue notices.
        let send = RefCell::new(&mut *self.send);
        let trials_here: RefCell<Vec<Trial>> = RefCell::new(Vec::new());
        let trial_number = || {
            let n = done_trials.len() + trials_here.borrow().len() + 1;
            n.min(layout.total_trials as usize) as u32
        };
        let overdue_after = OVERDUE_AFTER.max(layout.expected.mul_f64(OVERDUE_FACTOR));
        let last_overdue: Cell<Option<Duration>> = Cell::new(None);
        self.runner.trial(
            &j.inst,
            &layout.spec,
            layout.timeout,
            &mut |ticks, trial| {
                job::record_samples(h, ticks);
                job::record_samples(h_process, ticks);
                if let Some(t) = trial {
                    trials_here.borrow_mut().push(*t);
                }
                if last_progress.elapsed() < PROGRESS_INTERVAL {
                    return;
                }
                *last_progress = Instant::now();
                let all: Vec<Trial> = done_trials
                    .iter()
                    .chain(trials_here.borrow().iter())
                    .copied()
                    .collect();
                (send.borrow_mut())(EngineEvent::TrialProgress {
                    job: j.key.clone(),
                    trial: trial_number(),
                    trials: layout.total_trials,
                    calls_done: all.iter().map(|t| t.measurements).sum(),
                    calls_total: layout.calls_total,
                    snapshot: HistogramSnapshot {
                        per_call: per_call(h),
                        histogram: Arc::new(h.clone()),
                        loop_mean_cycles: loop_stats(&all, j.key.input_bytes)
                            .and_then(|s| s.mean_cycles),
                        timer_overhead_ticks: overhead,
                        per_call_source: source.clone(),
                    },
                });
            },
            &mut |elapsed| {
                let due = last_overdue
                    .get()
                    .map_or(overdue_after, |last| last + OVERDUE_INTERVAL);
                if elapsed < due {
                    return;
                }
                last_overdue.set(Some(elapsed));
                (send.borrow_mut())(EngineEvent::TrialOverdue {
                    job: j.key.clone(),
                    trial: trial_number(),
                    trials: layout.total_trials,
                    elapsed,
                    expected: layout.expected,
                });
            },
        )
    }
}

/// How long a process's trials waited for the CPU against how long they ran.
fn cpu_wait_of(run: &ProcessRun) -> Option<crate::vocabulary::RunQueueWait> {
    let seconds: Vec<f64> = run.record.trials.iter().map(|t| t.seconds).collect();
    crate::vocabulary::RunQueueWait::of_trials(&seconds, &run.waited_ns)
}

/// The first disturbed trial of a process, and why.
pub(super) fn disturbance_of(run: &ProcessRun, fixed_clock_hz: Option<f64>) -> Option<String> {
    run.record
        .trials
        .iter()
        .zip(run.waited_ns.iter())
        .find_map(|(t, w)| job::disturbance(t, *w, fixed_clock_hz))
}

/// The per-call counter as the live histogram names it (`none` when the worker has none).
pub(crate) fn per_call_label(source: Option<CycleSource>) -> String {
    source.map_or("none", CycleSource::name).to_string()
}
