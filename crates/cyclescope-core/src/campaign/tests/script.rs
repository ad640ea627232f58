//! A scripted `TrialRunner`: KAT verdicts and trial processes from a list of steps instead of
//! worker processes, so the campaign's logic is tested on any machine, in milliseconds, with
//! no timing in the assertions.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Map;

use crate::campaign::runner::{KatRun, TrialRunner};
use crate::catalog::Instance;
use crate::counter::CycleSource;
use crate::counter::witness::{ClockPair, WitnessKind};
use crate::kat::{KatEvent, KatOptions, KatStatus};
use crate::measure::job::{ProcessRun, WorkerInfo};
use crate::measure::stats::Trial;
use crate::measure::trial::TrialSpec;
use crate::record::ProcessRecord;
use crate::vocabulary::{FailureKind, JobFailure, JobOutcome, ProcessStatus};

/// The fixture host's fixed clock (`tuned-intel`: cpufreq max 2.1 GHz).
pub(super) const CLOCK_HZ: f64 = 2.1e9;
/// The fixture's reference counter rate (its clock probe's `reference_hz`).
pub(super) const REFERENCE_HZ: f64 = 2_099_998_021.0;
/// Seconds of every scripted trial: long enough for the harness's slow-clock test.
const TRIAL_S: f64 = 0.02;

/// What one trial process does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Step {
    /// Every trial at the fixed clock, never preempted.
    Clean,
    /// Calls `factor` × as slow as usual, at the fixed clock (spread for the adaptive mode).
    Cycles(f64),
    /// The clock ran at 80 % of the fixed clock (the harness's disturbance).
    SlowClock,
    /// The clock ran at 120 % of the fixed clock (turbo came back): only the witness sees it.
    FastClock,
    /// The worker waited 5 % of each trial for its CPU.
    Preempted,
    /// Killed by SIGSEGV before any trial.
    Crash,
    /// No result within the timeout.
    Timeout,
    /// The operator cancels while this process runs.
    Cancel,
}

/// Two lanes meeting: each waits (bounded) for the other to be inside a trial at once.
pub(super) type Rendezvous = Arc<(std::sync::Mutex<usize>, std::sync::Condvar)>;

pub(super) struct Scripted {
    pub(super) kat: KatStatus,
    /// When set, the first trial process waits until every runner sharing it is in one too.
    pub(super) rendezvous: Option<(Rendezvous, usize)>,
    /// Whether the rendezvous was met (all runners inside a trial at the same time).
    pub(super) met: bool,
    /// The threads trials were run from.
    pub(super) threads: Vec<String>,
    /// The jobs measured (not calibrated), as `label@bytes`.
    pub(super) measured: Vec<String>,
    pub(super) steps: VecDeque<Step>,
    /// What each calibration process does, in turn (then `Clean`).
    pub(super) calibration_steps: VecDeque<Step>,
    pub(super) cancel: Arc<AtomicBool>,
    /// Counts, for assertions.
    pub(super) kat_runs: usize,
    pub(super) calibrations: usize,
    pub(super) processes: usize,
    /// The label of each trial process in the order they ran (calibrations left out).
    pub(super) order: Vec<String>,
    /// Cycles of a label's trials × this factor (the interleaving tests' B).
    pub(super) label_factor: Option<(String, f64)>,
    /// Whether trials carry clock witness pairs (perf cycles beside the TSC).
    pub(super) witness: bool,
}

impl Scripted {
    pub(super) fn new(steps: &[Step]) -> Self {
        Self {
            kat: KatStatus::Pass,
            rendezvous: None,
            met: false,
            threads: Vec::new(),
            measured: Vec::new(),
            steps: steps.iter().copied().collect(),
            calibration_steps: VecDeque::new(),
            cancel: Arc::new(AtomicBool::new(false)),
            kat_runs: 0,
            calibrations: 0,
            processes: 0,
            order: Vec::new(),
            label_factor: None,
            witness: true,
        }
    }
}

/// Counts this runner in and waits (at most 10 s) until `n` runners are in.
fn meet(r: &Rendezvous, n: usize) -> bool {
    let (count, cv) = &**r;
    let mut c = count.lock().unwrap();
    *c += 1;
    cv.notify_all();
    let (c, _) = cv
        .wait_timeout_while(c, Duration::from_secs(10), |c| *c < n)
        .unwrap();
    *c >= n
}

fn is_calibration(spec: &TrialSpec) -> bool {
    spec.iterations == 1 && spec.trials == 1 && spec.sample_calls == 0
}

impl TrialRunner for Scripted {
    fn kat(
        &mut self,
        _inst: &Instance,
        _opts: &KatOptions,
        _progress: &mut dyn FnMut(&KatEvent),
    ) -> Option<KatRun> {
        self.kat_runs += 1;
        Some(KatRun {
            status: self.kat,
            detail: "scripted".into(),
            logged: false,
            conformance: Vec::new(),
            known_answers: Vec::new(),
            worker: None,
        })
    }

