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

/// How many times at least the worker is looked at before its window is void, however long
/// this thread waited between looks.
const BLOCK_LOOKS: u32 = 1000;

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
        match clock_while_blocked(group) {
            Ok(at) => self.at_go = Some(at),
            Err(NotBlocked::Running) => self.void = Some("the worker did not wait for its go line"),
            Err(NotBlocked::Ended) => self.void = Some("the worker ended before its go line"),
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
        match clock_while_blocked(group) {
            Ok(at) => self.at_end = Some(at),
            Err(NotBlocked::Running) => {
                self.void = Some("the worker did not wait after its trial line");
            }
            Err(NotBlocked::Ended) => {
                self.void = Some("the worker ended after its trial line without waiting");
            }
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

/// The worker's CPU clock, read once its leader is blocked (asleep in the kernel); why not
/// when it ends first or is not seen blocked (`wait_until_blocked`).
fn clock_while_blocked(group: &Group) -> Result<Duration, NotBlocked> {
    let look = || match group.leader_blocked() {
        true => Look::Blocked,
        false if group.leader_ended() => Look::Ended,
        false => Look::Running,
    };
    wait_until_blocked(look, Instant::now() + BLOCK_WAIT)?;
    group.process_cpu_time().ok_or(NotBlocked::Ended)
}

/// What one look at the worker saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Look {
    Blocked,
    Running,
    Ended,
}

/// Looks at the worker until it is blocked; `Running` once both `deadline` and `BLOCK_LOOKS`
/// looks have passed without it. Both bounds must pass: on a loaded host this thread can
/// itself wait for a CPU longer than the worker takes to block, and the worker is judged only
/// by what was looked at.
fn wait_until_blocked(mut look: impl FnMut() -> Look, deadline: Instant) -> Result<(), NotBlocked> {
    let mut looks = 0u32;
    loop {
        match look() {
            Look::Blocked => return Ok(()),
            Look::Ended => return Err(NotBlocked::Ended),
            Look::Running => {}
        }
        looks += 1;
        if looks >= BLOCK_LOOKS && Instant::now() >= deadline {
            return Err(NotBlocked::Running);
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Why the worker's CPU clock was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NotBlocked {
    /// It ended (its clock goes with it).
    Ended,
    /// It never waited on stdin while it was looked at.
    Running,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The engine's thread, starved past the deadline right after its first look (as on a
    /// loaded host), still looks again: a worker that blocks a few looks later has its window.
    #[test]
    fn a_look_starved_past_the_deadline_is_not_the_workers_fault() {
        let deadline = Instant::now() + Duration::from_millis(5);
        let mut looks = 0;
        let seen = wait_until_blocked(
            || {
                looks += 1;
                if looks == 1 {
                    std::thread::sleep(Duration::from_millis(20));
                }
                if looks < 5 {
                    Look::Running
                } else {
                    Look::Blocked
                }
            },
            deadline,
        );
        assert_eq!(seen, Ok(()));
        assert_eq!(looks, 5);
    }

    #[test]
    fn a_worker_that_never_blocks_or_ends_is_named_apart() {
        let mut looks = 0u32;
        let past = Instant::now();
        let running = wait_until_blocked(
            || {
                looks += 1;
                Look::Running
            },
            past,
        );
        assert_eq!(running, Err(NotBlocked::Running));
        assert_eq!(looks, BLOCK_LOOKS);
        let ended = wait_until_blocked(|| Look::Ended, past + BLOCK_WAIT);
        assert_eq!(ended, Err(NotBlocked::Ended));
    }

    /// Real processes: one waiting on its stdin is read, one that has ended is named so (once
    /// ended: a running process is seen asleep now and then, in a page fault or its exec).
    #[test]
    fn a_real_worker_blocked_on_stdin_is_read_and_one_that_ends_is_named() {
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", "read x"])
            .stdin(std::process::Stdio::piped());
        let mut g = Group::spawn(&mut cmd, None, None).unwrap();
        assert!(clock_while_blocked(&g).is_ok());
        drop(g.child_mut().stdin.take());
        g.finish();
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", "exit 0"]);
        let g = Group::spawn(&mut cmd, None, None).unwrap();
        while !g.leader_ended() {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(clock_while_blocked(&g), Err(NotBlocked::Ended));
        g.finish();
    }
}
