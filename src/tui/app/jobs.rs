//! Jobs (instance × length) of every run this session, as the engine reported them, and the
//! views derived from them: the results rows (current run first, report §4 order within a
//! run), the cycles/byte curves with their pseudoXOF reference, and the current run's
//! progress and ETA (from the measured time of its finished jobs). Derived on demand, never
//! stored twice.

mod curves;

use std::collections::BTreeMap;

use crate::baseline::{BaselineMeans, XofRatio};
use crate::measure::TrialPlan;
use crate::vocabulary::{HistogramSnapshot, JobKey, JobSummary};

use super::{App, HistView, RunState};
pub use curves::CurveSeries;

#[derive(Debug, Clone)]
pub enum JobState {
    Planned,
    Running {
        trial: u32,
        trials: u32,
        calls_done: u64,
        calls_total: u64,
    },
    Done(Box<JobSummary>),
    Failed {
        reason: String,
        stderr_tail: String,
    },
}

#[derive(Debug, Clone)]
pub struct Job {
    pub key: JobKey,
    /// The run it belongs to (index into `App::runs`).
    pub run: usize,
    pub plan: Option<TrialPlan>,
    /// The calibration call's seconds its plan was sized from.
    pub t1_s: Option<f64>,
    pub state: JobState,
    pub snapshot: Option<HistogramSnapshot>,
    pub retries: u32,
    /// When it started and how long it took, on the events' clock (`App::clock`).
    pub started_at: Option<f64>,
    pub took_s: Option<f64>,
    /// When its trials reported progress, to tell its time outside them (`measure::eta`).
    pub span: crate::measure::eta::TrialSpan,
    /// Effective core clock of its last witnessed trial (Hz), and whether it was in band.
    pub clock_hz: Option<(f64, bool)>,
    /// Its trial process running far past the plan, as the engine last said.
    pub overdue: Option<Overdue>,
}

/// A trial process running far past what its plan expects (`EngineEvent::TrialOverdue`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Overdue {
    pub trial: u32,
    pub trials: u32,
    pub elapsed: std::time::Duration,
    pub expected: std::time::Duration,
}

impl Job {
    pub fn new(key: JobKey, run: usize) -> Self {
        Self {
            key,
            run,
            plan: None,
            t1_s: None,
            state: JobState::Planned,
            snapshot: None,
            retries: 0,
            started_at: None,
            took_s: None,
            span: Default::default(),
            clock_hz: None,
            overdue: None,
        }
    }

    pub fn is_finished(&self) -> bool {
        matches!(self.state, JobState::Done(_) | JobState::Failed { .. })
    }

    /// Share of the job done (0 before it starts, 1 once finished; `measure::eta::share_done`,
    /// as every view counts it).
    fn fraction_done(&self) -> f64 {
        match &self.state {
            JobState::Planned => 0.0,
            JobState::Running {
                calls_done,
                calls_total,
                ..
            } => crate::measure::eta::share_done(*calls_done, *calls_total),
            _ => 1.0,
        }
    }
}

/// Labels in natural order (`uHash-512` < `uHash-768` < `uHash-1024`), as the report sorts
/// parameter sets: runs of digits compare as numbers.
pub fn natural_key(label: &str) -> Vec<(String, u64)> {
    let mut out = vec![];
    let mut text = String::new();
    let mut chars = label.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            let mut n = u64::from(c as u8 - b'0');
            while let Some(d) = chars.peek().and_then(|d| d.to_digit(10)) {
                n = n.saturating_mul(10).saturating_add(u64::from(d));
                chars.next();
            }
            out.push((std::mem::take(&mut text), n));
        } else {
            text.push(c);
        }
    }
    out.push((text, 0));
    out
}

/// One row of the results table: a finished job (done or failed).
#[derive(Debug, Clone)]
pub struct ResultRow<'a> {
    pub key: &'a JobKey,
    /// The run it belongs to (index into `App::runs`).
    pub run: usize,
    pub summary: Option<&'a JobSummary>,
    pub failure: Option<&'a str>,
    /// The end of the worker's stderr, for a failed job.
    pub stderr_tail: Option<&'a str>,
    /// Disturbed trials re-run while measuring it.
    pub retries: u32,
    /// Mean cycles over the pseudoXOF of the same width, length and counter measured in the
    /// row's own run (doubtful when either figure is).
    pub x_pseudoxof: Option<XofRatio>,
    /// A baseline job the row's run added for that ratio.
    pub reference: bool,
    /// Another candidate of the session has a job of the same label (the bundled `iccs` and
    /// the C `iccs-c` baselines): the row names its candidate.
    pub shared_label: bool,
}

