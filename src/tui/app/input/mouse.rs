//! The mouse: a click focuses the panel under the pointer and picks its row, the wheel moves
//! that panel's cursor (or scrolls the help).

use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};

use crate::tui::action::{Action, Effect};
use crate::tui::app::{App, Mode, Panel};
use crate::tui::screen::Hitmap;

impl App {
    /// Clicks focus a panel and pick the row under the pointer; the wheel moves the cursor
    /// of the panel under the pointer.
    pub fn on_mouse(&mut self, ev: MouseEvent, map: &Hitmap) -> Option<Effect> {
        // Over the help the wheel scrolls it; a click closes nothing (only its keys do).
        if self.mode == Mode::Help {
            match ev.kind {
                MouseEventKind::ScrollUp => self.scroll_help(Action::Up),
                MouseEventKind::ScrollDown => self.scroll_help(Action::Down),
                _ => return None,
            }
            self.dirty = true;
            return None;
        }
        let pos = Position::new(ev.column, ev.row);
        let &(panel, _) = map.panels.iter().find(|(_, r)| r.contains(pos))?;
        if self.mode == Mode::ConfirmQuit {
            self.mode = Mode::Normal;
        }
        self.dirty = true;
        let row_at = |rows: Option<(Rect, usize)>| {
            rows.filter(|(r, _)| r.contains(pos))
                .map(|(r, first)| first + usize::from(pos.y - r.y))
        };
        match ev.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                self.focus_panel(panel);
                match panel {
                    Panel::Catalog => {
                        if let Some(i) =
                            row_at(map.catalog_rows).filter(|&i| i < self.tree_rows().len())
                        {
                            self.cursor = i;
                            return self.act(Action::Toggle);
                        }
                    }
                    Panel::Host => {
                        if let Some(i) = row_at(map.host_rows).filter(|&i| i < self.host.len()) {
                            self.host_cursor = i;
                        }
                    }
                    Panel::Results => {
                        if let Some(i) =
                            row_at(map.results_rows).filter(|&i| i < self.result_rows().len())
                        {
                            self.results_cursor = i;
                            self.show_result_histogram();
                        }
                    }
                    _ => {}
                }
                None
            }
            MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
                self.focus_panel(panel);
                self.move_cursor(ev.kind == MouseEventKind::ScrollUp);
                None
            }
            _ => None,
        }
    }
}
