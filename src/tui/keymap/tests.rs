use super::*;
use Key::{Char, Code, Ctrl};

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn event_of(k: Key) -> KeyEvent {
    match k {
        Char(c) => key(KeyCode::Char(c)),
        Ctrl(c) => KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL),
        Code(c) => key(c),
        Key::Digits => key(KeyCode::Char('1')),
    }
}

#[test]
fn every_action_has_a_key_and_a_help_line() {
    let map = Keymap::default();
    for action in <Action as strum::IntoEnumIterator>::iter() {
        let b = map
            .rows()
            .iter()
            .find(|b| std::mem::discriminant(&b.action) == std::mem::discriminant(&action))
            .unwrap_or_else(|| panic!("{action:?} has no binding"));
        assert!(!b.keys.is_empty(), "{action:?} has no key");
        assert!(b.help.len() > 8, "{action:?} has no real help line");
        // The key really dispatches to the action in some panel.
        let same = |a: Action| std::mem::discriminant(&a) == std::mem::discriminant(&action);
        let reached = Panel::ALL.iter().any(|&p| {
            b.keys
                .iter()
                .any(|k| map.lookup(&event_of(*k), p).is_some_and(same))
        }) || (b.scope == Scope::Help
            && b.keys
                .iter()
                .any(|k| map.lookup_help(&event_of(*k)).is_some_and(same)));
        assert!(reached, "{action:?}: its key dispatches elsewhere");
    }
}

#[test]
fn every_help_row_names_its_keys() {
    let map = Keymap::default();
    for b in map.help_rows() {
        assert!(!map.keys_text(b).is_empty());
    }
    assert!(map.help_rows().any(|b| b.action == Action::ForceQuit));
    let cpu = map
        .help_rows()
        .find(|b| b.action == Action::CpuPrev)
        .expect("cpu row");
    assert_eq!(map.keys_text(cpu), "</>");
}

#[test]
fn dispatch_is_table_driven() {
    let map = Keymap::default();
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
        (key(KeyCode::BackTab), Panel::Host, Some(Action::FocusPrev)),
        (
            key(KeyCode::Char('O')),
            Panel::Results,
            Some(Action::ReverseSort),
        ),
        (key(KeyCode::Right), Panel::Curve, Some(Action::CurveNext)),
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
        assert_eq!(map.lookup(&ev, panel), want, "{ev:?} in {panel:?}");
    }
    // The help overlay's own rows win while it is open; elsewhere they mean nothing.
    let help = [
        (key(KeyCode::Char('/')), Some(Action::HelpFilter)),
        (key(KeyCode::PageDown), Some(Action::HelpPageDown)),
        (key(KeyCode::End), Some(Action::HelpBottom)),
        (key(KeyCode::Down), Some(Action::Down)),
        (key(KeyCode::Char('q')), Some(Action::Quit)),
    ];
    for (ev, want) in help {
        assert_eq!(map.lookup_help(&ev), want, "{ev:?} in the help");
    }
    assert_eq!(
        map.lookup(&key(KeyCode::Char('/')), Panel::Catalog),
        Some(Action::Filter)
    );
    assert_eq!(map.lookup(&key(KeyCode::PageDown), Panel::Catalog), None);
}

#[test]
fn every_action_has_a_name_that_parses_back() {
    for action in <Action as strum::IntoEnumIterator>::iter() {
        let name = action_name(action);
        assert!(
            name.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
            "{name}"
        );
        assert_eq!(rebind::action_named(name), Some(action), "{name}");
    }
}

#[test]
fn key_names_parse_back() {
    for k in [
        Char('s'),
        Char(' '),
        Ctrl('x'),
        Code(KeyCode::Tab),
        Code(KeyCode::BackTab),
        Code(KeyCode::Up),
        Code(KeyCode::Enter),
        Code(KeyCode::F(5)),
        Code(KeyCode::PageDown),
    ] {
        assert_eq!(rebind::parse_key(&k.text()), Ok(k), "{}", k.text());
    }
    assert_eq!(rebind::parse_key("space"), Ok(Char(' ')));
    assert_eq!(rebind::parse_key("ctrl-X"), Ok(Ctrl('x')));
    assert!(rebind::parse_key("Hyper-q").is_err());
    assert!(rebind::parse_key("").is_err());
}
