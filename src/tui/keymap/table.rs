//! The built-in key table, in the order the help overlay lists it: one row per action and
//! scope, each with its default keys, its help line and its footer word. `[keys]` of the
//! config replaces a row's keys (see `rebind`); it never adds or removes rows.

use crossterm::event::KeyCode;

use super::{Key, Scope};
use crate::tui::action::Action;
use crate::tui::app::Panel;

/// One row of the built-in table.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub keys: &'static [Key],
    pub action: Action,
    pub scope: Scope,
    /// The full line in the help overlay.
    pub help: &'static str,
    /// The short word in the footer; None keeps the binding out of the footer.
    pub footer: Option<&'static str>,
}

const fn bind(
    keys: &'static [Key],
    action: Action,
    help: &'static str,
    footer: Option<&'static str>,
) -> Row {
    Row {
        keys,
        action,
        scope: Scope::Global,
        help,
        footer,
    }
}

const fn bind_in(
    panel: Panel,
    keys: &'static [Key],
    action: Action,
    help: &'static str,
    footer: Option<&'static str>,
) -> Row {
    Row {
        keys,
        action,
        scope: Scope::In(panel),
        help,
        footer,
    }
}

const fn bind_help(
    keys: &'static [Key],
    action: Action,
    help: &'static str,
    footer: Option<&'static str>,
) -> Row {
    Row {
        keys,
        action,
        scope: Scope::Help,
        help,
        footer,
    }
}

use Key::{Char, Code, Ctrl};

