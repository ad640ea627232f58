//! The workbench's whole state, changed in exactly two ways: `apply` folds one engine event in
//! (`reduce`), and `on_key`/`on_mouse`/`act` carry out the operator's actions (`input`), which
//! may return an `Effect` for the event loop to perform. Drawing reads it and never changes it,
//! so any screen can be rebuilt by feeding a fixed list of events (see `demo`). No I/O here.

mod ab_builds;
mod cpu_wait;
mod delta;
mod fresh;
mod help_keys;
mod history;
mod input;
mod jobs;
mod launch;
mod log_host;
mod profile;
mod reduce;
mod session;
mod tree;
mod tune;

pub use cpu_wait::CpuWait;
pub use delta::Delta;
pub use help_keys::HelpView;
#[cfg(test)]
pub use history::HistoryView;
pub use jobs::{CurveSeries, Job, JobState, Overdue, ResultRow};
pub use profile::{FunctionRow, LengthState, Move, ProfileView, function_rows};
pub use session::UnfinishedRun;
pub use tree::TreeRow;
pub use tune::Sources;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::time::Duration;

use crate::catalog::{Candidate, GUIDE_LENGTHS, Instance};
use crate::host::Status as CheckStatus;
use crate::kat::KatStatus;
use crate::measure::Planning;
use crate::vocabulary::JobKey;

/// The panels, in focus order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Panel {
    Catalog,
    Host,
    Histogram,
    Curve,
    Results,
    Progress,
    /// The tuning journal's builds of one instance (in the curve's place while shown).
    History,
    /// Where the cost of one instance goes (in the curve's place while shown).
    Profile,
}

impl Panel {
    pub const ALL: [Panel; 8] = [
        Panel::Catalog,
        Panel::Host,
        Panel::Histogram,
        Panel::Curve,
        Panel::Results,
        Panel::Progress,
        Panel::History,
        Panel::Profile,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Panel::Catalog => "Catalog",
            Panel::Host => "Host",
            Panel::Histogram => "Histogram",
            Panel::Curve => "Curve",
            Panel::Results => "Results",
            Panel::Progress => "Progress",
            Panel::History => "History",
            Panel::Profile => "Profile",
        }
    }
}

/// What keys go to: the table, or a text field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    Normal,
    Help,
    /// Typing into the catalog filter (`App::filter`).
    Filter,
    /// Typing a custom message length.
    LengthInput(String),
    /// Typing a flag profile or compiler flags for the selected source instances (`p`).
    ProfileInput(String),
    /// Leaving was asked for during a run: `y` leaves, any other key stays.
    ConfirmQuit,
}

/// Where the KAT of one instance stands in this session; a finished one carries the core's
/// status and what the checker said.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum KatState {
    #[default]
    Unknown,
    Running {
        done: u64,
        total: u64,
    },
    Done {
        status: KatStatus,
        detail: String,
        /// The conformance check that failed (NONCONFORM): the KAT column names it.
        check: Option<crate::conform::Check>,
        /// Findings that do not block: the KAT column marks a pass that has them, the detail
        /// line says what they are.
        findings: Vec<crate::conform::CheckResult>,
    },
}

impl KatState {
    pub fn passed(&self) -> bool {
        matches!(self, KatState::Done { status, .. } if status.is_pass())
    }
}

/// One host check as the panel shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct HostRow {
    /// The check this row shows (None for a note in its place, e.g. "checked by the writer").
    pub check: Option<crate::host::HostCheck>,
    pub name: String,
    pub status: CheckStatus,
    pub value: String,
    /// How to fix it (shown for the selected check).
    pub hint: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum RunState {
    Idle,
    Running {
        cancelling: bool,
    },
    /// Only the KATs of the selection (`K`), nothing measured.
    Kats {
        cancelling: bool,
    },
    /// The engine would not start the run: failed host checks (`host`, where `A` applies)
    /// or another reason, shown as is.
    Refused {
        reason: String,
        host: bool,
    },
    Finished {
        cancelled: bool,
        wall: Duration,
        finished: usize,
        failed: usize,
    },
    /// Watching a run that another process writes; `Some(reason)` once it died.
    Lost(String),
}

/// Which job the histogram shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HistView {
    /// The running job, else the last one with a histogram.
    Live,
    Job(JobKey),
    /// A result row's job in its own run (an earlier run's figure, not the newest).
    RunJob(JobKey, usize),
}

