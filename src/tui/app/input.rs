//! The operator's side: keys (through the key table, or into a text field), mouse clicks and
//! wheel, and the actions they name. Anything that must happen outside the state (start or
//! cancel the engine, run host checks, leave) is returned as an `Effect`.

mod mouse;
mod steps;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::{App, Chart, HistView, LogLevel, Mode, Panel, RunState};
use crate::catalog::GUIDE_LENGTHS;
use crate::tui::action::{Action, Effect};

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