/// The table, in the order the help overlay lists it. Panel-scoped rows come before global
/// rows for the same key, so they win while their panel has the focus.
pub const DEFAULTS: &[Row] = &[
    bind_in(
        Panel::Catalog,
        &[Char(' '), Code(KeyCode::Enter)],
        Action::Toggle,
        "select / unselect the instance, or the whole candidate",
        Some("select"),
    ),
    bind_in(
        Panel::Results,
        &[Code(KeyCode::Enter)],
        Action::Confirm,
        "show the histogram of the result under the cursor",
        Some("histogram"),
    ),
    bind_in(
        Panel::Results,
        &[Char('b')],
        Action::PinBaseline,
        "pin this row's run as the baseline (again: unpin)",
        Some("baseline"),
    ),
    bind_in(
        Panel::Curve,
        &[Char(' ')],
        Action::ToggleSeries,
        "hide / show the series under the cursor (↑/↓ choose it)",
        Some("series"),
    ),
    bind_in(
        Panel::Curve,
        &[Code(KeyCode::Left)],
        Action::CurvePrev,
        "move the value readout to the previous / next length",
        Some("readout"),
    ),
    bind_in(
        Panel::Curve,
        &[Code(KeyCode::Right)],
        Action::CurveNext,
        "readout: next length",
        None,
    ),
    bind_in(
        Panel::Curve,
        &[Char('y')],
        Action::CurveScale,
        "log ⇄ linear y axis (log by default when the series differ by more than 10×)",
        Some("log/lin"),
    ),
    bind_in(
        Panel::Histogram,
        &[Char('y')],
        Action::HistLogScale,
        "log ⇄ linear count scale",
        Some("log/lin"),
    ),
    bind_in(
        Panel::Results,
        &[Char('o')],
        Action::SortResults,
        "sort by the next column / reverse the order",
        Some("sort"),
    ),
    bind_in(
        Panel::Results,
        &[Char('O')],
        Action::ReverseSort,
        "reverse the order",
        None,
    ),
    bind_in(
        Panel::History,
        &[Char('b')],
        Action::PinBuild,
        "make the highlighted build the baseline of the Δ column (again: unpin)",
        Some("Δ baseline"),
    ),
    bind(
        &[Char('H')],
        Action::ShowHistory,
        "history: the tuning journal's builds of the instance under the cursor (↑/↓ pick one)",
        None,
    ),
    bind(
        &[Char('P')],
        Action::ShowProfile,
        "Profile panel: cost per function/line (exact), Δ after a rebuild",
        None,
    ),
    bind(
        &[Char('e')],
        Action::Export,
        "export the visible results (Markdown and CSV files in the run folder)",
        None,
    ),
    bind(
        &[Char('s')],
        Action::Start,
        "start: KAT → host check → measure the selection",
        Some("start"),
    ),
    bind(
        &[Char('L')],
        Action::StartLayouts,
        "start, also timing each job at 8 buffer layouts (run --layouts)",
        None,
    ),
    bind(
        &[Char('i')],
        Action::ToggleCounter,
        "counter of the next run: cycles → instructions (exact, in valgrind, a cycle estimate) → hw-instructions (PMU)",
        None,
    ),
    bind(
        &[Char('A')],
        Action::StartAnyway,
        "measure anyway: failed host checks, KAT not passed (stored with the run)",
        Some("anyway"),
    ),
    bind(
        &[Char('K')],
        Action::RunKats,
        "run only the KATs of the selection (nothing measured)",
        None,
    ),
    bind(
        &[Char('p')],
        Action::EditProfile,
        "--src: a flag profile (guide, harness-default, [profiles]) or -flags for the selected; s rebuilds",
        None,
    ),
    bind(
        &[Char('=')],
        Action::CompareLive,
        "A/B: the two selected instances interleaved, trial by trial; B/A with its 95 % CI",
        None,
    ),
    bind(
        &[Char('B')],
        Action::CompareBuilds,
        "--src: A/B of builds: the build before the last rebuild (A) against the new one (B), interleaved",
        None,
    ),
    bind(
        &[Char('w')],
        Action::Sweep,
        "sweep the instance under the cursor: block size, cost per block, fit on the curve",
        None,
    ),
    bind(
        &[Char('c')],
        Action::Cancel,
        "cancel the run or the profile (the trial in flight is dropped)",
        Some("cancel"),
    ),
    bind(
        &[Key::Digits],
        Action::ToggleLength(0),
        "toggle message length S1–S8 (32 B … 64 KiB)",
        Some("lengths"),
    ),
    bind(
        &[Char('l')],
        Action::CustomLength,
        "add (or remove) a custom message length in bytes",
        None,
    ),
    bind(
        &[Char('/')],
        Action::Filter,
        "filter the catalog by typing (Enter keeps it, Esc clears)",
        Some("filter"),
    ),
    bind(
        &[Char('r')],
        Action::RecheckHost,
        "run the host checks again",
        Some("recheck"),
    ),
    bind(
        &[Char('T')],
        Action::Tune,
        "host tuning: show the plan, T again applies (root), T restores",
        None,
    ),
    bind(
        &[Char('<')],
        Action::CpuPrev,
        "measurement CPU: previous / next",
        None,
    ),
    bind(&[Char('>')], Action::CpuNext, "measurement CPU: next", None),
    bind(
        &[Char('+')],
        Action::CpuLane,
        "measure on this CPU too / not (several CPUs measure side by side)",
        None,
    ),
    bind(
        &[Char('[')],
        Action::HistPrev,
        "histogram: previous / next job",
        Some("job"),
    ),
    bind(&[Char(']')], Action::HistNext, "histogram: next job", None),
    bind(
        &[Char('f')],
        Action::HistLive,
        "histogram: follow the running job",
        None,
    ),
    bind(
        &[Char('v')],
        Action::SwapChart,
        "histogram ⇄ curve (when only one fits)",
        None,
    ),
    bind(
        &[Code(KeyCode::Tab)],
        Action::FocusNext,
        "focus the next / previous panel (or click it)",
        Some("panel"),
    ),
    bind(
        &[Code(KeyCode::BackTab)],
        Action::FocusPrev,
        "focus the previous panel",
        None,
    ),
    bind(
        &[Code(KeyCode::Up), Char('k')],
        Action::Up,
        "move up (or scroll the mouse wheel)",
        None,
    ),
    bind(
        &[Code(KeyCode::Down), Char('j')],
        Action::Down,
        "move down",
        None,
    ),
    bind(&[Code(KeyCode::Enter)], Action::Confirm, "confirm", None),
    bind(
        &[Char('?')],
        Action::Help,
        "show / hide this help",
        Some("help"),
    ),
    bind_help(
        &[Code(KeyCode::PageUp)],
        Action::HelpPageUp,
        "scroll a page up / down (↑/↓ a line)",
        Some("page"),
    ),
    bind_help(
        &[Code(KeyCode::PageDown)],
        Action::HelpPageDown,
        "scroll a page down",
        None,
    ),
    bind_help(
        &[Code(KeyCode::Home)],
        Action::HelpTop,
        "to the first / last line",
        Some("first/last"),
    ),
    bind_help(
        &[Code(KeyCode::End)],
        Action::HelpBottom,
        "to the last line",
        None,
    ),
    bind_help(
        &[Char('/')],
        Action::HelpFilter,
        "show only the lines with the typed text (Enter keeps it, Esc clears it)",
        Some("filter"),
    ),
    bind(
        &[Code(KeyCode::Esc)],
        Action::Back,
        "close help / filter / input, else leave (asks first during a run)",
        None,
    ),
    bind(
        &[Char('q')],
        Action::Quit,
        "leave (asks first during a run; in the help: close it); the results table is printed",
        Some("quit"),
    ),
    bind(
        &[Ctrl('c')],
        Action::ForceQuit,
        "leave at once, from anywhere",
        None,
    ),
];
