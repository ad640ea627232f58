//! The operator's side: keys (through the key table, or into a text field), mouse clicks and
//! wheel, and the actions they name. Anything that must happen outside the state (start or
//! cancel the engine, run host checks, leave) is returned as an `Effect`.

use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Position, Rect};

use super::{App, Chart, HistView, HostRow, LogLevel, Mode, Panel, RunState};
use crate::catalog::GUIDE_LENGTHS;
use crate::host::Status as CheckStatus;
use crate::tui::action::{Action, Effect};
use crate::tui::screen::Hitmap;

/// The longest message the harness accepts (16 MiB).
const MAX_LENGTH: u64 = 16 << 20;

/// Parses a typed message length: `100`, `2k`, `2KiB`, `1M` (binary multiples).
pub fn parse_length(text: &str) -> Option<u64> {
    let t = text.trim().to_ascii_lowercase();
    let t = t.trim_end_matches("ib").trim_end_matches('b').trim();
    let (num, mult) = match t.chars().last()? {
        'k' => (&t[..t.len() - 1], 1024),
        'm' => (&t[..t.len() - 1], 1 << 20),
        _ => (t, 1),
    };
    let n: u64 = num.trim().parse().ok()?;
    let bytes = n.checked_mul(mult)?;
    (1..=MAX_LENGTH).contains(&bytes).then_some(bytes)
}

impl App {
    pub fn on_key(&mut self, ev: KeyEvent) -> Option<Effect> {
        if ev.kind == KeyEventKind::Release {
            return None;
        }
        if ev.modifiers.contains(KeyModifiers::CONTROL)
            && matches!(ev.code, KeyCode::Char('c' | 'C'))
        {
            return Some(Effect::Quit);
        }
        self.dirty = true;
        match &mut self.mode {
            Mode::Filter => {
                match ev.code {
                    KeyCode::Esc => {
                        self.filter.clear();
                        self.mode = Mode::Normal;
                    }
                    KeyCode::Enter | KeyCode::Down | KeyCode::Up => self.mode = Mode::Normal,
                    KeyCode::Backspace => {
                        self.filter.pop();
                    }
                    KeyCode::Char(c) => self.filter.push(c),
                    _ => {}
                }
                self.clamp_cursor();
                None
            }
            Mode::ProfileInput(buf) => {
                match ev.code {
                    KeyCode::Esc => self.mode = Mode::Normal,
                    KeyCode::Backspace => {
                        buf.pop();
                    }
                    KeyCode::Char(c) if !c.is_control() && buf.len() < 200 => buf.push(c),
                    KeyCode::Enter => {
                        let text = std::mem::take(buf);
                        self.mode = Mode::Normal;
                        self.apply_profile(&text);
                    }
                    _ => {}
                }
                None
            }
            Mode::LengthInput(buf) => {
                match ev.code {
                    KeyCode::Esc => self.mode = Mode::Normal,
                    KeyCode::Backspace => {
                        buf.pop();
                    }
                    KeyCode::Char(c) if c.is_ascii_alphanumeric() && buf.len() < 12 => buf.push(c),
                    KeyCode::Enter => {
                        let text = std::mem::take(buf);
                        self.mode = Mode::Normal;
                        match parse_length(&text) {
                            Some(n) => self.toggle_length(n),
                            None => self.push_log(
                                LogLevel::Warn,
                                format!(
                                    "length {text:?}: give bytes from 1 to 16M (e.g. 100, 2k, 1KiB)"
                                ),
                            ),
                        }
                    }
                    _ => {}
                }
                None
            }
            Mode::ConfirmQuit => {
                self.mode = Mode::Normal;
                match ev.code {
                    KeyCode::Char('y' | 'Y') => Some(Effect::Quit),
                    _ => {
                        self.push_log(LogLevel::Info, "staying: the run goes on");
                        None
                    }
                }
            }
            Mode::Help => self.on_help_key(&ev),
            Mode::Normal => self.keys.lookup(&ev, self.focus).and_then(|a| self.act(a)),
        }
    }

