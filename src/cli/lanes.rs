//! The lanes of a run as text, for `run`'s headless progress and `watch --lanes`: per
//! measurement CPU its current job, trial and calls, and below them the jobs done and the one
//! ETA every view shows (`measure::eta`: the plans' expected time of what is left, at the pace
//! the started jobs have kept so far, over the lanes).
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
                "ETA {} (the plans × {pace:.2}{}{}, {}; {} lane(s))",
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
mod tests {
    use super::*;

    fn key(label: &str, bytes: u64) -> JobKey {
        JobKey {
            candidate: "iccs".into(),
            label: label.into(),
            input_bytes: bytes,
        }
    }

    #[test]
    fn lanes_follow_their_jobs_and_the_eta_is_the_plans_at_the_pace_of_started_jobs() {
        let mut b = Board::default();
        b.apply(
            &EngineEvent::RunStarted {
                run_dir: "r".into(),
                labels: vec!["a".into(), "b".into()],
                lengths: vec![32, 64],
                cpus: vec![0, 1],
                reference_jobs: Vec::new(),
            },
            0.0,
        );
        assert!(b.lines(0.0)[2].contains("ETA once a job is planned"));
        let plan = |s: f64| -> crate::measure::plan::TrialPlan {
            serde_json::from_value(serde_json::json!({
                "iterations_per_trial": 25, "warmups": 3, "trials": 4,
                "separate_processes": true, "estimated_s": s, "timeout_per_process_s": 10.0
            }))
            .unwrap()
        };
        for (label, bytes) in [("a", 32), ("b", 32), ("a", 64), ("b", 64)] {
            b.apply(
                &EngineEvent::JobPlanned {
                    job: key(label, bytes),
                    plan: plan(1.0),
                    t1_s: 0.0,
                },
                0.0,
            );
        }
        let progress = |label: &str, trial: u32, calls_done: u64| {
            progress_event(key(label, 32), trial, 4, calls_done)
        };
        b.apply(
            &EngineEvent::JobStarted {
                job: key("a", 32),
                cpu: Some(0),
            },
            0.0,
        );
        // Both jobs' trials report from their start (no time outside them).
        b.apply(&progress("a", 1, 0), 0.0);
        b.apply(
            &EngineEvent::JobStarted {
                job: key("b", 32),
                cpu: Some(1),
            },
            0.5,
        );
        b.apply(&progress("b", 1, 0), 0.5);
        b.apply(&progress("a", 2, 25), 2.0);
        b.apply(
            &EngineEvent::JobFailed {
                job: key("a", 32),
                reason: crate::vocabulary::JobFailure::new(
                    crate::vocabulary::FailureKind::Crash,
                    "x",
                ),
                stderr_tail: String::new(),
                record: None,
            },
            2.0,
        );
        // The running job is half done (trial 3 of 4 running, two trials' calls in) after 2 s.
        b.apply(&progress("b", 3, 50), 2.5);
        let lines = b.lines(2.5);
        assert!(lines[0].starts_with("CPU 0   idle  (1 done)"), "{lines:?}");
        assert!(lines[1].contains("b @ 32"), "{lines:?}");
        assert!(lines[1].contains("2.0 s"), "{lines:?}");
        // Plans of 1 s each: the ended job took 2 s for its plan, the running one 2 s for half
        // of its: with the prior (a twentieth of a plan) the pace is 4.05 / 1.55; 2.5 planned
        // seconds left at that pace over 2 lanes: 3.3 s.
        assert!(lines[2].starts_with("jobs 1/4 done (1 failed"), "{lines:?}");
        assert!(
            lines[2]
                .contains("ETA 3 s (the plans × 2.61, the pace of 2 started job(s); 2 lane(s))"),
            "{lines:?}"
        );
    }

    #[test]
    fn a_jobs_time_outside_its_trials_is_added_per_job_not_multiplied() {
        let mut b = Board::default();
        b.apply(
            &EngineEvent::RunStarted {
                run_dir: "r".into(),
                labels: vec!["a".into()],
                lengths: vec![32, 64],
                cpus: vec![0],
                reference_jobs: Vec::new(),
            },
            0.0,
        );
        let plan: crate::measure::plan::TrialPlan = serde_json::from_value(serde_json::json!({
            "iterations_per_trial": 1000, "warmups": 3, "trials": 1,
            "separate_processes": true, "estimated_s": 1.0, "timeout_per_process_s": 10.0
        }))
        .unwrap();
        for bytes in [32, 64] {
            let job = key("a", bytes);
            b.apply(
                &EngineEvent::JobPlanned {
                    job,
                    plan,
                    t1_s: 0.0,
                },
                0.0,
            );
        }
        let job = key("a", 32);
        let progress = |calls_done: u64| progress_event(key("a", 32), 1, 1, calls_done);
        let cpu = Some(0);
        b.apply(
            &EngineEvent::JobStarted {
                job: job.clone(),
                cpu,
            },
            0.0,
        );
        // 1 s before its trials, its 1 s plan kept, 0.5 s after them.
        b.apply(&progress(0), 1.0);
        b.apply(&progress(100), 2.0);
        let reason = crate::vocabulary::JobFailure::new(crate::vocabulary::FailureKind::Crash, "x");
        let (stderr_tail, record) = (String::new(), None);
        b.apply(
            &EngineEvent::JobFailed {
                job,
                reason,
                stderr_tail,
                record,
            },
            2.5,
        );
        // The next job: its 1 s plan at the plans' pace, and 1.5 s outside its trials (not
        // 2.5 × its plan); the line names both.
        let eta = b.eta_s(2.5).expect("planned");
        assert!((eta - 2.5).abs() < 1e-9, "{eta}");
        let lines = b.lines(2.5);
        assert!(
            lines[1].contains("(the plans × 1.00, 1.5 s a job outside its trials, the pace of 1"),
            "{lines:?}"
        );
    }

    /// Trial `trial` of `trials` of `job` running, `calls_done` of the job's 100 calls in.
    fn progress_event(job: JobKey, trial: u32, trials: u32, calls_done: u64) -> EngineEvent {
        EngineEvent::TrialProgress {
            job,
            trial,
            trials,
            calls_done,
            calls_total: 100,
            snapshot: crate::vocabulary::HistogramSnapshot {
                histogram: std::sync::Arc::new(hdrhistogram::Histogram::new(3).unwrap()),
                per_call: None,
                loop_mean_cycles: None,
                timer_overhead_ticks: 0.0,
                per_call_source: "tsc".into(),
            },
        }
    }
}
