//! The one key table: key → action → help text. It drives dispatch (`lookup`), the footer
//! hints (`Binding::footer`) and the `?` overlay, so a key cannot work without being
//! documented, nor be documented without working. Text typed into the filter or the length
//! field never reaches this table (see `App::on_key`).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::action::Action;
use super::app::Panel;

/// A key as the table names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Char(char),
    Ctrl(char),
    Code(KeyCode),
    /// `1`…`8`, one per guide length.
    Digits,
}

impl Key {
    /// The action this key yields for `ev`, if it matches (digits carry their index).
    fn matches(self, ev: &KeyEvent) -> Option<Option<u8>> {
        let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
        match (self, ev.code) {
            (Key::Ctrl(c), KeyCode::Char(k)) if ctrl && k.eq_ignore_ascii_case(&c) => Some(None),
            (Key::Char(c), KeyCode::Char(k)) if !ctrl && k == c => Some(None),
            (Key::Code(c), k) if !ctrl && k == c => Some(None),
            (Key::Digits, KeyCode::Char(d @ '1'..='8')) if !ctrl => Some(Some(d as u8 - b'1')),
            _ => None,
        }
    }

    /// How the help and the footer spell the key.
    pub fn text(self) -> String {
        match self {
            Key::Char(' ') => "Space".into(),
            Key::Char(c) => c.to_string(),
            Key::Ctrl(c) => format!("Ctrl-{}", c.to_ascii_uppercase()),
            Key::Digits => "1–8".into(),
            Key::Code(KeyCode::Tab) => "Tab".into(),
            Key::Code(KeyCode::BackTab) => "S-Tab".into(),
            Key::Code(KeyCode::Up) => "↑".into(),
            Key::Code(KeyCode::Down) => "↓".into(),
            Key::Code(KeyCode::Left) => "←".into(),
            Key::Code(KeyCode::Right) => "→".into(),
            Key::Code(KeyCode::Esc) => "Esc".into(),
            Key::Code(KeyCode::Enter) => "Enter".into(),
            Key::Code(other) => format!("{other:?}"),
        }
    }
}

/// Where a binding applies: everywhere, or only while a panel has the focus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Global,
    In(Panel),
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    pub keys: &'static [Key],
    pub action: Action,
    pub scope: Scope,
    /// The full line in the help overlay.
    pub help: &'static str,
    /// The short word in the footer; None keeps the binding out of the footer.
    pub footer: Option<&'static str>,
}

impl Binding {
    pub fn keys_text(&self) -> String {
        self.keys
            .iter()
            .map(|k| k.text())
            .collect::<Vec<_>>()
            .join("/")
    }
}

