//! The small state steps that keys and clicks share: focusing a panel, moving the focused
//! panel's cursor, toggling a length, showing a result's histogram, stepping through
//! histograms, and asking for a fresh host check.

use crate::host::Status as CheckStatus;
use crate::tui::action::Effect;
use crate::tui::app::{App, Chart, HistView, HostRow, LogLevel, Panel};

impl App {
    /// Focuses a panel; on a small screen the charts share a slot, so focusing one shows it.
    pub fn focus_panel(&mut self, p: Panel) {
        self.focus = p;
        match p {
            Panel::Histogram => self.chart = Chart::Histogram,
            Panel::Curve => self.chart = Chart::Curve,
            Panel::History => self.chart = Chart::History,
            Panel::Profile => self.chart = Chart::Profile,
            _ => {}
        }
    }

    pub(super) fn move_cursor(&mut self, up: bool) {
        fn step(v: &mut usize, up: bool, len: usize) {
            *v = if up {
                v.saturating_sub(1)
            } else {
                (*v + 1).min(len.saturating_sub(1))
            };
        }
        match self.focus {
            Panel::Catalog => {
                let n = self.tree_rows().len();
                step(&mut self.cursor, up, n);
            }
            Panel::Host => step(&mut self.host_cursor, up, self.host.len()),
            Panel::Results => {
                let n = self.result_rows().len();
                step(&mut self.results_cursor, up, n);
            }
            Panel::Progress => {
                // Up scrolls back into older lines.
                step(&mut self.log_back, !up, self.log.len());
                // Lines scrolled into view are seen; at the bottom the log follows again.
                self.log_unseen = self.log_unseen.min(self.log_back);
            }
            Panel::Histogram => self.step_histogram(!up),
            Panel::Curve => {
                let n = self.curves().len();
                step(&mut self.curve_series, up, n);
            }
            Panel::History => self.step_history(up),
            Panel::Profile => self.step_profile(up),
        }
    }

    pub(super) fn toggle_length(&mut self, l: u64) {
        if let Some(at) = self.lengths.iter().position(|&x| x == l) {
            self.lengths.remove(at);
        } else {
            self.lengths.push(l);
            self.lengths.sort_unstable();
        }
    }

    pub(super) fn show_result_histogram(&mut self) {
        let key = self
            .result_rows()
            .get(self.results_cursor)
            .map(|r| (r.key.clone(), r.run));
        if let Some((k, run)) = key {
            let has = self
                .jobs
                .iter()
                .any(|j| j.key == k && j.run == run && j.snapshot.is_some());
            if has {
                self.hist_view = HistView::RunJob(k, run);
                self.chart = Chart::Histogram;
            } else {
                self.push_log(
                    LogLevel::Info,
                    format!("{k}: no per-call histogram recorded"),
                );
            }
        }
    }

    pub(super) fn step_histogram(&mut self, forward: bool) {
        let keys = self.hist_jobs();
        if keys.is_empty() {
            return;
        }
        let shown = self.hist_job().map(|j| j.key.clone());
        let at = shown.and_then(|k| keys.iter().position(|&x| *x == k));
        let n = keys.len();
        let next = match (at, forward) {
            (Some(i), true) => (i + 1) % n,
            (Some(i), false) => (i + n - 1) % n,
            (None, _) => 0,
        };
        self.hist_view = HistView::Job(keys[next].clone());
    }

    pub(super) fn recheck_host(&mut self) -> Option<Effect> {
        if self.is_running() {
            // The clock probe would compete with the measurement for the CPU.
            self.push_log(LogLevel::Info, "host checks wait until the run ends");
            return None;
        }
        self.host = vec![HostRow {
            check: None,
            name: "host".into(),
            status: CheckStatus::Unknown,
            value: format!("checking CPU {}…", self.cpu),
            hint: None,
        }];
        self.host_cursor = 0;
        Some(Effect::RecheckHost { cpu: self.cpu })
    }
}
