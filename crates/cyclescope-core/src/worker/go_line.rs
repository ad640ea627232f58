//! The go line of a worker (`WorkerCommand::go_line`): a line the parent writes on the worker's
//! stdin only after the worker's first protocol line, with the worker's CPU clock read just
//! before it and again after the first batch of lines that follows. What the worker does with the
//! line happens inside that window, and the kernel's clock, which nothing in the worker can
//! write, says how much CPU time it took.

use std::io::Write;
use std::time::Duration;

use super::group::Group;

/// The go line and the worker's CPU clock around it: read just before the line is written,
/// and again after every batch of protocol lines that follows.
pub(super) struct GoLine<'a> {
    line: Option<&'a str>,
    stdin: Option<std::process::ChildStdin>,
    at_go: Option<Duration>,
    last: Option<Duration>,
}

impl<'a> GoLine<'a> {
    pub(super) fn new(line: Option<&'a str>, stdin: Option<std::process::ChildStdin>) -> Self {
        Self {
            stdin: line.and(stdin),
            line,
            at_go: None,
            last: None,
        }
    }

    /// Writes the line once (the clock read first), then closes stdin.
    pub(super) fn send(&mut self, group: &Group) {
        let (Some(line), Some(mut stdin)) = (self.line.take(), self.stdin.take()) else {
            return;
        };
        self.at_go = group.process_cpu_time();
        // A worker that is gone cannot take it: its end tells why.
        let _ = stdin.write_all(format!("{line}\n").as_bytes());
    }

    /// The first batch of lines after the go line ends the window: what the worker does
    /// after its first line (reporting, exiting) is not what the line asked of it.
    pub(super) fn after_lines(&mut self, group: &Group) {
        if self.at_go.is_some() && self.last.is_none() {
            self.last = group.process_cpu_time();
        }
    }

    pub(super) fn window(&self) -> Option<Duration> {
        Some(self.last?.saturating_sub(self.at_go?))
    }
}