    fn trial(
        &mut self,
        inst: &Instance,
        spec: &TrialSpec,
        timeout: Duration,
        on_samples: &mut dyn FnMut(&[u64], Option<&Trial>),
        on_wait: &mut dyn FnMut(Duration),
    ) -> ProcessRun {
        let step = if is_calibration(spec) {
            self.calibrations += 1;
            self.calibration_steps.pop_front().unwrap_or(Step::Clean)
        } else {
            self.processes += 1;
            self.order.push(inst.label.clone());
            self.measured
                .push(format!("{}@{}", inst.label, spec.input_bytes));
            if let Some((r, n)) = self.rendezvous.take() {
                self.met = meet(&r, n);
            }
            self.steps.pop_front().unwrap_or(Step::Clean)
        };
        self.threads.push(
            std::thread::current()
                .name()
                .unwrap_or_default()
                .to_string(),
        );
        // (calls slower by, clock factor, share of the trial waited for the CPU)
        let (slower, clock, waited) = match step {
            Step::Cycles(f) => (f, 1.0, 0.0),
            Step::SlowClock => (1.0, 0.8, 0.0),
            Step::FastClock => (1.0, 1.2, 0.0),
            Step::Preempted => (1.0, 1.0, 0.05),
            _ => (1.0, 1.0, 0.0),
        };
        let slower = match &self.label_factor {
            Some((label, f)) if *label == inst.label => slower * f,
            _ => slower,
        };
        let outcome = match step {
            Step::Crash => JobOutcome::Failed(JobFailure::new(
                FailureKind::Crash,
                "worker killed by SIGSEGV",
            )),
            Step::Timeout => {
                // It was waited for up to its deadline.
                on_wait(timeout);
                JobOutcome::Failed(JobFailure::new(
                    FailureKind::Timeout,
                    format!(
                        "no result after {:.1} s; worker killed",
                        timeout.as_secs_f64()
                    ),
                ))
            }
            Step::Cancel => {
                self.cancel.store(true, Ordering::SeqCst);
                JobOutcome::Cancelled
            }
            _ => JobOutcome::Complete,
        };
        let n = if outcome == JobOutcome::Complete {
            spec.trials
        } else {
            0
        };
        let trials: Vec<Trial> = (0..n)
            .map(|_| Trial {
                measurements: spec.iterations,
                seconds: TRIAL_S * slower,
                cycles: (TRIAL_S * slower * CLOCK_HZ * clock) as u64,
            })
            .collect();
        // perf cycles are the loop count; the TSC ticks at its probed rate meanwhile.
        let pairs = trials
            .iter()
            .map(|t| {
                self.witness.then_some(ClockPair {
                    kind: WitnessKind::PerfAndReference,
                    core: t.cycles,
                    reference: (t.seconds * REFERENCE_HZ) as u64,
                })
            })
            .collect();
        for t in &trials {
            on_samples(&[900, 1000, 1100], None);
            on_samples(&[], Some(t));
        }
        let complete = outcome == JobOutcome::Complete;
        ProcessRun {
            record: ProcessRecord {
                status: if complete {
                    ProcessStatus::Complete
                } else {
                    ProcessStatus::Partial
                },
                exit_code: if complete { 0 } else { -11 },
                meta: Map::new(),
                trials: trials.clone(),
                stderr: if complete {
                    String::new()
                } else {
                    "scripted fault".into()
                },
                command: vec!["scripted".into()],
                wall_s: trials.iter().map(|t| t.seconds).sum::<f64>() + 0.001,
                disturbed_retries: 0,
            },
            waited_ns: trials
                .iter()
                .map(|_| Some((waited * TRIAL_S * 1e9) as u64))
                .collect(),
            clock: pairs,
            // A scripted runner gives no reference digest, so nothing checks these.
            digests: Vec::new(),
            info: Some(WorkerInfo {
                meta: None,
                cycle_source: CycleSource::Tsc,
                core_cycles: false,
                perf_unavailable: None,
                per_call_source: Some(CycleSource::Tsc),
                timer_overhead_ticks: 50.0,
                baseline_rss_bytes: 1 << 20,
            }),
            outcome,
            peak_rss_bytes: 2 << 20,
            instructions: None,
            probe_digests: Vec::new(),
            cpu_after_go: None,
            peak_memory_bytes: None,
            group_cpu: None,
            protections: None,
            // Each trial's calls, untouched, at its loop's mean.
            trial_bodies: trials
                .iter()
                .map(|t| crate::measure::robust::TrialBody {
                    mean_ticks: t.cycles as f64 / t.measurements.max(1) as f64,
                    calls: 100,
                    excluded: 0,
                })
                .collect(),
        }
    }
}
