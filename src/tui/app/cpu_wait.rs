//! The run queueing for a CPU another process measures on (`EngineEvent::CpuWaiting` until
//! `CpuFree`, the run's start or its refusal): a state of its own, which the title and the
//! progress line name — whom the run waits for and for how long — instead of `preparing`
//! over the last run's jobs. Never touches the lock itself.

use std::time::Duration;

use super::{App, LogLevel};
use crate::format;

/// The CPU the run queues for, who holds it, and since when (on `App::clock`).
#[derive(Debug, Clone, PartialEq)]
pub struct CpuWait {
    pub cpu: usize,
    /// The holder as its lock note names it (another process wrote it: escaped when shown).
    pub holder: String,
    pub since: f64,
    /// How long the run may queue (`CYCLESCOPE_LOCK_WAIT`).
    pub limit: Duration,
}

impl App {
    /// The wait began: the holder named in the log once, the state kept for the title.
    pub(super) fn cpu_waiting(&mut self, cpu: usize, holder: String, limit: Duration) {
        self.push_log(
            LogLevel::Warn,
            format!(
                "{} · up to {} s ({})",
                format::cpu_waiting(cpu, &holder, None),
                limit.as_secs(),
                crate::cpu::lock::LOCK_WAIT_ENV
            ),
        );
        self.cpu_wait = Some(CpuWait {
            cpu,
            holder,
            since: self.clock,
            limit,
        });
    }

    /// The CPU came free: said in the log, the waiting state gone.
    pub(super) fn cpu_free(&mut self, cpu: usize, waited: Duration) {
        self.push_log(LogLevel::Info, format::cpu_free_after(cpu, waited));
        self.cpu_wait = None;
    }

    /// How long the run has queued so far.
    fn waited(&self, w: &CpuWait) -> Duration {
        Duration::from_secs_f64((self.clock - w.since).max(0.0))
    }

    /// `waiting for CPU 1 · 12 s` for the title's state while the run queues.
    pub fn cpu_wait_word(&self) -> Option<String> {
        let w = self.cpu_wait.as_ref()?;
        Some(format!(
            "waiting for CPU {} · {}",
            w.cpu,
            format::duration(self.waited(w))
        ))
    }

    /// `held by PID 4242 (…)` for the title, where the run's folder is shown otherwise (the
    /// run has none yet; the last run's would mislead).
    pub fn cpu_wait_holder(&self) -> Option<String> {
        let w = self.cpu_wait.as_ref()?;
        let line = format::cpu_waiting(w.cpu, &w.holder, None);
        line.split_once(" — ").map(|(_, held)| held.to_string())
    }

    /// The whole of it for the progress line: `waiting for CPU 1 — held by PID 4242 (…) for
    /// 12 s · up to 600 s`.
    pub fn cpu_wait_line(&self) -> Option<String> {
        let w = self.cpu_wait.as_ref()?;
        Some(format!(
            "{} · up to {} s",
            format::cpu_waiting(w.cpu, &w.holder, Some(self.waited(w))),
            w.limit.as_secs()
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::tui::demo;
    use crate::vocabulary::EngineEvent;

    #[test]
    fn a_queued_run_says_whom_it_waits_for_how_long_and_when_the_cpu_came_free() {
        let mut app = demo::finished();
        let _ = app.act(crate::tui::action::Action::Start);
        assert_eq!(app.run_word(), "preparing");
        app.clock = 50.0;
        app.apply(EngineEvent::CpuWaiting {
            cpu: 1,
            holder: "4242 (cyclescope run x\u{1b}[2J, writing runs/a)".into(),
            limit: Duration::from_secs(600),
        });
        app.clock = 62.4;
        assert_eq!(app.run_word(), "waiting for CPU 1 · 12 s");
        let line = crate::tui::panel::progress::status_line(&app);
        assert!(
            line.starts_with("⏸ waiting for CPU 1 — held by PID 4242 (cyclescope run x")
                && line.ends_with(", writing runs/a) for 12 s · up to 600 s"),
            "{line}"
        );
        assert!(
            !line.contains('\u{1b}'),
            "the holder's note is escaped: {line}"
        );
        app.apply(EngineEvent::CpuFree {
            cpu: 1,
            waited: Duration::from_secs(14),
        });
        assert_eq!(app.run_word(), "preparing");
        assert_eq!(
            app.log.last().map(|l| l.text.as_str()),
            Some("CPU 1 free after 14 s")
        );
    }
}
