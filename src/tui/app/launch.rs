//! Starting things and leaving: a run of the selection (`s`), the operator's consent to
//! measure anyway (`A`), the KATs alone (`K`), pinning a baseline run (`b`), and leaving,
//! which asks first while a run is in flight. Returns effects; performs nothing itself.

use super::{App, LogLevel, Mode, RunSpec, RunState};
use crate::tui::action::Effect;

impl App {
    pub(super) fn start(&mut self) -> Option<Effect> {
        if self.is_running() {
            self.push_log(LogLevel::Info, "a run is in progress (c cancels it)");
            return None;
        }
        let instances = self.selected_instances();
        if instances.is_empty() {
            self.push_log(
                LogLevel::Warn,
                "select at least one instance first (Space in the catalog)",
            );
            return None;
        }
        if self.lengths.is_empty() {
            self.push_log(
                LogLevel::Warn,
                "choose at least one message length first (1–8, or l)",
            );
            return None;
        }
        let kat_passed = instances
            .iter()
            .filter(|i| self.kat_state(&i.label).passed())
            .filter_map(|i| Some((i.label.clone(), self.kat_logs.get(&i.label)?.clone())))
            .collect();
        self.run_labels = instances.iter().map(|i| i.label.clone()).collect();
        self.run_lengths = self.lengths.clone();
        self.run = RunState::Running { cancelling: false };
        self.run_announced = false;
        let spec = RunSpec {
            instances,
            lengths: self.lengths.clone(),
            cpu: self.cpu,
            cpus: self.measurement_cpus(),
            planning: self.planning,
            kat_passed,
            allow_unfixed_host: self.allow_unfixed_host,
            allow_kat_fail: self.allow_kat_fail,
        };
        self.last_spec = Some(spec.clone());
        Some(Effect::Start(spec))
    }

    /// `A`: the operator's consent to measure despite failed host checks and KATs that did
    /// not pass (both stored with the run). While a run is being prepared it applies to that
    /// run: a host refusal then starts it again with the consent.
    pub(super) fn start_anyway(&mut self) -> Option<Effect> {
        let first = !(self.allow_unfixed_host && self.allow_kat_fail);
        self.allow_unfixed_host = true;
        self.allow_kat_fail = true;
        if first {
            self.push_log(
                LogLevel::Warn,
                "measuring anyway: failed host checks and KATs that did not pass are stored with the run",
            );
        }
        match &self.run {
            RunState::Running { cancelling: false } if !self.run_announced => {
                self.push_log(LogLevel::Info, "A applies to the run being prepared");
                None
            }
            _ if self.is_running() => {
                self.push_log(
                    LogLevel::Info,
                    "A applies from the next run (c cancels this one)",
                );
                None
            }
            _ => self.start(),
        }
    }

    /// `K`: the KATs of the selection, nothing measured.
    pub(super) fn run_kats(&mut self) -> Option<Effect> {
        if self.is_running() {
            self.push_log(LogLevel::Info, "a run is in progress (c cancels it)");
            return None;
        }
        let instances = self.selected_instances();
        if instances.is_empty() {
            self.push_log(
                LogLevel::Warn,
                "select at least one instance first (Space in the catalog)",
            );
            return None;
        }
        self.run = RunState::Kats { cancelling: false };
        Some(Effect::RunKats(instances))
    }

    /// `b` in Results: pins the run of the row under the cursor as the baseline (again on
    /// the same run: unpins it).
    pub(super) fn pin_baseline(&mut self) {
        let Some(run) = self.result_rows().get(self.results_cursor).map(|r| r.run) else {
            self.push_log(LogLevel::Info, "no results to pin yet");
            return;
        };
        if self.baseline == Some(run) {
            self.baseline = None;
            self.push_log(
                LogLevel::Info,
                format!("run #{} is no longer the baseline", run + 1),
            );
        } else {
            self.baseline = Some(run);
            let dir = self.runs.get(run).map(|d| crate::catalog::display_path(d));
            self.push_log(
                LogLevel::Good,
                format!("baseline: run #{} {}", run + 1, dir.unwrap_or_default()),
            );
        }
    }

    /// `q` / Esc: leaves, but asks first while a run is in flight.
    pub(super) fn leave(&mut self) -> Option<Effect> {
        if self.is_running() && !self.read_only {
            self.mode = Mode::ConfirmQuit;
            return None;
        }
        Some(Effect::Quit)
    }
}