/// Which chart gets the shared slot on a small screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chart {
    Histogram,
    Curve,
    /// The History panel, in the curve's place.
    History,
    /// The Profile panel, in the curve's place.
    Profile,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    Info,
    Good,
    Warn,
    Bad,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LogLine {
    pub level: LogLevel,
    pub text: String,
}

/// Everything the engine needs to start a run, as the workbench chose it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    pub instances: Vec<Instance>,
    pub lengths: Vec<u64>,
    pub cpu: usize,
    /// Every measurement CPU (`cpu` among them), one lane each.
    pub cpus: Vec<usize>,
    pub planning: Planning,
    /// KATs passed in this session, label → that run's KAT log: the engine copies the log
    /// instead of running the KAT again.
    pub kat_passed: BTreeMap<String, PathBuf>,
    /// Measure even if the host checks fail (`A`, or `--allow-unfixed-host`).
    pub allow_unfixed_host: bool,
    /// Time instances whose KAT did not pass (`A`; the records are flagged).
    pub allow_kat_fail: bool,
    /// Pairs per length of an interleaved A/B comparison of the two instances (`=`); None
    /// for an ordinary run.
    pub interleaved_pairs: Option<u32>,
    /// Instances to rebuild from sources with these flags before the run (`p`, then `s`).
    pub rebuild: Vec<(String, crate::build::ProfileChoice)>,
    /// Baseline instances the run may add as reference jobs (for "× pseudoXOF").
    pub reference_pool: Vec<Instance>,
    /// Time each job at the buffer layouts too (`L`, as `run --layouts`).
    pub layouts: bool,
    /// What each job counts (`i` steps: cycles → exact instructions under valgrind →
    /// hardware instructions).
    pub counter: crate::counter::RunCounter,
}

/// Bounded log so a long campaign cannot grow the UI's memory.
pub const LOG_CAPACITY: usize = 500;

