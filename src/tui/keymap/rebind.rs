//! `[keys]` of `config.toml`: action names to keys, applied over the built-in table. Every
//! mistake is a config error naming the file, line and column of the entry: an action that
//! does not exist, a key cyclescope cannot name, or one key meaning two things where both
//! could apply. It never changes which actions exist or what they do.

use std::path::{Path, PathBuf};

use crossterm::event::KeyCode;
use toml::de::{DeTable, DeValue};

use super::{Key, Keymap};
use crate::tui::action::Action;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum KeysError {
    #[error("cannot read config {path}: {message}")]
    Read { path: PathBuf, message: String },
    #[error("{path}:{line}:{column}: [keys]: {message}")]
    At {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
}

/// The keymap of the config file at `path` (the built-in one when it has no `[keys]`).
pub fn load(path: &Path) -> Result<Keymap, KeysError> {
    let text = std::fs::read_to_string(path).map_err(|e| KeysError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    from_config_text(&text, path)
}

/// The keymap a config's text asks for; `path` only names the file in errors.
pub fn from_config_text(text: &str, path: &Path) -> Result<Keymap, KeysError> {
    let at = |span: std::ops::Range<usize>, message: String| {
        let (line, column) = line_column(text, span.start);
        KeysError::At {
            path: path.to_path_buf(),
            line,
            column,
            message: crate::sanitize::terminal(&message).into_owned(),
        }
    };
    // The catalog reads the file too and reports its syntax errors; this only needs [keys].
    let doc = DeTable::parse(text).map_err(|e| at(e.span().unwrap_or(0..0), e.to_string()))?;
    let Some(keys) = doc.get_ref().get("keys") else {
        return Ok(Keymap::default());
    };
    let DeValue::Table(entries) = keys.get_ref() else {
        return Err(at(keys.span(), "must be a table: action = \"key\"".into()));
    };
    let mut map = Keymap::default();
    // (action, span of its entry) in the order written, for naming a clash.
    let mut written: Vec<(Action, std::ops::Range<usize>)> = Vec::new();
    for (name, value) in entries {
        let action = action_named(name.get_ref())
            .ok_or_else(|| at(name.span(), unknown_action(name.get_ref())))?;
        let keys = key_list(value.get_ref())
            .map_err(|m| at(value.span(), format!("{}: {m}", name.get_ref())))?;
        check_lengths(action, &keys).map_err(|m| at(value.span(), m))?;
        for row in map.rows.iter_mut().filter(|r| same(r.action, action)) {
            row.keys = keys.clone();
            row.rebound = true;
        }
        written.push((action, name.span()));
    }
    if let Some((action, message)) = clash(&map) {
        let span = written
            .iter()
            .find(|(a, _)| same(*a, action))
            .map_or(0..0, |(_, s)| s.clone());
        return Err(at(span, message));
    }
    Ok(map)
}

fn same(a: Action, b: Action) -> bool {
    std::mem::discriminant(&a) == std::mem::discriminant(&b)
}

/// The action `[keys]` calls `name`.
pub(super) fn action_named(name: &str) -> Option<Action> {
    <Action as strum::IntoEnumIterator>::iter().find(|a| super::action_name(*a) == name)
}

fn unknown_action(name: &str) -> String {
    let names: Vec<&str> = <Action as strum::IntoEnumIterator>::iter()
        .map(super::action_name)
        .collect();
    format!(
        "no action {name:?} (the actions: {}; docs/config.md)",
        names.join(", ")
    )
}

fn key_list(value: &DeValue) -> Result<Vec<Key>, String> {
    let one = |v: &DeValue| match v {
        DeValue::String(s) => parse_key(s),
        _ => Err("a key is a string such as \"s\", \"Ctrl-x\", \"F5\" or \"Space\"".into()),
    };
    let keys = match value {
        DeValue::Array(items) => items
            .iter()
            .map(|i| one(i.get_ref()))
            .collect::<Result<Vec<_>, _>>()?,
        v => vec![one(v)?],
    };
    if keys.is_empty() {
        return Err("give at least one key (an action cannot be left without one)".into());
    }
    Ok(keys)
}

/// The lengths' keys: the digits, or eight keys, S1…S8 in order.
fn check_lengths(action: Action, keys: &[Key]) -> Result<(), String> {
    match action {
        Action::ToggleLength(_) if keys == [Key::Digits] || keys.len() == 8 => Ok(()),
        Action::ToggleLength(_) => Err(format!(
            "toggle-length takes \"1-8\" or a list of eight keys, S1…S8 (got {})",
            keys.len()
        )),
        _ if keys.contains(&Key::Digits) => {
            Err("\"1-8\" belongs to toggle-length; name single keys".into())
        }
        _ => Ok(()),
    }
}

/// A key that means two actions where both could apply, naming a rebound one of them.
fn clash(map: &Keymap) -> Option<(Action, String)> {
    let rows = map.rows();
    for (i, a) in rows.iter().enumerate() {
        for b in &rows[i + 1..] {
            if same(a.action, b.action) || !(a.rebound || b.rebound) || !a.scope.overlaps(b.scope) {
                continue;
            }
            let shared = a
                .keys
                .iter()
                .flat_map(|k| k.singles())
                .find(|k| b.keys.iter().flat_map(|k| k.singles()).any(|j| j == *k));
            if let Some(k) = shared {
                let blame = if b.rebound { b.action } else { a.action };
                return Some((
                    blame,
                    format!(
                        "key {} would mean both {} and {}; give one of them another key",
                        k.text(),
                        super::action_name(a.action),
                        super::action_name(b.action)
                    ),
                ));
            }
        }
    }
    None
}

/// A key as `[keys]` writes it: one character, `Ctrl-x`, or a named key.
pub(super) fn parse_key(text: &str) -> Result<Key, String> {
    let bad = || {
        format!(
            "{text:?} is not a key (one character, Ctrl-x, F1…F12, Space, Tab, S-Tab, Enter, Esc, \
             Backspace, Up, Down, Left, Right, Home, End, PageUp, PageDown, Delete, Insert, 1-8)"
        )
    };
    let arrow = match text {
        "↑" => Some(KeyCode::Up),
        "↓" => Some(KeyCode::Down),
        "←" => Some(KeyCode::Left),
        "→" => Some(KeyCode::Right),
        _ => None,
    };
    if let Some(code) = arrow {
        return Ok(Key::Code(code));
    }
    let mut chars = text.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return Ok(Key::Char(c));
    }
    let lower = text.to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix("ctrl-") {
        let mut cs = rest.chars();
        return match (cs.next(), cs.next()) {
            (Some(c), None) if c.is_ascii_alphanumeric() => Ok(Key::Ctrl(c)),
            _ => Err(bad()),
        };
    }
    if let Some(n) = lower.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
        return if (1..=12).contains(&n) {
            Ok(Key::Code(KeyCode::F(n)))
        } else {
            Err(bad())
        };
    }
    let code = match lower.as_str() {
        "space" => return Ok(Key::Char(' ')),
        "1-8" | "1–8" => return Ok(Key::Digits),
        "tab" => KeyCode::Tab,
        "s-tab" | "backtab" | "shift-tab" => KeyCode::BackTab,
        "enter" | "return" => KeyCode::Enter,
        "esc" | "escape" => KeyCode::Esc,
        "backspace" => KeyCode::Backspace,
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        "pageup" | "pgup" => KeyCode::PageUp,
        "pagedown" | "pgdn" => KeyCode::PageDown,
        "delete" => KeyCode::Delete,
        "insert" => KeyCode::Insert,
        _ => return Err(bad()),
    };
    Ok(Key::Code(code))
}

fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Keymap, KeysError> {
        from_config_text(text, Path::new("config.toml"))
    }

    fn at(e: KeysError) -> (usize, usize, String) {
        match e {
            KeysError::At {
                line,
                column,
                message,
                ..
            } => (line, column, message),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn no_table_is_the_built_in_map() {
        assert_eq!(parse("[settings]\ntrials = 3\n"), Ok(Keymap::default()));
    }

    #[test]
    fn a_rebound_action_leaves_its_old_key() {
        let map = parse("[keys]\nstart = \"S\"\ncancel = [\"x\", \"Ctrl-x\"]\n").unwrap();
        let ev = |c| crossterm::event::KeyEvent::from(KeyCode::Char(c));
        let focus = crate::tui::app::Panel::Catalog;
        assert_eq!(map.lookup(&ev('S'), focus), Some(Action::Start));
        assert_eq!(map.lookup(&ev('s'), focus), None);
        assert_eq!(map.lookup(&ev('x'), focus), Some(Action::Cancel));
    }

    #[test]
    fn mistakes_name_line_and_column() {
        let cases = [
            ("[keys]\nstrat = \"S\"\n", 2, 1, "no action \"strat\""),
            ("[keys]\nstart = \"Hyper-s\"\n", 2, 9, "is not a key"),
            ("[keys]\nstart = 3\n", 2, 9, "a key is a string"),
            ("[keys]\nstart = []\n", 2, 9, "at least one key"),
            // c is cancel's key: start there would mean both.
            ("[keys]\n\nstart = \"c\"\n", 3, 1, "both start and cancel"),
            ("[keys]\nstart = \"x\"\ncancel = \"x\"\n", 3, 1, "key x"),
            ("[keys]\ntoggle-length = [\"a\"]\n", 2, 17, "eight keys"),
            ("[keys]\nquit = \"1\"\n", 2, 1, "key 1"),
            ("keys = 3\n", 1, 8, "must be a table"),
        ];
        for (text, line, column, words) in cases {
            let (l, c, m) = at(parse(text).unwrap_err());
            assert_eq!((l, c), (line, column), "{text:?}: {m}");
            assert!(m.contains(words), "{text:?}: {m}");
        }
    }

    #[test]
    fn a_key_may_move_between_actions() {
        // Swapping two keys is allowed when both are written.
        let map = parse("[keys]\nstart = \"c\"\ncancel = \"s\"\n").unwrap();
        let ev = crossterm::event::KeyEvent::from(KeyCode::Char('c'));
        assert_eq!(
            map.lookup(&ev, crate::tui::app::Panel::Host),
            Some(Action::Start)
        );
    }

    #[test]
    fn a_panel_key_may_repeat_a_global_one_in_another_panel_only() {
        // y is the curve's and the histogram's scale key, each in its own panel.
        assert!(parse("[keys]\ncurve-scale = \"z\"\nhist-log-scale = \"z\"\n").is_ok());
        let (_, _, m) = at(parse("[keys]\nswap-chart = \"y\"\n").unwrap_err());
        assert!(m.contains("key y"), "{m}");
    }
}
