//! How a worker ended, and what the parent saw of it.

use std::time::Duration;

use super::{Stopped, observed, sandbox};

/// How a worker ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal {
        number: i32,
        name: String,
    },
    TimedOut(Duration),
    /// A process of the worker was found stopped (`SIGSTOP`, `SIGTSTP`, …); the parent killed
    /// the group rather than wait for a continue that never comes.
    Stopped(Stopped),
    Cancelled,
    /// The parent stopped the worker: its protocol stream held something the worker does not
    /// write (a line without the session token, garbage, a message out of order).
    Tampered(String),
    /// The parent saw a task of the worker off the CPU, policy or priority it was given.
    Moved(String),
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(c) => write!(f, "exit={c}"),
            Exit::Signal { name, .. } => write!(f, "signal={name}"),
            Exit::TimedOut(d) => write!(f, "timeout after {:.1} s", d.as_secs_f64()),
            Exit::Stopped(s) => write!(f, "stopped: {s}"),
            Exit::Cancelled => write!(f, "cancelled"),
            Exit::Tampered(why) => write!(f, "tampered: {why}"),
            Exit::Moved(why) => write!(f, "moved: {why}"),
        }
    }
}

/// The end of a worker: how it exited, the tail of its stderr, and what the parent saw of it
/// from outside — its wall time by the parent's clock and, when it ended by itself, its CPU
/// time (user + system) by the kernel's account.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub exit: Exit,
    pub stderr_tail: String,
    /// The stderr line where valgrind named an instruction it cannot decode, wherever it
    /// fell (the tail may have lost it).
    pub(crate) undecoded: Option<String>,
    pub(crate) wall: Duration,
    pub(crate) cpu: Option<Duration>,
    /// The limit the worker ran into, in words (` (exceeded …)`), or "".
    pub limit_note: String,
    /// The forbidden system call the sandbox killed it on, when the kernel's log names it.
    pub sandbox_call: Option<&'static str>,
    /// With a go line: the worker's CPU time (every thread) from just before the go line was
    /// written to its next protocol lines, by the kernel's clock (`go_line`), or why the
    /// window is void.
    pub(crate) cpu_after_go: Option<Result<Duration, &'static str>>,
    /// The most memory the worker and all it started held at once, by its control group's
    /// account (from outside: nothing in the worker can change it); None without cgroups.
    pub peak_memory_bytes: Option<u64>,
    /// The CPU time of everything that ran in the worker's control group (threads, and
    /// processes it forked, those gone included), by the group's account
    /// (`jail::cgroup::Cgroup::cpu_time`); None without one.
    pub group_cpu: Option<Duration>,
    /// The protections the worker was under, read from outside when it first spoke; None
    /// when it never spoke.
    pub protections: Option<observed::Protections>,
}

impl Outcome {
    /// What is known of why the worker died, beyond its signal: the sandbox (and the call it
    /// stopped), or the limit it ran into; "" when nothing is.
    pub fn death_note(&self) -> String {
        let sandbox = match &self.exit {
            Exit::Signal { number, .. } => sandbox::signal_note(*number, self.sandbox_call),
            _ => String::new(),
        };
        sandbox + &self.limit_note
    }
}
