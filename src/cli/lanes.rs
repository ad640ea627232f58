//! The lanes of a run as text, for `run`'s headless progress and `watch --lanes`: per
//! measurement CPU its current job, trial and calls, and below them the jobs done and the one
//! ETA every view shows (`measure::eta`: the plans' expected time of what is left, at the pace
//! the started jobs have kept so far, or at the cost per call of their instance's ended jobs,
//! over the lanes).
//! It folds engine events (live, or read back from a journal with their times) and never
//! touches the run.

use std::collections::BTreeMap;

use crate::vocabulary::{EngineEvent, JobKey};

/// One measurement CPU's state.
#[derive(Debug, Default, Clone)]
struct Lane {
    job: Option<JobKey>,
    since: f64,
    trial: u32,
    trials: u32,
    calls_done: u64,
    calls_total: u64,
    done: usize,
}

/// Lanes of one run and its tally.
#[derive(Debug, Default, Clone)]
pub struct Board {
    lanes: BTreeMap<usize, Lane>,
    lane_of: BTreeMap<JobKey, usize>,
    started: BTreeMap<JobKey, f64>,
    total: usize,
    finished: usize,
    failed: usize,
    /// Per job seen: its plan's expected seconds, share done and wall seconds once finished.
    times: BTreeMap<JobKey, crate::measure::eta::JobTime>,
    /// Per job started: when its trials reported progress (its time outside them).
    spans: BTreeMap<JobKey, crate::measure::eta::TrialSpan>,
    ended: Option<bool>,
}

impl Board {
    /// Folds one event that happened at `at` (seconds on any steady clock).
    pub fn apply(&mut self, ev: &EngineEvent, at: f64) {
        match ev {
            EngineEvent::RunStarted {
                labels,
                lengths,
                cpus,
                ..
            } => {
                self.total = labels.len() * lengths.len();
                for &c in cpus {
                    self.lanes.entry(c).or_default();
                }
                self.ended = None;
            }
            EngineEvent::JobPlanned { job, plan, t1_s } => {
                let time = self.time_of(job);
                time.estimated_s = Some(plan.estimated_s);
                time.call = Some(crate::measure::eta::PlannedCall::new(job, plan, *t1_s));
            }
            EngineEvent::JobStarted { job, cpu } => {
                let cpu = cpu
                    .or_else(|| self.lanes.keys().next().copied())
                    .unwrap_or(0);
                self.lane_of.insert(job.clone(), cpu);
                self.started.insert(job.clone(), at);
                self.time_of(job).started_at_s = Some(at);
                self.spans.insert(job.clone(), Default::default());
                let lane = self.lanes.entry(cpu).or_default();
                *lane = Lane {
                    job: Some(job.clone()),
                    since: at,
                    done: lane.done,
                    ..Lane::default()
                };
            }
            EngineEvent::TrialProgress {
                job,
                trial,
                trials,
                calls_done,
                calls_total,
                ..
            } => {
                if let Some(lane) = self.lane_mut(job) {
                    (lane.trial, lane.trials) = (*trial, *trials);
                    (lane.calls_done, lane.calls_total) = (*calls_done, *calls_total);
                }
                let share = crate::measure::eta::share_done(*calls_done, *calls_total);
                self.time_of(job).fraction_done = share;
                self.spans
                    .entry(job.clone())
                    .or_default()
                    .progress(at, share);
            }
            EngineEvent::JobFinished { job, .. } => {
                self.finished += 1;
                self.job_done(job, at);
            }
            EngineEvent::JobFailed { job, .. } => {
                self.failed += 1;
                self.job_done(job, at);
            }
            EngineEvent::RunFinished { cancelled, .. } => self.ended = Some(*cancelled),
            _ => {}
        }
    }

    fn lane_mut(&mut self, job: &JobKey) -> Option<&mut Lane> {
        let cpu = self.lane_of.get(job)?;
        self.lanes.get_mut(cpu)
    }

    fn time_of(&mut self, job: &JobKey) -> &mut crate::measure::eta::JobTime {
        self.times
            .entry(job.clone())
            .or_insert(crate::measure::eta::JobTime {
                estimated_s: None,
                fraction_done: 0.0,
                spent_s: None,
                outside_s: None,
                started_at_s: None,
                call: None,
            })
    }