const fn bind(
    keys: &'static [Key],
    action: Action,
    help: &'static str,
    footer: Option<&'static str>,
) -> Binding {
    Binding {
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
) -> Binding {
    Binding {
        keys,
        action,
        scope: Scope::In(panel),
        help,
        footer,
    }
}

use Key::{Char, Code, Ctrl};

/// The table, in the order the help overlay lists it. Panel-scoped rows come before global
/// rows for the same key, so they win while their panel has the focus.
pub const BINDINGS: &[Binding] = &[
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
        &[Code(KeyCode::Left), Code(KeyCode::Right)],
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
        &[Char('o'), Char('O')],
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
        "counter of the next run: cycles ⇄ instructions (exact, under valgrind, with a cache-simulated cycle estimate)",
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
        &[Char('w')],
        Action::Sweep,
        "sweep the instance under the cursor: block size, cost per block, fit on the curve",
        None,
    ),
    bind(
        &[Char('c')],
        Action::Cancel,
        "cancel the run (the trial in flight is dropped, records stay)",
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
        &[Char('<'), Char('>')],
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
        &[Char('['), Char(']')],
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
        &[Code(KeyCode::Tab), Code(KeyCode::BackTab)],
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
    bind(
        &[Code(KeyCode::Esc)],
        Action::Back,
        "close help / filter / input, else leave (asks first during a run)",
        None,
    ),
    bind(
        &[Char('q')],
        Action::Quit,
        "leave (asks first during a run); the results table is printed",
        Some("quit"),
    ),
    bind(
        &[Ctrl('c')],
        Action::ForceQuit,
        "leave at once, from anywhere",
        None,
    ),
];

/// The action `ev` asks for while `focus` has the focus.
pub fn lookup(ev: &KeyEvent, focus: Panel) -> Option<Action> {
    let scoped = BINDINGS
        .iter()
        .filter(|b| b.scope == Scope::In(focus))
        .chain(BINDINGS.iter().filter(|b| b.scope == Scope::Global));
    for b in scoped {
        for k in b.keys {
            if let Some(digit) = k.matches(ev) {
                return Some(match (b.action, digit) {
                    (Action::ToggleLength(_), Some(i)) => Action::ToggleLength(i),
                    // One help row names both keys of a pair; the second key is its partner.
                    (Action::CpuPrev, _) if *k == Char('>') => Action::CpuNext,
                    (Action::HistPrev, _) if *k == Char(']') => Action::HistNext,
                    (Action::FocusNext, _) if *k == Code(KeyCode::BackTab) => Action::FocusPrev,
                    (Action::SortResults, _) if *k == Char('O') => Action::ReverseSort,
                    (Action::CurvePrev, _) if *k == Code(KeyCode::Right) => Action::CurveNext,
                    (a, _) => a,
                });
            }
        }
    }
    None
}

/// Rows shown in the help overlay: one per line, pairs merged (a row that only repeats the
/// partner key of a pair is hidden).
pub fn help_rows() -> impl Iterator<Item = &'static Binding> {
    BINDINGS.iter().filter(|b| {
        !matches!(
            (b.action, b.scope),
            (
                Action::CpuNext
                    | Action::HistNext
                    | Action::FocusPrev
                    | Action::ReverseSort
                    | Action::CurveNext,
                _
            ) | (Action::Confirm, Scope::Global)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn every_action_has_a_key_and_a_help_line() {
        for action in <Action as strum::IntoEnumIterator>::iter() {
            let b = BINDINGS
                .iter()
                .find(|b| std::mem::discriminant(&b.action) == std::mem::discriminant(&action))
                .unwrap_or_else(|| panic!("{action:?} has no binding"));
            assert!(!b.keys.is_empty(), "{action:?} has no key");
            assert!(b.help.len() > 8, "{action:?} has no real help line");
            // The key really dispatches to the action in some panel.
            let reached = Panel::ALL.iter().any(|&p| {
                b.keys.iter().any(|k| {
                    let ev = match *k {
                        Char(c) => key(KeyCode::Char(c)),
                        Ctrl(c) => KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL),
                        Code(c) => key(c),
                        Key::Digits => key(KeyCode::Char('1')),
                    };
                    lookup(&ev, p).is_some_and(|a| {
                        std::mem::discriminant(&a) == std::mem::discriminant(&action)
                    })
                })
            });
            assert!(reached, "{action:?}: its key dispatches elsewhere");
        }
    }

    #[test]
    fn every_help_row_names_its_keys() {
        for b in help_rows() {
            assert!(!b.keys_text().is_empty());
        }
        assert!(help_rows().any(|b| b.action == Action::ForceQuit));
    }

    #[test]
    fn dispatch_is_table_driven() {
        let cases = [
            (
                key(KeyCode::Char('3')),
                Panel::Catalog,
                Some(Action::ToggleLength(2)),
            ),
            (key(KeyCode::Char('9')), Panel::Catalog, None),
            (
                key(KeyCode::Char(' ')),
                Panel::Catalog,
                Some(Action::Toggle),
            ),
            (key(KeyCode::Enter), Panel::Results, Some(Action::Confirm)),
            (key(KeyCode::Enter), Panel::Catalog, Some(Action::Toggle)),
            (key(KeyCode::Char('>')), Panel::Host, Some(Action::CpuNext)),
            (key(KeyCode::Char(']')), Panel::Host, Some(Action::HistNext)),
            (key(KeyCode::Char('j')), Panel::Host, Some(Action::Down)),
            (
                KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
                Panel::Histogram,
                Some(Action::ForceQuit),
            ),
            (
                key(KeyCode::Char('c')),
                Panel::Histogram,
                Some(Action::Cancel),
            ),
        ];
        for (ev, panel, want) in cases {
            assert_eq!(lookup(&ev, panel), want, "{ev:?} in {panel:?}");
        }
    }
}
