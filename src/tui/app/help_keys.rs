//! Keys while the help overlay is open: only those that close it (`Esc`, `?`, `q` as the
//! table binds them) or move in it act; `/` types a filter that narrows its lines. A stray
//! key does nothing, so reading the help never starts, cancels or leaves anything.

use crossterm::event::{KeyCode, KeyEvent};

use super::App;
use crate::tui::action::{Action, Effect};

/// The help overlay's scroll position and filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelpView {
    /// The first line shown (of those the filter keeps).
    pub top: usize,
    /// Lines containing this text (any case) are shown; empty: all.
    pub filter: String,
    /// Keys go into the filter (after `/`, until Enter or Esc).
    pub typing: bool,
    /// Lines the overlay showed at its last drawing: a page for PgUp/PgDn.
    pub page: usize,
}

impl Default for HelpView {
    fn default() -> Self {
        Self {
            top: 0,
            filter: String::new(),
            typing: false,
            // The footer stays below the overlay, its frame takes two more rows.
            page: usize::from(crate::tui::screen::MIN_HEIGHT) - 3,
        }
    }
}

/// The longest help filter kept (the lines are shorter than this anyway).
const FILTER_MAX: usize = 40;

impl App {
    pub(super) fn on_help_key(&mut self, ev: &KeyEvent) -> Option<Effect> {
        if self.help.typing {
            self.type_help_filter(ev.code);
            return None;
        }
        match self.keys.lookup_help(ev) {
            Some(a @ (Action::Help | Action::Quit | Action::Back)) => self.act(a),
            Some(
                a @ (Action::Up
                | Action::Down
                | Action::HelpPageUp
                | Action::HelpPageDown
                | Action::HelpTop
                | Action::HelpBottom),
            ) => {
                self.scroll_help(a);
                None
            }
            Some(Action::HelpFilter) => {
                self.help.typing = true;
                None
            }
            _ => None,
        }
    }

    fn type_help_filter(&mut self, code: KeyCode) {
        let help = &mut self.help;
        match code {
            KeyCode::Esc => {
                help.filter.clear();
                help.typing = false;
            }
            KeyCode::Enter => help.typing = false,
            KeyCode::Backspace => {
                help.filter.pop();
            }
            KeyCode::Char(c) if !c.is_control() && help.filter.chars().count() < FILTER_MAX => {
                help.filter.push(c);
            }
            _ => {}
        }
        help.top = 0;
    }

    /// Moves the help overlay's first line, kept within the lines its filter shows.
    pub(super) fn scroll_help(&mut self, action: Action) {
        let lines = crate::tui::panel::help::shown_lines(&self.keys, &self.help.filter).len();
        let page = self.help.page.max(1);
        let last = lines.saturating_sub(page);
        let top = self.help.top.min(last);
        self.help.top = match action {
            Action::Up => top.saturating_sub(1),
            Action::Down => (top + 1).min(last),
            Action::HelpPageUp => top.saturating_sub(page),
            Action::HelpPageDown => (top + page).min(last),
            Action::HelpTop => 0,
            _ => last,
        };
    }
}

#[cfg(test)]
mod tests {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    use crate::tui::app::{App, Mode, RunState};
    use crate::tui::demo;

    fn press(app: &mut App, code: KeyCode) -> Option<crate::tui::action::Effect> {
        app.on_key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    fn help() -> App {
        let mut app = demo::idle();
        press(&mut app, KeyCode::Char('?'));
        assert_eq!(app.mode, Mode::Help);
        app
    }

    #[test]
    fn only_esc_help_and_q_close_the_help_and_q_does_not_leave() {
        for (close, code) in [
            ("Esc", KeyCode::Esc),
            ("?", KeyCode::Char('?')),
            ("q", KeyCode::Char('q')),
        ] {
            let mut app = help();
            // Keys that mean something elsewhere do nothing while the help is open.
            for stray in [KeyCode::Char('s'), KeyCode::Char(' '), KeyCode::Tab] {
                assert_eq!(press(&mut app, stray), None);
                assert_eq!(app.mode, Mode::Help, "{stray:?} closed the help");
            }
            assert_eq!(app.run, RunState::Idle, "s started a run from the help");
            assert_eq!(press(&mut app, code), None, "{close} left the workbench");
            assert_eq!(app.mode, Mode::Normal, "{close} did not close the help");
        }
    }

    #[test]
    fn scrolling_stays_within_the_lines_and_a_page_is_what_showed() {
        let mut app = help();
        app.help.page = 10;
        let n = crate::tui::panel::help::shown_lines(&app.keys, "").len();
        press(&mut app, KeyCode::End);
        assert_eq!(app.help.top, n - 10);
        press(&mut app, KeyCode::Down);
        assert_eq!(app.help.top, n - 10, "past the end");
        press(&mut app, KeyCode::PageUp);
        assert_eq!(app.help.top, n - 20);
        press(&mut app, KeyCode::Up);
        assert_eq!(app.help.top, n - 21);
        press(&mut app, KeyCode::Home);
        assert_eq!(app.help.top, 0);
        press(&mut app, KeyCode::PageDown);
        assert_eq!(app.help.top, 10);
    }

    #[test]
    fn the_wheel_scrolls_the_help_and_a_click_does_not_close_it() {
        use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
        let mut app = help();
        app.help.page = 10;
        let map = crate::tui::screen::Hitmap {
            panels: vec![(
                crate::tui::app::Panel::Catalog,
                ratatui::layout::Rect::new(0, 0, 80, 24),
            )],
            ..Default::default()
        };
        let mouse = |kind| MouseEvent {
            kind,
            column: 3,
            row: 3,
            modifiers: KeyModifiers::NONE,
        };
        app.on_mouse(mouse(MouseEventKind::ScrollDown), &map);
        app.on_mouse(mouse(MouseEventKind::ScrollDown), &map);
        assert_eq!(app.help.top, 2);
        app.on_mouse(mouse(MouseEventKind::ScrollUp), &map);
        assert_eq!(app.help.top, 1);
        let selected = app.selected.clone();
        app.on_mouse(mouse(MouseEventKind::Down(MouseButton::Left)), &map);
        assert_eq!(app.mode, Mode::Help);
        assert_eq!(app.selected, selected, "the click reached the catalog");
    }

    #[test]
    fn slash_types_a_filter_enter_keeps_it_and_esc_clears_it_then_closes() {
        let mut app = help();
        press(&mut app, KeyCode::Char('/'));
        for c in "CPU q".chars() {
            press(&mut app, KeyCode::Char(c));
        }
        // While typing, q is text, not a key that closes.
        assert_eq!(app.mode, Mode::Help);
        assert_eq!(app.help.filter, "CPU q");
        press(&mut app, KeyCode::Backspace);
        press(&mut app, KeyCode::Backspace);
        press(&mut app, KeyCode::Enter);
        let shown = crate::tui::panel::help::shown_lines(&app.keys, &app.help.filter);
        let all = crate::tui::panel::help::shown_lines(&app.keys, "");
        assert!(!shown.is_empty() && shown.len() < all.len(), "{shown:?}");
        press(&mut app, KeyCode::Esc);
        assert_eq!(
            (app.mode.clone(), app.help.filter.as_str()),
            (Mode::Help, "")
        );
        press(&mut app, KeyCode::Esc);
        assert_eq!(app.mode, Mode::Normal);
    }
}
