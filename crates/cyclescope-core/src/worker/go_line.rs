//! The go line of a worker (`WorkerCommand::go_line`): a line the parent writes on the worker's
//! stdin only after the worker's first protocol line, and an acknowledgement after the first
//! protocol lines that follow. Around each the parent reads the worker's CPU clock — the
//! kernel's, which nothing in the worker can write — while the worker sits blocked on stdin:
//! the kernel brings a task's CPU time up to date when it leaves the CPU, not while it runs on
//! another one (a remote reading lags by up to a scheduler tick), so the window between the two
//! readings is exact for the thread that waits. What the worker does with the line happens
//! inside that window.

use std::io::Write;
use std::time::{Duration, Instant};

use super::group::Group;

/// How long the worker may take to block on stdin after a protocol line before its window is
/// void (an honest worker reads stdin right after writing the line).
const BLOCK_WAIT: Duration = Duration::from_secs(2);

/// The go line and the worker's CPU clock around the work it asks for.
pub(super) struct GoLine<'a> {
    line: Option<&'a str>,
    stdin: Option<std::process::ChildStdin>,
    at_go: Option<Duration>,
    at_end: Option<Duration>,
    /// Why there is no window although a go line was given.
    void: Option<&'static str>,
}

impl<'a> GoLine<'a> {
    pub(super) fn new(line: Option<&'a str>, stdin: Option<std::process::ChildStdin>) -> Self {
        Self {
            stdin: line.and(stdin),
            line,
            at_go: None,
            at_end: None,
            void: None,
        }
    }

    /// Writes the go line once, the clock read first with the worker blocked on stdin.
    pub(super) fn send(&mut self, group: &Group) {
        let (Some(line), Some(stdin)) = (self.line.take(), self.stdin.as_mut()) else {
            return;
        };
        self.at_go = clock_while_blocked(group);
        if self.at_go.is_none() {
            self.void = Some("the worker did not wait for its go line");
        }
        // A worker that is gone cannot take it: its end tells why.
        let _ = stdin.write_all(format!("{line}\n").as_bytes());
    }

    /// The first batch of lines after the go line ends the window: the clock is read once the
    /// worker blocks for its acknowledgement, which is then written and stdin closed.
    pub(super) fn after_lines(&mut self, group: &Group) {
        if self.at_go.is_none() || self.at_end.is_some() || self.void.is_some() {
            return;
        }
        let Some(mut stdin) = self.stdin.take() else {
            return;
        };
        self.at_end = clock_while_blocked(group);
        if self.at_end.is_none() {
            self.void = Some("the worker did not wait after its trial line");
        }
        let _ = stdin.write_all(b"0\n");
    }

    /// The CPU time between the two readings, or why there is none.
    pub(super) fn window(&self) -> Option<Result<Duration, &'static str>> {
        if let Some(why) = self.void {
            return Some(Err(why));
        }
        let (Some(start), Some(end)) = (self.at_go, self.at_end) else {
            return self
                .at_go
                .map(|_| Err("the worker ended before its trial line"));
        };
        Some(Ok(end.saturating_sub(start)))
    }
}

/// The worker's CPU clock, read once its leader is blocked (asleep in the kernel); None when it
/// does not block within `BLOCK_WAIT` or the clock cannot be read.
fn clock_while_blocked(group: &Group) -> Option<Duration> {
    let deadline = Instant::now() + BLOCK_WAIT;
    while !group.leader_blocked() {
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    group.process_cpu_time()
}
