//! The log and the host panel's rows: adding a bounded, sanitized log line, telling of a
//! lost writer, and taking in fresh host check results.

use super::{App, HostRow, LOG_CAPACITY, LogLevel, LogLine, RunState};
use crate::host::Status as CheckStatus;

impl App {
    /// Adds a log line. Log lines quote workers' stderr, paths and library metadata, so they
    /// are escaped and bounded here, once, by the sanitizer every frontend uses.
    pub fn push_log(&mut self, level: LogLevel, text: impl Into<String>) {
        let text: String = text.into();
        let text = crate::sanitize::terminal(&text).into_owned();
        self.log.push(LogLine { level, text });
        // Scrolled back, the view stays on the lines being read; the new one waits below.
        if self.log_back > 0 {
            self.log_back += 1;
            self.log_unseen += 1;
        }
        if self.log.len() > LOG_CAPACITY {
            let extra = self.log.len() - LOG_CAPACITY;
            self.log.drain(..extra);
            self.log_back = self.log_back.min(self.log.len().saturating_sub(1));
            self.log_unseen = self.log_unseen.min(self.log_back);
        }
        self.dirty = true;
    }

    /// Watching: the writing process is gone, or its journal cannot be read.
    pub fn writer_lost(&mut self, reason: String) {
        self.push_log(LogLevel::Bad, reason.clone());
        if let Some(dir) = &self.run_dir {
            self.push_log(
                LogLevel::Warn,
                format!(
                    "resume it with `cyclescope run --resume {}`",
                    crate::sanitize::shell_path(dir)
                ),
            );
        }
        self.run = RunState::Lost(reason);
        self.current = None;
    }

    #[cfg(test)]
    pub fn is_lost(&self) -> bool {
        matches!(self.run, RunState::Lost(_))
    }

    /// Replaces the host checks (after a check finished).
    /// A fresh reading of one check (the load average during a run): its row takes the new
    /// value and status; nothing happens when no row shows that check.
    pub fn refresh_host_check(&mut self, fresh: crate::host::CheckResult) {
        if let Some(row) = self.host.iter_mut().find(|r| r.check == Some(fresh.check)) {
            row.status = fresh.status;
            row.value = fresh.value;
            row.hint = fresh.hint.or(fresh.problem);
            self.dirty = true;
        }
    }

    pub fn set_host(&mut self, rows: Vec<HostRow>) {
        self.host = rows;
        self.host_cursor = self.host_cursor.min(self.host.len().saturating_sub(1));
        let bad = self
            .host
            .iter()
            .filter(|r| r.status == CheckStatus::Fail)
            .count();
        if bad > 0 {
            self.push_log(
                LogLevel::Warn,
                format!("host: {bad} check(s) fail on CPU {}", self.cpu),
            );
        }
        self.dirty = true;
    }
}
