//! The session around runs: which run folder is current, whether the operator's consent
//! (`A`) would change anything, how a refusal ends a run (and restarts it after an early
//! `A`), and the end of a KAT-only job. State only; the event loop performs what it asks.

use std::path::PathBuf;

use super::{App, KatState, LogLevel, RunState};
use crate::host::Status as HostStatus;

/// A run that ended cancelled with jobs left: its folder and how far it got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnfinishedRun {
    pub dir: PathBuf,
    pub done: usize,
    pub total: usize,
}

impl App {
    /// The current run ended (`cancelled` or not): a cancelled run with jobs left is kept
    /// for the printout after leaving; a run that finished its folder's jobs (a run written
    /// into the same folder again) drops that folder's entry.
    pub fn note_run_end(&mut self, cancelled: bool) {
        if self.read_only {
            return;
        }
        let Some(dir) = self.run_dir.clone() else {
            return;
        };
        let (done, total) = self.run_counts();
        self.unfinished_runs.retain(|u| u.dir != dir);
        if cancelled && done < total {
            self.unfinished_runs
                .push(UnfinishedRun { dir, done, total });
        }
    }

    /// The current run's index in `runs`, creating an unnamed one for results that arrive
    /// without a run folder.
    pub fn current_run(&mut self) -> usize {
        if self.runs.is_empty() {
            self.runs.push(PathBuf::new());
        }
        self.runs.len() - 1
    }

    /// Makes `dir` the current run folder (again, when it already is).
    pub fn enter_run_folder(&mut self, dir: &std::path::Path) {
        if self.runs.last().map(PathBuf::as_path) != Some(dir) {
            self.runs.push(dir.to_path_buf());
        }
    }

    /// Whether some host check fails on the measurement CPU.
    pub fn host_fails(&self) -> bool {
        self.host.iter().any(|r| r.status == HostStatus::Fail)
    }

    /// Whether a selected instance's KAT ran and did not pass.
    pub fn kat_blocks_selection(&self) -> bool {
        self.selected.iter().any(
            |l| matches!(self.kat_state(l), KatState::Done { status, .. } if !status.is_pass()),
        )
    }

    /// Whether `A` (measure anyway) would change anything now.
    pub fn consent_applies(&self) -> bool {
        if self.read_only {
            return false;
        }
        let host = self.host_fails() && !self.allow_unfixed_host;
        match &self.run {
            RunState::Running { cancelling: false } if !self.run_announced => host,
            RunState::Refused { host: true, .. } => true,
            _ if self.is_running() => false,
            _ => host || (self.kat_blocks_selection() && !self.allow_kat_fail),
        }
    }

    /// The engine refused the run it was asked for. After an early `A` a host refusal
    /// starts the same run again with the consent.
    pub fn refused(&mut self, reason: String, host: bool) {
        self.push_log(
            LogLevel::Bad,
            if host {
                format!("run refused, host checks failed: {reason}")
            } else {
                format!("run refused: {reason}")
            },
        );
        self.run = RunState::Refused { reason, host };
        self.current = None;
        self.cpu_wait = None;
        if host
            && self.allow_unfixed_host
            && let Some(mut spec) = self.last_spec.clone()
        {
            spec.allow_unfixed_host = true;
            spec.allow_kat_fail = self.allow_kat_fail;
            self.push_log(
                LogLevel::Warn,
                "starting again with the consent given while it was prepared (A)",
            );
            self.run = RunState::Running { cancelling: false };
            self.run_announced = false;
            self.pending = Some(crate::tui::action::Effect::Start(spec));
        } else {
            // No run happened: no jobs to count.
            self.run_labels.clear();
            self.run_lengths.clear();
        }
    }

    /// A KAT-only job ended.
    /// A sweep's fits arrived: kept for the curve, and said in the log.
    pub fn swept(&mut self, file: crate::sweep::SweepFile) {
        for s in file.instances {
            for line in crate::sweep::describe(&s) {
                self.push_log(LogLevel::Info, line);
            }
            self.sweeps.retain(|old| old.label != s.label);
            self.sweeps.push(s);
        }
        self.dirty = true;
    }

    pub fn kats_done(&mut self) {
        if matches!(self.run, RunState::Kats { .. }) {
            self.run = RunState::Idle;
        }
        self.dirty = true;
    }
}