    pub fn act(&mut self, action: Action) -> Option<Effect> {
        self.dirty = true;
        if self.read_only && action.mutates_run() {
            self.push_log(LogLevel::Info, "watching another process's run: read-only");
            return None;
        }
        if self.profile_blocks(action) {
            return None;
        }
        match action {
            Action::ForceQuit => return Some(Effect::Quit),
            // `q` in the help closes it: leaving is one more `q` away, never a surprise.
            Action::Quit if self.mode == Mode::Help => self.mode = Mode::Normal,
            Action::Quit => return self.leave(),
            Action::Help => {
                self.mode = if self.mode == Mode::Help {
                    Mode::Normal
                } else {
                    self.help = super::HelpView {
                        page: self.help.page,
                        ..Default::default()
                    };
                    Mode::Help
                };
            }
            Action::Back if self.mode == Mode::Help && !self.help.filter.is_empty() => {
                self.help.filter.clear();
                self.help.top = 0;
            }
            Action::Back => {
                if self.mode != Mode::Normal {
                    self.mode = Mode::Normal;
                } else if !self.filter.is_empty() {
                    self.filter.clear();
                    self.clamp_cursor();
                } else {
                    return self.leave();
                }
            }
            Action::FocusNext | Action::FocusPrev => {
                let n = Panel::ALL.len();
                let at = Panel::ALL
                    .iter()
                    .position(|&p| p == self.focus)
                    .unwrap_or(0);
                let next = if action == Action::FocusNext {
                    (at + 1) % n
                } else {
                    (at + n - 1) % n
                };
                self.focus_panel(Panel::ALL[next]);
            }
            Action::Up | Action::Down => self.move_cursor(action == Action::Up),
            Action::Toggle => self.toggle_at_cursor(),
            Action::Confirm => match self.focus {
                Panel::Catalog => self.toggle_at_cursor(),
                Panel::Results => self.show_result_histogram(),
                _ => {}
            },
            Action::Filter => {
                self.focus = Panel::Catalog;
                self.mode = Mode::Filter;
            }
            Action::ToggleLength(i) => {
                if let Some(&l) = GUIDE_LENGTHS.get(usize::from(i)) {
                    self.toggle_length(l);
                }
            }
            Action::CustomLength => self.mode = Mode::LengthInput(String::new()),
            Action::Start => return self.start(),
            Action::StartLayouts => return self.start_with_layouts(),
            Action::StartAnyway => return self.start_anyway(),
            Action::RunKats => return self.run_kats(),
            Action::CompareLive => return self.compare_live(),
            Action::CompareBuilds => return self.compare_builds(),
            Action::EditProfile => self.edit_profile(),
            Action::Sweep => return self.sweep(),
            Action::PinBaseline => self.pin_baseline(),
            Action::SortResults => {
                self.results_sort = match self.results_sort {
                    None => Some((0, false)),
                    Some((c, d)) if c + 1 < crate::tui::panel::results::COLUMNS.len() => {
                        Some((c + 1, d))
                    }
                    Some(_) => None,
                };
            }
            Action::ReverseSort => {
                self.results_sort = Some(match self.results_sort {
                    Some((c, d)) => (c, !d),
                    None => (0, true),
                });
            }
            Action::HistLogScale => self.hist_log = !self.hist_log,
            Action::ToggleCounter => {
                use crate::counter::RunCounter;
                self.counter = match self.counter {
                    RunCounter::Cycles => RunCounter::Instructions,
                    RunCounter::Instructions => RunCounter::HwInstructions,
                    RunCounter::HwInstructions => RunCounter::Cycles,
                };
                let note = match self.counter {
                    RunCounter::Cycles => "counter: cycles (timed trials)",
                    RunCounter::Instructions => {
                        "counter: instructions — exact counts under valgrind, a cycle estimate beside them"
                    }
                    RunCounter::HwInstructions => {
                        "counter: hw-instructions — the PMU's instructions:u in timed trials (refused where they do not open)"
                    }
                };
                self.push_log(super::LogLevel::Info, note);
            }
            Action::CurveScale => {
                let log = self.curve_is_log();
                self.curve_log = Some(!log);
            }
            Action::ToggleSeries => {
                if let Some(s) = self.curves().get(self.curve_series) {
                    let label = s.label.clone();
                    if !self.curve_hidden.remove(&label) {
                        self.curve_hidden.insert(label);
                    }
                }
            }
            Action::CurvePrev | Action::CurveNext => {
                let n = self.curve_lengths().len();
                if n > 0 {
                    let at = self.curve_length.min(n - 1);
                    self.curve_length = if action == Action::CurveNext {
                        (at + 1).min(n - 1)
                    } else {
                        at.saturating_sub(1)
                    };
                }
            }
            Action::Export => {
                if self.result_rows().is_empty() {
                    self.push_log(LogLevel::Info, "no results to export yet");
                } else {
                    return Some(Effect::Export);
                }
            }
            Action::Cancel => {
                if let RunState::Running { cancelling } | RunState::Kats { cancelling } =
                    &mut self.run
                {
                    if !*cancelling {
                        *cancelling = true;
                        self.push_log(LogLevel::Warn, "cancelling: the trial in flight is dropped");
                        return Some(Effect::Cancel);
                    }
                } else if self.profile.running {
                    return self.cancel_profile();
                } else {
                    self.push_log(LogLevel::Info, "nothing to cancel");
                }
            }
            Action::RecheckHost => return self.recheck_host(),
            Action::Tune => {
                if self.is_running() {
                    self.push_log(LogLevel::Info, "host tuning waits until the run ends");
                } else {
                    return Some(Effect::Tune { cpu: self.cpu });
                }
            }
            Action::HistPrev | Action::HistNext => self.step_histogram(action == Action::HistNext),
            Action::HistLive => self.hist_view = HistView::Live,
            Action::CpuPrev | Action::CpuNext => {
                if self.is_running() {
                    self.push_log(
                        LogLevel::Info,
                        "the CPU changes for the next run; cancel first",
                    );
                    return None;
                }
                let n = self.cpus_online;
                self.cpu = if action == Action::CpuNext {
                    (self.cpu + 1) % n
                } else {
                    (self.cpu + n - 1) % n
                };
                return self.recheck_host();
            }
            Action::CpuLane => {
                if self.is_running() {
                    self.push_log(
                        LogLevel::Info,
                        "the CPUs change for the next run; cancel first",
                    );
                    return None;
                }
                // An empty set stands for the shown CPU alone: the first + makes it explicit;
                // after that + takes the shown CPU out, or adds it.
                if self.lanes.is_empty() || !self.lanes.remove(&self.cpu) {
                    self.lanes.insert(self.cpu);
                }
                let cpus = self.measurement_cpus();
                self.push_log(
                    LogLevel::Info,
                    format!(
                        "the next run measures on CPU {} (+ adds or removes the shown CPU)",
                        crate::host::format_cpu_list(&cpus.iter().copied().collect())
                    ),
                );
                return None;
            }
            Action::SwapChart => {
                self.chart = match self.chart {
                    Chart::Histogram => Chart::Curve,
                    Chart::Curve | Chart::History | Chart::Profile => Chart::Histogram,
                };
            }
            Action::ShowHistory => self.show_history(),
            Action::PinBuild => self.pin_history_build(),
            Action::ShowProfile => return self.show_profile(),
            Action::HelpPageUp
            | Action::HelpPageDown
            | Action::HelpTop
            | Action::HelpBottom
            | Action::HelpFilter => {}
        }
        None
    }

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

    fn move_cursor(&mut self, up: bool) {
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

    fn toggle_length(&mut self, l: u64) {
        if let Some(at) = self.lengths.iter().position(|&x| x == l) {
            self.lengths.remove(at);
        } else {
            self.lengths.push(l);
            self.lengths.sort_unstable();
        }
    }

    fn show_result_histogram(&mut self) {
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

    fn step_histogram(&mut self, forward: bool) {
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

    fn recheck_host(&mut self) -> Option<Effect> {
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

#[cfg(test)]
mod tests {
    use super::parse_length;

    #[test]
    fn typed_lengths() {
        for (text, want) in [
            ("100", Some(100)),
            ("2k", Some(2048)),
            ("2KiB", Some(2048)),
            (" 1M ", Some(1 << 20)),
            ("64 B", Some(64)),
            ("0", None),
            ("17M", None),
            ("abc", None),
            ("", None),
        ] {
            assert_eq!(parse_length(text), want, "{text:?}");
        }
    }
}