/// A row's value in §4 column `column` (1…6) for sorting; None for a failed job's figures.
fn sort_value(r: &ResultRow, column: usize) -> Option<f64> {
    let s = r.summary;
    match column {
        1 => Some(r.key.input_bytes as f64),
        2 => s.map(|s| s.mean_cycles.unwrap_or(s.mean_seconds)),
        7 => r.x_pseudoxof.map(|x| x.value),
        3 => s
            .and_then(|s| s.mean_cycles)
            .map(|c| c / r.key.input_bytes.max(1) as f64),
        4 => s.map(|s| s.mean_seconds),
        5 => s.map(|s| s.throughput_mb_per_second),
        _ => s.map(|s| s.measurements as f64),
    }
}

impl App {
    /// The job of `key` in the newest run that has one.
    pub fn job(&self, key: &JobKey) -> Option<&Job> {
        self.jobs.iter().rev().find(|j| &j.key == key)
    }

    /// The job of `key` in the current run, created when new.
    pub(super) fn job_mut(&mut self, key: &JobKey) -> &mut Job {
        let run = self.current_run();
        let at = match self.jobs.iter().position(|j| &j.key == key && j.run == run) {
            Some(at) => at,
            None => {
                self.jobs.push(Job::new(key.clone(), run));
                self.jobs.len() - 1
            }
        };
        &mut self.jobs[at]
    }

