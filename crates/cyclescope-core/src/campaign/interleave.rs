//! The interleaved A/B comparison (`compare --live`): the run's usual opening, KAT gate and
//! calibration for both instances, then per length one trial of A and one of B at a time,
//! alternately (A B, B A, A B, …, so a drift of the host weighs on both sides alike), each
//! trial its own worker process measured by the campaign's one job path (`measure_job` with a
//! one-trial plan, disturbance retries included). Each side's trials become its ordinary
//! record; the pairs give B/A with its 95 % interval (`measure::paired`). It never draws.

use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

use super::measure::{JobMeasurement, Measured, measure_job};
use super::plan::Job;
use super::runner::{TrialRunner, WorkerRunner};
use super::{CampaignError, Opened, Run, RunOutcome, RunRequest, lanes};
use crate::measure::paired::{PairedRatio, paired_ratio};
use crate::measure::stats::{Trial, loop_stats};
use crate::vocabulary::{EngineEvent, JobFailure};

/// B against A at one length.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LiveComparison {
    pub input_bytes: u64,
    /// Mean cycles per call (Σcycles/Σcalls) of each side's trials.
    pub a_mean_cycles: Option<f64>,
    pub b_mean_cycles: Option<f64>,
    /// None when fewer than two pairs completed.
    pub ratio: Option<PairedRatio>,
    /// Why this length has no (or fewer) pairs: a side not measured, failed or cancelled.
    pub problem: Option<String>,
}

/// How an interleaved run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct InterleaveOutcome {
    pub run: RunOutcome,
    pub comparisons: Vec<LiveComparison>,
}

/// Refuses a request that is not two distinct instances (before any folder is made).
pub fn check_pair(req: &RunRequest) -> Result<(), CampaignError> {
    pair_problem(req).map_or(Ok(()), |why| Err(CampaignError::NotAPair(why)))
}

/// Why two instances cannot be interleaved.
fn pair_problem(req: &RunRequest) -> Option<String> {
    match req.instances.as_slice() {
        [a, b] if a.key() == b.key() => Some(format!(
            "A and B are the same instance {} (give one of them another label)",
            a.key()
        )),
        [_, _] => None,
        other => Some(format!("two instances are needed, not {}", other.len())),
    }
}

/// Runs the interleaved comparison of `req.instances` (A then B), `pairs` pairs per length,
/// trials in worker processes.
pub fn interleave(
    req: &RunRequest,
    pairs: u32,
    emit: &mut dyn FnMut(EngineEvent),
    cancel: &std::sync::Arc<AtomicBool>,
) -> Result<InterleaveOutcome, CampaignError> {
    let off = crate::cpu::OffCpu::enter_all(&req.cpus);
    let mut runner = WorkerRunner::new(req, req.cpus[0], cancel)?;
    interleave_with(req, &mut runner, !off.is_off(), pairs, emit, cancel)
}

/// The phases, with any runner: a run's opening, then one lane alternating A and B.
/// `engine_shared_cpu`: the calling thread could not leave the measurement CPU.
pub(crate) fn interleave_with(
    req: &RunRequest,
    runner: &mut dyn TrialRunner,
    engine_shared_cpu: bool,
    pairs: u32,
    emit: &mut dyn FnMut(EngineEvent),
    cancel: &AtomicBool,
) -> Result<InterleaveOutcome, CampaignError> {
    check_pair(req)?;
    // One process is one trial here: the adaptive mode's own trial count has no say, and
    // both sides share one CPU, so that a difference is never the CPUs'.
    let req = &RunRequest {
        adaptive: None,
        cpus: req.cpus[..1].to_vec(),
        origin: crate::journal::Origin::CompareLive,
        ..req.clone()
    };
    let started = std::time::Instant::now();
    let mut runners = vec![runner];
    let mut opened = Opened::open(req, &mut runners, engine_shared_cpu, emit, cancel)?;
    let comparisons = Mutex::new(Vec::new());
    let body = |run: &mut Run<'_>| -> Result<(), CampaignError> {
        let found = run.interleave_all(pairs)?;
        if let Ok(mut c) = comparisons.lock() {
            *c = found;
        }
        Ok(())
    };
    let outcome = lanes::run_lanes(req, &mut opened, runners, cancel, &body);
    let run = opened.finish(outcome, cancel, started)?;
    let comparisons = comparisons.into_inner().unwrap_or_default();
    // The result is the run's as much as its records are: kept in its folder.
    let stored = super::ab_result::AbResult::new(req, pairs, comparisons.clone());
    if let Err(e) = stored.write(&req.run_dir) {
        emit(EngineEvent::Warning {
            message: format!("the A/B result could not be written into the run folder: {e}"),
        });
    }
    Ok(InterleaveOutcome { run, comparisons })
}

