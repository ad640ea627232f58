//! What the campaign tells its frontends: typed events, emitted at a bounded rate (trial
//! progress at most every `PROGRESS_INTERVAL`, never once per call). The TUI and the headless
//! CLI consume the same stream; a run's journal stores the same events as JSON lines.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hdrhistogram::Histogram;

use super::{JobFailure, JobKey, JobSummary};
use crate::kat::KatStatus;
use crate::measure::plan::TrialPlan;
use crate::measure::stats::PerCall;

/// Minimum spacing of progress events for one job.
pub(crate) const PROGRESS_INTERVAL: Duration = Duration::from_millis(66);

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

#[derive(Debug, Clone)]
pub enum EngineEvent {
    RunStarted {
        run_dir: PathBuf,
        labels: Vec<String>,
        lengths: Vec<u64>,
        /// The measurement CPUs, one lane each.
        cpus: Vec<usize>,
        /// Labels of the baseline instances this run added for `× pseudoXOF` (reference
        /// jobs), so a frontend marks the run's own rows, not every row of the label.
        reference_jobs: Vec<String>,
    },
    /// The host check of `cpu` reused the clock probe and tool versions measured at
    /// `checked_utc` (the host cache: their inputs unchanged, young enough); the environment
    /// block of the run's records says so too.
    HostReused {
        cpu: usize,
        checked_utc: String,
    },
    /// The run queues for CPU `cpu`, which another process holds (`holder`: its pid, command
    /// line and run, as its lock note says; the other process wrote it, so it is shown
    /// escaped), for at most `limit` (`CYCLESCOPE_LOCK_WAIT`). Sent before the run has a
    /// folder, so never journaled.
    CpuWaiting {
        cpu: usize,
        holder: String,
        limit: Duration,
    },
    /// The CPU the run queued for came free after `waited`: the run takes it.
    CpuFree {
        cpu: usize,
        waited: Duration,
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
        status: KatStatus,
        detail: String,
        log: Option<PathBuf>,
        /// The conformance check that failed (with NONCONFORM), which tables name.
        check: Option<super::Check>,
        /// The findings that do not block (`conform::Grade::OutOfDomain`), shown beside the
        /// verdict.
        findings: Vec<super::CheckResult>,
    },
    JobPlanned {
        job: JobKey,
        plan: TrialPlan,
        t1_s: f64,
    },
    JobStarted {
        job: JobKey,
        /// The lane's CPU (absent in journals from before lanes).
        cpu: Option<usize>,
    },
    TrialProgress {
        job: JobKey,
        /// 1-based number of the trial running (the trials whose loops have ended, plus one,
        /// at most `trials`).
        trial: u32,
        /// The job's trials in all, over all its processes.
        trials: u32,
        /// The whole job's calls so far: those of the kept processes' trials and of the
        /// running process's trials whose loops have ended (none of the running trial's).
        calls_done: u64,
        /// The whole job's calls: `trials` × calls per trial (`measure::eta::share_done`).
        calls_total: u64,
        snapshot: HistogramSnapshot,
    },
    /// The core clock a trial ran at, from its witness pair (only where the hardware has one).
    TrialClock {
        job: JobKey,
        /// 1-based trial number within the job.
        trial: u32,
        effective_hz: f64,
        /// False when the clock left the host's band (the trial is run again).
        in_band: bool,
    },
    /// A trial process still running far past what its plan expects of it, sent about once a
    /// second while it runs (until it ends or its deadline kills it).
    TrialOverdue {
        job: JobKey,
        /// 1-based trial number.
        trial: u32,
        trials: u32,
        /// Since the process started.
        elapsed: Duration,
        /// What the plan expects of the whole process.
        expected: Duration,
    },
    /// A trial re-run because the clock was slow during it (disturbance).
    TrialRetried {
        job: JobKey,
        trial: u32,
        reason: String,
        /// How long the discarded process's trials waited for the CPU, where measured.
        cpu_wait: Option<super::RunQueueWait>,
    },
    JobFinished {
        job: JobKey,
        summary: Box<JobSummary>,
        record: PathBuf,
        snapshot: Option<HistogramSnapshot>,
    },
    JobFailed {
        job: JobKey,
        reason: JobFailure,
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