    fn job_done(&mut self, job: &JobKey, at: f64) {
        let t0 = self.started.remove(job);
        let span = self.spans.remove(job).unwrap_or_default();
        let time = self.time_of(job);
        let planned = time.estimated_s.unwrap_or(0.0);
        time.fraction_done = 1.0;
        time.spent_s = t0.map(|t0| (at - t0).max(0.0));
        time.outside_s = t0.map(|t0| span.outside_s(t0, Some(at), at, planned));
        if let Some(lane) = self.lane_mut(job) {
            lane.job = None;
            lane.done += 1;
        }
    }

    /// How many measurement CPUs the run has.
    pub fn lane_count(&self) -> usize {
        self.lanes.len()
    }

    /// Whether the run said it ended (and whether cancelled).
    pub fn ended(&self) -> Option<bool> {
        self.ended
    }

    /// Every job seen as the ETA needs it at `now`: the running ones with the seconds they
    /// have taken so far.
    fn job_times(&self, now: f64) -> Vec<crate::measure::eta::JobTime> {
        self.times
            .iter()
            .map(|(key, t)| match self.started.get(key) {
                Some(t0) => crate::measure::eta::JobTime {
                    spent_s: Some((now - t0).max(0.0)),
                    outside_s: Some(self.spans.get(key).copied().unwrap_or_default().outside_s(
                        *t0,
                        None,
                        now,
                        t.estimated_s.unwrap_or(0.0),
                    )),
                    ..*t
                },
                None => *t,
            })
            .collect()
    }

    /// Seconds left at `now`: the one ETA (`measure::eta`) over the jobs seen, shared over
    /// the lanes.
    pub fn eta_s(&self, now: f64) -> Option<f64> {
        crate::measure::eta::seconds_left(&self.job_times(now), self.total, self.lanes.len())
    }

    /// One line per lane, then the tally; `now` on the clock of `apply`.
    pub fn lines(&self, now: f64) -> Vec<String> {
        let mut out: Vec<String> = self
            .lanes
            .iter()
            .map(|(cpu, l)| match &l.job {
                Some(job) => {
                    let frac = l.calls_done as f64 / l.calls_total.max(1) as f64;
                    format!(
                        "CPU {cpu:<3} {} {job}  trial {}/{}  {:.1} s  ({} done)",
                        bar(frac, 12),
                        l.trial,
                        l.trials,
                        now - l.since,
                        l.done
                    )
                }
                None => format!("CPU {cpu:<3} idle  ({} done)", l.done),
            })
            .collect();
        let times = self.job_times(now);
        let eta = match (
            self.ended,
            self.eta_s(now),
            crate::measure::eta::pace(&times),
        ) {
            (Some(true), ..) => "cancelled".to_string(),
            (Some(false), ..) => "finished".to_string(),
            (None, Some(s), Some(pace)) => format!(
                "ETA {} (the plans × {pace:.2}{}{}{}, {}; {} lane(s))",
                crate::format::duration(std::time::Duration::from_secs_f64(s)),
                match crate::measure::eta::outside_per_job(&times) {
                    o if o > 0.0 => format!(", {o:.1} s a job outside its trials"),
                    _ => String::new(),
                },
                match crate::measure::eta::disturbed_calls(&times) {
                    0 => String::new(),
                    n => format!(
                        ", {n} plan(s) of a disturbed calibration call cut to its instance's \
                         other lengths"
                    ),
                },
                match crate::measure::eta::costed_jobs(&times) {
                    0 => String::new(),
                    n => format!(", {n} job(s) at their instance's cost per call"),
                },
                pace_basis(&times),
                self.lanes.len().max(1)
            ),
            (None, ..) => "ETA once a job is planned".to_string(),
        };
        out.push(format!(
            "jobs {}/{} done ({} failed) · {eta}",
            self.finished + self.failed,
            self.total,
            self.failed
        ));
        out
    }
}

/// What the pace was learnt from (`measure::eta::pace`).
fn pace_basis(times: &[crate::measure::eta::JobTime]) -> String {
    use crate::measure::eta::RECENT_JOBS;
    let ended = times
        .iter()
        .filter(|t| t.fraction_done >= 1.0 && t.spent_s.is_some() && t.started_at_s.is_some())
        .count();
    if ended >= RECENT_JOBS {
        format!("the pace of the last {RECENT_JOBS} jobs ended")
    } else {
        let started = times.iter().filter(|t| t.spent_s.is_some()).count();
        format!("the pace of {started} started job(s)")
    }
}

pub fn bar(frac: f64, width: usize) -> String {
    let filled = ((frac.clamp(0.0, 1.0)) * width as f64).round() as usize;
    format!("[{}{}]", "#".repeat(filled), "-".repeat(width - filled))
}

#[cfg(test)]
mod tests;