pub struct App {
    pub candidates: Vec<Candidate>,
    pub selected: BTreeSet<String>,
    pub cursor: usize,
    pub filter: String,
    pub lengths: Vec<u64>,
    pub kat: HashMap<String, KatState>,
    /// The log of each KAT that passed in this session.
    pub kat_logs: HashMap<String, PathBuf>,
    pub host: Vec<HostRow>,
    pub host_cursor: usize,
    pub cpu: usize,
    /// CPUs added with `+` to measure side by side (empty: `cpu` alone).
    pub lanes: std::collections::BTreeSet<usize>,
    pub cpus_online: usize,
    pub planning: Planning,
    pub run: RunState,
    pub run_dir: Option<PathBuf>,
    pub run_labels: Vec<String>,
    pub run_lengths: Vec<u64>,
    pub jobs: Vec<Job>,
    pub current: Option<JobKey>,
    /// The run queues for a CPU another process holds (`cpu_wait`).
    pub cpu_wait: Option<CpuWait>,
    /// How long this run's trials, kept or run again, waited for their CPU.
    pub run_queue: crate::vocabulary::RunQueueWait,
    pub hist_view: HistView,
    pub results_cursor: usize,
    pub log: Vec<LogLine>,
    /// Lines scrolled back from the newest log line (0: the log follows what arrives).
    pub log_back: usize,
    /// Lines that arrived below the view while scrolled back and are not seen yet: the
    /// border says `↓ N new` until the view is back at the bottom.
    pub log_unseen: usize,
    pub focus: Panel,
    pub mode: Mode,
    pub chart: Chart,
    /// Watching another process's run: nothing that changes the run is offered.
    pub read_only: bool,
    /// The operator agreed to measure on this host despite failed checks (`A`).
    pub allow_unfixed_host: bool,
    /// The operator agreed to time instances whose KAT did not pass (`A`).
    pub allow_kat_fail: bool,
    /// What the next run counts (`i`): cycles, exact instructions under valgrind, or the
    /// PMU's instructions.
    pub counter: crate::counter::RunCounter,
    /// Run folders seen this session, oldest first; a job's `run` indexes this, and the
    /// last one is the current run.
    pub runs: Vec<PathBuf>,
    /// The run pinned as the baseline (`b` in Results), an index into `runs`.
    pub baseline: Option<usize>,
    /// The results' sort: a §4 column and whether descending (None: the report's order).
    pub results_sort: Option<(usize, bool)>,
    /// The candidate "× pseudoXOF" divides by (the settings' `baseline`).
    pub xof_baseline: crate::baseline::Baseline,
    /// (run, label) of the baseline jobs each run added for `× pseudoXOF`, as the engine
    /// announced them: the `(ref)` marks follow the run, not the label.
    pub reference_jobs: BTreeSet<(usize, String)>,
    /// The interleaved A/B results of the session, by run: rows of their own in Results,
    /// tables in the printout and the export.
    pub ab_results: Vec<(usize, crate::campaign::ab_result::AbResult)>,
    /// The curve's y axis: Some(true) log, Some(false) linear, None chosen by the data.
    pub curve_log: Option<bool>,
    /// The histogram's counts on a log scale (`y` in the histogram panel).
    pub hist_log: bool,
    /// Curves the operator hid (labels).
    pub curve_hidden: BTreeSet<String>,
    /// The curve series under the cursor (↑/↓ in the curve) and the length the readout
    /// shows (←/→), as indices into the series and their lengths.
    pub curve_series: usize,
    pub curve_length: usize,
    /// Whether the engine announced the run being prepared (its host gate passed).
    pub run_announced: bool,
    /// The last run asked for, to start again when an early `A` meets a refusal.
    pub last_spec: Option<RunSpec>,
    /// Instances built from a submission's sources (`--src`) and their flags.
    pub sources: Option<Sources>,
    /// An effect the state asks for on its own (restarting after an early `A`), taken by
    /// the event loop.
    pub pending: Option<crate::tui::action::Effect>,
    /// Seconds on the events' clock (the session's, or the journal's while watching), set
    /// before each event; jobs are timed by it for the ETA.
    pub clock: f64,
    /// Set by every change; the event loop redraws only when it is set.
    pub dirty: bool,
    /// Cost models of the length sweeps of this session (`w`), newest per instance.
    pub sweeps: Vec<crate::sweep::InstanceSweep>,
    /// The key bindings in force (the built-in table with the config's `[keys]`).
    pub keys: crate::tui::keymap::Keymap,
    /// The tuning journal (None: off) and the History panel's view of it.
    pub journal: Option<PathBuf>,
    pub history: history::HistoryView,
    /// A journal build pinned as the Δ baseline (`b` in History).
    pub pinned_build: Option<history::PinnedBuild>,
    /// The Profile panel: where the cost of one instance goes, and how it moved.
    pub profile: ProfileView,
    /// Runs of this session cancelled before all their jobs finished (`c`), oldest first:
    /// the printout after leaving says how to resume each, not only the last one.
    pub unfinished_runs: Vec<UnfinishedRun>,
    /// Where the help overlay is scrolled and what its filter keeps (while `Mode::Help`).
    pub help: HelpView,
}

impl App {
    pub fn instance(&self, label: &str) -> Option<&Instance> {
        self.candidates
            .iter()
            .flat_map(|c| c.instances.iter())
            .find(|i| i.label == label)
    }

    /// Catalog order of a label (unknown labels sort last), for stable tables.
    pub fn label_rank(&self, label: &str) -> usize {
        self.candidates
            .iter()
            .flat_map(|c| c.instances.iter())
            .position(|i| i.label == label)
            .unwrap_or(usize::MAX)
    }

    pub fn kat_state(&self, label: &str) -> &KatState {
        static UNKNOWN: KatState = KatState::Unknown;
        self.kat.get(label).unwrap_or(&UNKNOWN)
    }

    /// A run or a KAT-only job is in flight (nothing else may start).
    pub fn is_running(&self) -> bool {
        matches!(self.run, RunState::Running { .. } | RunState::Kats { .. })
    }

    /// Whether the lengths include guide length `i` (S1 = 0).
    pub fn has_guide_length(&self, i: usize) -> bool {
        GUIDE_LENGTHS
            .get(i)
            .is_some_and(|l| self.lengths.contains(l))
    }

    /// Custom lengths: chosen lengths that are not guide lengths.
    pub fn custom_lengths(&self) -> impl Iterator<Item = u64> + '_ {
        self.lengths
            .iter()
            .copied()
            .filter(|l| !GUIDE_LENGTHS.contains(l))
    }
}

#[cfg(test)]
mod flow_tests;
#[cfg(test)]
mod profile_tests;
#[cfg(test)]
mod tests;
