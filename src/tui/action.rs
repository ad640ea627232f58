//! What the operator can ask the workbench to do, independent of which key asked. The key
//! table (`keymap`) maps keys to these; `App::act` carries them out. Actions never touch the
//! terminal or the engine directly: starting or cancelling a run is returned as an `Effect`.

/// Everything a key (or a mouse gesture) can ask for. `EnumIter` lists every variant (with
/// `ToggleLength(0)` standing for all eight lengths), so the keymap test covers an action the
/// moment it is added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::EnumIter, strum::IntoStaticStr)]
#[strum(serialize_all = "kebab-case")]
pub enum Action {
    /// Leave the workbench (q, Esc when nothing is open).
    Quit,
    /// Leave at once, whatever is open (Ctrl-C).
    ForceQuit,
    /// Show or hide the key help overlay.
    Help,
    /// Close what is open (help, filter, length input), else leave.
    Back,
    FocusNext,
    FocusPrev,
    Up,
    Down,
    /// Select or unselect the instance (or the whole candidate) under the cursor.
    Toggle,
    /// Enter: toggle in the catalog, show a result's histogram in the results table.
    Confirm,
    /// Start typing a filter for the catalog.
    Filter,
    /// Toggle the guide length S1…S8 (0-based index).
    ToggleLength(u8),
    /// Type a custom message length.
    CustomLength,
    /// Start a run on the selected instances and lengths.
    Start,
    /// Start even though host checks failed: the operator's consent for this session; the
    /// problems are stored with the run (the headless `--allow-unfixed-host`).
    StartAnyway,
    /// Cancel the running run (the current trial is abandoned).
    Cancel,
    /// Run the host checks again.
    RecheckHost,
    /// Host tuning: show the plan; again: apply it (root); again: restore.
    Tune,
    /// Show the previous / next job's histogram.
    HistPrev,
    HistNext,
    /// Follow the running job in the histogram again.
    HistLive,
    /// Histogram counts on a log ⇄ linear scale.
    HistLogScale,
    /// Change the measurement CPU for the next run.
    CpuPrev,
    CpuNext,
    /// Add the shown CPU to the measurement CPUs, or take it out (lanes side by side).
    CpuLane,
    /// Switch between histogram and curve where only one fits.
    SwapChart,
    /// Run only the KATs of the selection.
    RunKats,
    /// Choose a flag profile or type compiler flags for the selected source instances.
    EditProfile,
    /// Measure the two selected instances interleaved, trial by trial (`compare --live`).
    CompareLive,
    /// Measure the instance's build before its last rebuild against the new one, interleaved.
    CompareBuilds,
    /// Pin the run of the result under the cursor as the baseline (again: unpin).
    PinBaseline,
    /// Sort the results by the next column (after the last: the report's order).
    SortResults,
    /// Reverse the results' sort.
    ReverseSort,
    /// Write the visible results to Markdown and CSV files.
    Export,
    /// Curve: log ⇄ linear y axis.
    CurveScale,
    /// Curve: hide / show the series under the cursor.
    ToggleSeries,
    /// Curve: move the readout to the previous / next length.
    CurvePrev,
    CurveNext,
    /// Sweep the lengths of the instance under the cursor: its cost model on the curve.
    Sweep,
    /// Start, timing each job at the buffer layouts of `run --layouts` too.
    StartLayouts,
    /// The counter of the next run: cycles → exact instructions under valgrind → hardware
    /// instructions → cycles.
    ToggleCounter,
    /// Show the History panel: the tuning journal's builds of the instance under the cursor.
    ShowHistory,
    /// History: make the highlighted build the baseline of the Δ column (again: unpin).
    PinBuild,
    /// Show the Profile panel: where the cost of the instance under the cursor goes, per
    /// function and source line, from profile trials of its own.
    ShowProfile,
    /// Help overlay: scroll a page up / down.
    HelpPageUp,
    HelpPageDown,
    /// Help overlay: to the first / last line.
    HelpTop,
    HelpBottom,
    /// Help overlay: type text that narrows the lines shown.
    HelpFilter,
}

impl Action {
    /// Whether the action changes what is measured (refused while only watching).
    pub fn mutates_run(self) -> bool {
        matches!(
            self,
            Action::Toggle
                | Action::ToggleLength(_)
                | Action::CustomLength
                | Action::Start
                | Action::StartLayouts
                | Action::ToggleCounter
                | Action::StartAnyway
                | Action::Cancel
                | Action::RecheckHost
                | Action::Tune
                | Action::CpuPrev
                | Action::CpuNext
                | Action::CpuLane
                | Action::RunKats
                | Action::CompareLive
                | Action::CompareBuilds
                | Action::EditProfile
                | Action::Sweep
                | Action::ShowProfile
        )
    }
}

/// What the event loop must do after an action: the app itself never spawns anything.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Quit,
    Start(super::app::RunSpec),
    Cancel,
    RecheckHost {
        cpu: usize,
    },
    /// The next step of host tuning for this CPU (plan, apply, restore).
    Tune {
        cpu: usize,
    },
    /// Run the KATs of these instances, nothing measured.
    RunKats(Vec<crate::catalog::Instance>),
    /// Sweep the lengths of the spec's instance and fit its cost model.
    Sweep(super::app::RunSpec),
    /// Write the visible results to files.
    Export,
    /// Profile an instance at lengths (the Profile panel's job).
    Profile(crate::tui::profile_job::ProfileSpec),
    /// Stop the profile job.
    CancelProfile,
}
