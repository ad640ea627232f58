//! The History panel's state: the tuning journal's builds of one instance at one length (the
//! instance under the catalog cursor, else the first selected; the first length chosen), the
//! highlighted build, and the build pinned as the Δ column's baseline. Read from the journal
//! when the panel is shown and after every run; a journal that cannot be read is said in the
//! panel, never stops anything.

use std::path::Path;

use super::{App, LogLevel, Panel};
use crate::journal::{BuildRow, Journal};

/// What the panel shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistoryView {
    /// The instance and length shown (None: nothing to show yet).
    pub label: Option<String>,
    pub length: u64,
    pub rows: Vec<BuildRow>,
    /// The highlighted build (index into `rows`).
    pub cursor: usize,
    /// Why there is nothing to show (no journal yet, a damaged one).
    pub problem: Option<String>,
}

/// A journal build pinned as the Δ baseline: its number in the history and its row.
#[derive(Debug, Clone, PartialEq)]
pub struct PinnedBuild {
    pub number: usize,
    pub row: BuildRow,
}

impl App {
    /// The instance the History panel follows.
    fn history_label(&self) -> Option<String> {
        self.cursor_instance()
            .map(|i| i.label.clone())
            .or_else(|| self.selected_instances().first().map(|i| i.label.clone()))
    }

    /// Reads the history of the followed instance at the first chosen length again.
    pub fn refresh_history(&mut self) {
        self.dirty = true;
        let label = self.history_label();
        let length = self.lengths.first().copied().unwrap_or(32);
        // The cursor stays where the operator put it; on the newest build it follows new ones.
        let on_newest = self.history.cursor + 1 >= self.history.rows.len();
        let keep_cursor =
            self.history.label == label && self.history.length == length && !on_newest;
        let old_cursor = self.history.cursor;
        let mut view = HistoryView {
            label: label.clone(),
            length,
            ..HistoryView::default()
        };
        match (&self.journal, label) {
            (None, _) => view.problem = Some("the tuning journal is off".into()),
            (_, None) => view.problem = Some("put the cursor on an instance".into()),
            (Some(path), Some(label)) => match read(path, &label, length) {
                Ok(rows) => view.rows = rows,
                Err(why) => view.problem = Some(why),
            },
        }
        let last = view.rows.len().saturating_sub(1);
        view.cursor = if keep_cursor {
            old_cursor.min(last)
        } else {
            last
        };
        self.history = view;
    }

    /// The tuning history the export writes: every build of the instance the panel follows,
    /// at every length the journal holds (None without a journal, an instance or a build; a
    /// journal that cannot be read is said in the log).
    pub fn tuning_history(&mut self) -> Option<(String, Vec<BuildRow>)> {
        let (path, label) = (self.journal.clone()?, self.history_label()?);
        if !path.exists() {
            return None;
        }
        let read = Journal::open(&path).and_then(|j| j.entries(&label, None));
        match read {
            Ok(entries) if !entries.is_empty() => Some((label, crate::journal::history(&entries))),
            Ok(_) => None,
            Err(why) => {
                self.push_log(LogLevel::Warn, format!("no tuning history exported: {why}"));
                None
            }
        }
    }

    /// Shows the History panel (focused), read afresh.
    pub(super) fn show_history(&mut self) {
        self.focus_panel(Panel::History);
        self.refresh_history();
    }

    /// Moves the highlighted build.
    pub(super) fn step_history(&mut self, up: bool) {
        let n = self.history.rows.len();
        let c = &mut self.history.cursor;
        *c = if up {
            c.saturating_sub(1)
        } else {
            (*c + 1).min(n.saturating_sub(1))
        };
    }

    /// Makes the highlighted build the Δ column's baseline (again: unpins it).
    pub(super) fn pin_history_build(&mut self) {
        let Some(row) = self.history.rows.get(self.history.cursor).cloned() else {
            self.push_log(LogLevel::Info, "no build in the history to pin");
            return;
        };
        let number = self.history.cursor + 1;
        let same = self
            .pinned_build
            .as_ref()
            .is_some_and(|p| p.row.entry == row.entry);
        if same {
            self.pinned_build = None;
            self.push_log(
                LogLevel::Info,
                "Δ baseline: the earlier run again (build unpinned)",
            );
            return;
        }
        let e = &row.entry;
        self.push_log(
            LogLevel::Info,
            format!(
                "Δ baseline: build {number} of {} at {} ({} · {}, {})",
                crate::sanitize::terminal(&e.label),
                crate::format::size(e.input_bytes),
                crate::sanitize::terminal(&e.flags_short()),
                e.library_sha256.get(..12).unwrap_or(&e.library_sha256),
                e.ended_utc
                    .get(..16)
                    .unwrap_or(&e.ended_utc)
                    .replace('T', " ")
            ),
        );
        self.pinned_build = Some(PinnedBuild { number, row });
    }
}

fn read(path: &Path, label: &str, length: u64) -> Result<Vec<BuildRow>, String> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let j = Journal::open(path).map_err(|e| e.to_string())?;
    let entries = j.entries(label, Some(length)).map_err(|e| e.to_string())?;
    Ok(crate::journal::history(&entries))
}
