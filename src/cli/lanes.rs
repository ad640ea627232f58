//! The lanes of a run as text, for `run`'s headless progress and `watch --lanes`: per
//! measurement CPU its current job, trial and calls, and below them the jobs done and an ETA
//! from the job times measured so far (mean wall time of a finished job × jobs left ÷ lanes).
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
    job_seconds: Vec<f64>,
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
            EngineEvent::JobStarted { job, cpu } => {
                let cpu = cpu
                    .or_else(|| self.lanes.keys().next().copied())
                    .unwrap_or(0);
                self.lane_of.insert(job.clone(), cpu);
                self.started.insert(job.clone(), at);
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

    fn job_done(&mut self, job: &JobKey, at: f64) {
        if let Some(t0) = self.started.remove(job) {
            self.job_seconds.push((at - t0).max(0.0));
        }
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

    /// The seconds left by the jobs measured so far, when any finished.
    fn eta_s(&self) -> Option<f64> {
        let n = self.job_seconds.len();
        if n == 0 {
            return None;
        }
        let mean = self.job_seconds.iter().sum::<f64>() / n as f64;
        // Jobs a failed KAT keeps from being measured still count as left: an upper bound.
        let left = self.total.saturating_sub(self.finished + self.failed);
        Some(mean * left as f64 / self.lanes.len().max(1) as f64)
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
        let eta = match (self.ended, self.eta_s()) {
            (Some(true), _) => "cancelled".to_string(),
            (Some(false), _) => "finished".to_string(),
            (None, Some(s)) => format!(
                "ETA {} (mean job {:.2} s over {} jobs, {} lane(s))",
                crate::format::duration(std::time::Duration::from_secs_f64(s)),
                self.job_seconds.iter().sum::<f64>() / self.job_seconds.len() as f64,
                self.job_seconds.len(),
                self.lanes.len().max(1)
            ),
            (None, None) => "ETA after the first job".to_string(),
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
    fn lanes_follow_their_jobs_and_the_eta_comes_from_finished_jobs() {
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
        assert!(b.lines(0.0)[2].contains("ETA after the first job"));
        b.apply(
            &EngineEvent::JobStarted {
                job: key("a", 32),
                cpu: Some(0),
            },
            0.0,
        );
        b.apply(
            &EngineEvent::JobStarted {
                job: key("b", 32),
                cpu: Some(1),
            },
            0.5,
        );
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
        let lines = b.lines(2.5);
        assert!(lines[0].starts_with("CPU 0   idle  (1 done)"), "{lines:?}");
        assert!(lines[1].contains("b @ 32"), "{lines:?}");
        assert!(lines[1].contains("2.0 s"), "{lines:?}");
        // One job of 2 s measured, 3 left over 2 lanes: 3 s.
        assert!(lines[2].starts_with("jobs 1/4 done (1 failed"), "{lines:?}");
        assert!(
            lines[2].contains("ETA 3 s") || lines[2].contains("ETA 3.0 s"),
            "{lines:?}"
        );
    }
}