    /// Finished jobs: the newest run first, earlier runs after it; within a run the report's
    /// order (catalog order of the instance, then length).
    pub fn result_rows(&self) -> Vec<ResultRow<'_>> {
        // Each run's rows divide by that run's own baseline figures, never another run's
        // (an older run's ratios must not change when a later run measures the baseline).
        let mut means: BTreeMap<usize, BaselineMeans> = BTreeMap::new();
        for run in self.jobs.iter().map(|j| j.run) {
            means.entry(run).or_insert_with(|| {
                BaselineMeans::from_jobs(
                    &self.xof_baseline,
                    self.jobs
                        .iter()
                        .filter(|j| j.run == run)
                        .filter_map(|j| match &j.state {
                            JobState::Done(s) => Some((&j.key, &**s)),
                            _ => None,
                        }),
                )
            });
        }
        let mut rows: Vec<ResultRow<'_>> =
            self.jobs
                .iter()
                .filter_map(|j| {
                    let (summary, failure, stderr_tail) = match &j.state {
                        JobState::Done(s) => (Some(&**s), None, None),
                        JobState::Failed {
                            reason,
                            stderr_tail,
                        } => (None, Some(reason.as_str()), Some(stderr_tail.as_str())),
                        _ => return None,
                    };
                    Some(ResultRow {
                        key: &j.key,
                        run: j.run,
                        summary,
                        failure,
                        stderr_tail,
                        retries: j.retries,
                        x_pseudoxof: summary
                            .zip(self.instance(&j.key.label))
                            .zip(means.get(&j.run))
                            .and_then(|((s, i), m)| m.ratio_of(i.digest_bits, &j.key, s)),
                        reference: j.key.candidate == self.xof_baseline.candidate
                            && self.reference_jobs.contains(&(j.run, j.key.label.clone())),
                        shared_label: self.jobs.iter().any(|o| {
                            o.key.label == j.key.label && o.key.candidate != j.key.candidate
                        }),
                    })
                })
                .collect();
        rows.sort_by_cached_key(|r| {
            (
                std::cmp::Reverse(r.run),
                self.label_rank(&r.key.label),
                natural_key(&r.key.label),
                r.key.input_bytes,
            )
        });
        if let Some((column, descending)) = self.results_sort {
            // Stable: rows equal in the column keep the report's order; runs stay grouped,
            // failed rows last.
            rows.sort_by(|a, b| {
                let by = if column == 0 {
                    let by = natural_key(&a.key.label).cmp(&natural_key(&b.key.label));
                    if descending { by.reverse() } else { by }
                } else {
                    match (sort_value(a, column), sort_value(b, column)) {
                        (Some(x), Some(y)) if descending => y.total_cmp(&x),
                        (Some(x), Some(y)) => x.total_cmp(&y),
                        (Some(_), None) => std::cmp::Ordering::Less,
                        (None, Some(_)) => std::cmp::Ordering::Greater,
                        (None, None) => std::cmp::Ordering::Equal,
                    }
                };
                b.run.cmp(&a.run).then(by)
            });
        }
        rows
    }

    /// How many runs have rows in the results.
    pub fn result_runs(&self) -> Vec<usize> {
        let mut runs: Vec<usize> = self
            .jobs
            .iter()
            .filter(|j| j.is_finished())
            .map(|j| j.run)
            .collect();
        runs.sort_unstable();
        runs.dedup();
        runs
    }

    /// The job the histogram shows.
    pub fn hist_job(&self) -> Option<&Job> {
        match &self.hist_view {
            HistView::Job(k) => self.job(k),
            HistView::RunJob(k, run) => self.jobs.iter().find(|j| &j.key == k && j.run == *run),
            HistView::Live => self
                .current
                .as_ref()
                .and_then(|k| self.job(k))
                .filter(|j| j.snapshot.is_some())
                .or_else(|| {
                    self.jobs
                        .iter()
                        .rev()
                        .filter(|j| j.snapshot.is_some())
                        .find(|j| j.is_finished())
                }),
        }
    }

    /// Jobs with a histogram, in results order, for stepping with `[` and `]`.
    pub fn hist_jobs(&self) -> Vec<&JobKey> {
        let mut keys: Vec<&JobKey> = self
            .jobs
            .iter()
            .filter(|j| j.snapshot.is_some())
            .map(|j| &j.key)
            .collect();
        keys.sort_by_key(|k| (self.label_rank(&k.label), k.input_bytes));
        keys.dedup();
        keys
    }

    /// Jobs of this run: done and total (instances × lengths).
    pub fn run_counts(&self) -> (usize, usize) {
        let total = self.run_labels.len() * self.run_lengths.len();
        let done = self
            .jobs
            .iter()
            .filter(|j| self.in_run(j) && j.is_finished())
            .count();
        (done, total.max(done))
    }

    fn in_run(&self, j: &Job) -> bool {
        !self.runs.is_empty()
            && j.run == self.runs.len() - 1
            && self.run_labels.contains(&j.key.label)
            && self.run_lengths.contains(&j.key.input_bytes)
    }

    /// Seconds left: the one ETA of every view (`measure::eta`) over this run's jobs, shared
    /// out over its measurement CPUs. None before any job is planned.
    pub fn eta_seconds(&self) -> Option<f64> {
        if !matches!(self.run, RunState::Running { .. }) {
            return None;
        }
        let jobs: Vec<crate::measure::eta::JobTime> = self
            .jobs
            .iter()
            .filter(|j| self.in_run(j))
            .map(|j| crate::measure::eta::JobTime {
                estimated_s: j.plan.map(|p| p.estimated_s),
                fraction_done: j.fraction_done(),
                // A running job has taken the seconds since it started so far.
                spent_s: match j.state {
                    JobState::Running { .. } => j.started_at.map(|t| (self.clock - t).max(0.0)),
                    _ => j.took_s.filter(|_| j.is_finished()),
                },
                started_at_s: j.started_at,
                outside_s: j.started_at.map(|t0| {
                    let ended = j.took_s.filter(|_| j.is_finished()).map(|s| t0 + s);
                    let planned = j.plan.map_or(0.0, |p| p.estimated_s);
                    j.span.outside_s(t0, ended, self.clock, planned)
                }),
                call: j
                    .plan
                    .zip(j.t1_s)
                    .map(|(p, t1)| crate::measure::eta::PlannedCall::new(&j.key, &p, t1)),
            })
            .collect();
        let (_, total) = self.run_counts();
        crate::measure::eta::seconds_left(&jobs, total, self.measurement_cpus().len())
    }

    /// A one-word state for the title bar.
    pub fn run_word(&self) -> String {
        match &self.run {
            RunState::Idle => "idle".into(),
            RunState::Running { cancelling: true } => "cancelling".into(),
            RunState::Running { .. } if self.current.is_some() => "measuring".into(),
            RunState::Running { .. } if self.read_only => "watching".into(),
            RunState::Running { .. } if self.cpu_wait.is_some() => {
                self.cpu_wait_word().unwrap_or_default()
            }
            RunState::Running { .. } => "preparing".into(),
            RunState::Kats { cancelling: true } => "cancelling KATs".into(),
            RunState::Kats { .. } => "checking KATs".into(),
            RunState::Refused { .. } => "refused".into(),
            RunState::Finished {
                cancelled: true, ..
            } => "cancelled".into(),
            RunState::Finished { failed, .. } if *failed > 0 => "finished with faults".into(),
            RunState::Finished { .. } => "finished".into(),
            RunState::Lost(_) => "writer gone".into(),
        }
    }
}