impl Run<'_> {
    /// Plans both sides, then per length `pairs` pairs of single trials.
    fn interleave_all(&mut self, pairs: u32) -> Result<Vec<LiveComparison>, CampaignError> {
        let jobs = self.plan()?;
        let req = self.req;
        let mut comparisons = Vec::new();
        for &len in &req.lengths {
            let side = |i: usize| {
                jobs.iter()
                    .find(|j| j.key.input_bytes == len && j.inst.key() == req.instances[i].key())
            };
            let c = match (side(0), side(1)) {
                (Some(a), Some(b)) => self.interleave_length(a, b, pairs)?,
                (a, _) => LiveComparison {
                    input_bytes: len,
                    a_mean_cycles: None,
                    b_mean_cycles: None,
                    ratio: None,
                    problem: Some(format!(
                        "{} was not measured (KAT, calibration or cancel: see above)",
                        req.instances[usize::from(a.is_some())].label
                    )),
                },
            };
            comparisons.push(c);
            if self.cancelled() {
                break;
            }
        }
        Ok(comparisons)
    }
}

/// `j` planned for one trial in one process: the unit the sides alternate in.
fn one_trial(j: &Job) -> Job {
    let mut plan = j.plan;
    plan.trials = 1;
    plan.separate_processes = true;
    Job {
        inst: j.inst.clone(),
        key: j.key.clone(),
        plan,
        t1: j.t1,
        kat: j.kat.clone(),
    }
}

fn absorb(into: &mut JobMeasurement, m: JobMeasurement) {
    // Both histograms have the same bounds (`new_histogram`): adding cannot fail.
    let _ = into.histogram.add(&m.histogram);
    into.processes.extend(m.processes);
    into.per_process.extend(m.per_process);
    into.disturbed_retries += m.disturbed_retries;
    into.clock_hz_by_trial.extend(m.clock_hz_by_trial);
    into.failure = into.failure.take().or(m.failure);
}

fn trials_of(m: &JobMeasurement) -> Vec<Trial> {
    m.processes
        .iter()
        .flat_map(|p| p.record.trials.iter().copied())
        .collect()
}

impl Run<'_> {
    /// `pairs` pairs of A and B at one length, then both records.
    fn interleave_length(
        &mut self,
        a: &Job,
        b: &Job,
        pairs: u32,
    ) -> Result<LiveComparison, CampaignError> {
        let units = [one_trial(a), one_trial(b)];
        let mut sides = [JobMeasurement::empty(), JobMeasurement::empty()];
        let mut problem: Option<String> = None;
        'pairs: for pair in 0..pairs {
            // A B, then B A: a linear drift of the host costs both sides the same.
            let order = if pair % 2 == 0 { [0, 1] } else { [1, 0] };
            for i in order {
                if self.cancelled() {
                    problem = Some(format!("cancelled after {pair} pairs"));
                    break 'pairs;
                }
                let events = &mut self.events;
                let clock = self.host.clock_rule();
                let m = match measure_job(self.runner, self.req, clock, &units[i], &mut |ev| {
                    events.send(ev)
                }) {
                    Measured::Done(m) => *m,
                    Measured::Cancelled => {
                        problem = Some(format!("cancelled after {pair} pairs"));
                        break 'pairs;
                    }
                };
                let failed = m.failure.clone();
                absorb(&mut sides[i], m);
                if let Some(f) = failed {
                    problem = Some(failure_text(&units[i], &f));
                    break 'pairs;
                }
            }
        }
        let [ma, mb] = sides;
        let (ta, tb) = (trials_of(&ma), trials_of(&mb));
        let mean = |t: &[Trial]| loop_stats(t, a.key.input_bytes).and_then(|s| s.mean_cycles);
        let c = LiveComparison {
            input_bytes: a.key.input_bytes,
            a_mean_cycles: mean(&ta),
            b_mean_cycles: mean(&tb),
            ratio: paired_ratio(&ta, &tb),
            problem,
        };
        for (j, m) in [(a, ma), (b, mb)] {
            self.write_interleaved(j, m)?;
        }
        Ok(c)
    }

    /// A side's record: its plan says how many single-trial processes it ran.
    fn write_interleaved(&mut self, j: &Job, m: JobMeasurement) -> Result<(), CampaignError> {
        if m.processes.is_empty() {
            return Ok(());
        }
        let mut job = one_trial(j);
        job.plan.trials = m.processes.len() as u32;
        self.write_measured(&job, m)
    }
}

fn failure_text(j: &Job, f: &JobFailure) -> String {
    format!("{} failed: {f}", j.key)
}
