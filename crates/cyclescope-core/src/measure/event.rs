//! What the engine tells its frontends: typed events, emitted at a bounded rate (trial
//! progress at most every `PROGRESS_INTERVAL`, never once per call). The TUI and the headless
//! CLI consume the same stream; a run's journal stores the same events as JSON lines.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::plan::TrialPlan;
use super::stats::PerCall;

/// Minimum spacing of progress events for one job.
pub(crate) const PROGRESS_INTERVAL: Duration = Duration::from_millis(66);

/// One measurement job: an instance at one message length.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct JobKey {
    pub candidate: String,
    pub label: String,
    pub input_bytes: u64,
}

impl std::fmt::Display for JobKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} @ {}",
            self.label,
            crate::format::size(self.input_bytes)
        )
    }
}

/// The per-call histogram of a job so far, shared without copying samples.
#[derive(Debug, Clone)]
pub struct HistogramSnapshot {
    pub histogram: Arc<Histogram<u64>>,
    pub per_call: Option<PerCall>,
    /// Σcycles/Σcalls of the loop counter over the trials finished so far.
    pub loop_mean_cycles: Option<f64>,
    /// Timer overhead subtracted from every per-call sample, in ticks.
    pub timer_overhead_ticks: f64,
    /// What the per-call ticks are (e.g. `tsc (reference cycles)`).
    pub per_call_source: String,
}

/// The figures of a finished job, as the results table shows them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobSummary {
    pub status: String,
    pub kat: String,
    pub mean_cycles: Option<f64>,
    pub mean_seconds: f64,
    pub throughput_mb_per_second: f64,
    pub measurements: u64,
    pub trials: u32,
    pub iterations_per_trial: u64,
    pub cycle_source: String,
    pub per_call: Option<PerCall>,
    pub disturbed_retries: u32,
    /// The 95 % confidence half-width of the mean of trial means, relative to it (None with
    /// fewer than two trials, or for a harness record).
    #[serde(default)]
    pub ci95_relative: Option<f64>,
    /// Why the figure is not marked clean (`doubt::doubts`); empty when it is.
    #[serde(default)]
    pub doubts: Vec<super::doubt::Doubt>,
}

#[derive(Debug, Clone)]
pub enum EngineEvent {
    RunStarted {
        run_dir: PathBuf,
        labels: Vec<String>,
        lengths: Vec<u64>,
        cpu: usize,
    },
    /// Host problems found before measuring (stored with the run when allowed).
    HostProblems {
        problems: Vec<String>,
    },
    KatStarted {
        label: String,
    },
    KatProgress {
        label: String,
        file: String,
        done: u64,
        total: u64,
    },
    KatFinished {
        label: String,
        status: String,
        detail: String,
        log: Option<PathBuf>,
    },
    JobPlanned {
        job: JobKey,
        plan: TrialPlan,
        t1_s: f64,
    },
    JobStarted {
        job: JobKey,
    },
    TrialProgress {
        job: JobKey,
        /// 1-based trial number.
        trial: u32,
        trials: u32,
        calls_done: u64,
        calls_total: u64,
        snapshot: HistogramSnapshot,
    },
    /// A trial re-run because the clock was slow during it (disturbance).
    TrialRetried {
        job: JobKey,
        trial: u32,
        reason: String,
    },
    JobFinished {
        job: JobKey,
        summary: Box<JobSummary>,
        record: PathBuf,
        snapshot: Option<HistogramSnapshot>,
    },
    JobFailed {
        job: JobKey,
        reason: String,
        stderr_tail: String,
        record: Option<PathBuf>,
    },
    /// Something the operator should know that does not stop the run.
    Warning {
        message: String,
    },
    RunFinished {
        cancelled: bool,
        wall: Duration,
        finished: usize,
        failed: usize,
    },
}
