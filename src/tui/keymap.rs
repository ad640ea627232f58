//! The one key table: key → action → help text. It drives dispatch (`Keymap::lookup`), the
//! footer hints and the `?` overlay, so a key cannot work without being documented, nor be
//! documented without working. The built-in rows live in `table`; `[keys]` of the config
//! rebinds them (`rebind`), and the map in force is the one all three read. Text typed into
//! the filter or the length field never reaches this table (see `App::on_key`).

mod rebind;
mod table;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::action::Action;
use super::app::Panel;

#[cfg(test)]
pub use rebind::from_config_text;
pub use rebind::load;

/// A key as the table names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    Char(char),
    Ctrl(char),
    Code(KeyCode),
    /// `1`…`8`, one per guide length.
    Digits,
}

impl Key {
    /// Whether this key is `ev` (digits: any of 1…8).
    fn matches(self, ev: &KeyEvent) -> bool {
        let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
        match (self, ev.code) {
            (Key::Ctrl(c), KeyCode::Char(k)) => ctrl && k.eq_ignore_ascii_case(&c),
            (Key::Char(c), KeyCode::Char(k)) => !ctrl && k == c,
            (Key::Code(c), k) => !ctrl && k == c,
            (Key::Digits, KeyCode::Char('1'..='8')) => !ctrl,
            _ => false,
        }
    }

    /// The single keys this key stands for (digits: eight), for finding clashes.
    fn singles(self) -> Vec<Key> {
        match self {
            Key::Digits => ('1'..='8').map(Key::Char).collect(),
            k => vec![k],
        }
    }

    /// How the help and the footer spell the key (and how `[keys]` names it).
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
            Key::Code(KeyCode::F(n)) => format!("F{n}"),
            Key::Code(KeyCode::PageUp) => "PgUp".into(),
            Key::Code(KeyCode::PageDown) => "PgDn".into(),
            Key::Code(other) => format!("{other:?}"),
        }
    }
}

/// Where a binding applies: everywhere, only while a panel has the focus, or only while the
/// help overlay is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Global,
    In(Panel),
    Help,
}

impl Scope {
    /// Whether one key could mean both: the same scope, or one of them everywhere.
    fn overlaps(self, other: Scope) -> bool {
        self == other || self == Scope::Global || other == Scope::Global
    }
}

/// One row of the table in force.
#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    pub keys: Vec<Key>,
    pub action: Action,
    pub scope: Scope,
    /// The full line in the help overlay.
    pub help: &'static str,
    /// The short word in the footer; None keeps the binding out of the footer.
    pub footer: Option<&'static str>,
    /// Whether `[keys]` set these keys (the built-in ones otherwise).
    pub rebound: bool,
}

/// Actions shown as one help row, "first/second" (the second row is hidden).
const PAIRS: [(Action, Action); 7] = [
    (Action::HelpPageUp, Action::HelpPageDown),
    (Action::HelpTop, Action::HelpBottom),
    (Action::CpuPrev, Action::CpuNext),
    (Action::HistPrev, Action::HistNext),
    (Action::FocusNext, Action::FocusPrev),
    (Action::SortResults, Action::ReverseSort),
    (Action::CurvePrev, Action::CurveNext),
];

/// The bindings in force: the built-in table with `[keys]` applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Keymap {
    rows: Vec<Binding>,
}

impl Default for Keymap {
    fn default() -> Self {
        Self {
            rows: table::DEFAULTS
                .iter()
                .map(|r| Binding {
                    keys: r.keys.to_vec(),
                    action: r.action,
                    scope: r.scope,
                    help: r.help,
                    footer: r.footer,
                    rebound: false,
                })
                .collect(),
        }
    }
}

impl Keymap {
    /// Every row, in the help overlay's order.
    pub fn rows(&self) -> &[Binding] {
        &self.rows
    }

    /// The action `ev` asks for while `focus` has the focus: the panel's rows first.
    pub fn lookup(&self, ev: &KeyEvent, focus: Panel) -> Option<Action> {
        self.lookup_in(ev, Scope::In(focus))
    }

    /// The action `ev` asks for while the help overlay is open: its own rows first.
    pub fn lookup_help(&self, ev: &KeyEvent) -> Option<Action> {
        self.lookup_in(ev, Scope::Help)
    }

    fn lookup_in(&self, ev: &KeyEvent, first: Scope) -> Option<Action> {
        let scoped = self
            .rows
            .iter()
            .filter(|b| b.scope == first)
            .chain(self.rows.iter().filter(|b| b.scope == Scope::Global));
        for b in scoped {
            for (i, k) in b.keys.iter().enumerate() {
                if !k.matches(ev) {
                    continue;
                }
                return Some(match (b.action, *k, ev.code) {
                    (Action::ToggleLength(_), Key::Digits, KeyCode::Char(d)) => {
                        Action::ToggleLength(d as u8 - b'1')
                    }
                    // Rebound lengths: eight keys, one per guide length.
                    (Action::ToggleLength(_), _, _) => Action::ToggleLength(i as u8),
                    (a, _, _) => a,
                });
            }
        }
        None
    }

    /// Rows shown in the help overlay: one per line, the second of a pair hidden (its keys
    /// join the first's), and the global Enter that only repeats the panels' ones.
    pub fn help_rows(&self) -> impl Iterator<Item = &Binding> {
        self.rows.iter().filter(|b| {
            let second = PAIRS.iter().any(|(_, second)| *second == b.action);
            let repeat = b.action == Action::Confirm && b.scope == Scope::Global;
            !(second || repeat)
        })
    }

    /// The keys of a row as the help names them: a pair's first row names its partner's too.
    pub fn keys_text(&self, b: &Binding) -> String {
        let mut keys: Vec<String> = b.keys.iter().map(|k| k.text()).collect();
        if let Some((_, second)) = PAIRS.iter().find(|(first, _)| *first == b.action)
            && let Some(partner) = self
                .rows
                .iter()
                .find(|r| r.action == *second && r.scope == b.scope)
        {
            keys.extend(partner.keys.iter().map(|k| k.text()));
        }
        keys.join("/")
    }

    /// The first key of `action`'s row, as the title bar names it.
    pub fn key_of(&self, action: Action) -> String {
        self.rows
            .iter()
            .find(|b| b.action == action)
            .and_then(|b| b.keys.first())
            .map_or_else(|| "?".into(), |k| k.text())
    }
}

/// The name `[keys]` gives an action (kebab case: `start`, `pin-baseline`, `toggle-length`).
pub fn action_name(action: Action) -> &'static str {
    action.into()
}

#[cfg(test)]
mod tests;
