//! The parent's view of a running worker from outside: the control-group bounds it is given,
//! and the looks at where its tasks are and how much address space it has had. It reads
//! `/proc` only; it never believes what the worker says about itself.

use std::time::Instant;

use super::{Exit, Limits, POLL_INTERVAL, place};

/// Processes and threads a worker's control group may hold: the worker, its threads (an
/// emulator's or valgrind's among them) and a few the candidate may start.
const WORKER_PIDS: u64 = 64;

/// A worker's control-group bounds: its address-space limit bounds the group's memory too
/// (what is resident never exceeds what is mapped; under valgrind the limit is valgrind's).
pub(super) fn group_limits(limits: &Limits) -> crate::jail::cgroup::CgroupLimits {
    crate::jail::cgroup::CgroupLimits {
        memory_bytes: limits.address_space_bytes,
        pids: WORKER_PIDS,
    }
}

/// The parent's looks at a running worker: where its tasks are (against what it was given)
/// and the largest address space it has had.
pub(super) struct Watch {
    expected: Option<place::Expected>,
    pub(super) pid: u32,
    last: Option<Instant>,
    pub(super) vm_peak_bytes: Option<u64>,
}

impl Watch {
    pub(super) fn new(expected: Option<place::Expected>, pid: u32) -> Self {
        Self {
            expected,
            pid,
            last: None,
            vm_peak_bytes: None,
        }
    }

    /// A look, at most once per poll interval (messages may arrive far more often).
    pub(super) fn look_now_and_then(&mut self) -> Option<Exit> {
        if self.last.is_some_and(|t| t.elapsed() < POLL_INTERVAL) {
            return None;
        }
        self.look()
    }

    /// The worker as it is now; `Moved` when a task of it left its place.
    pub(super) fn look(&mut self) -> Option<Exit> {
        self.last = Some(Instant::now());
        let expected = self.expected.as_ref()?;
        let seen = place::look(self.pid, expected);
        self.vm_peak_bytes = self.vm_peak_bytes.max(seen.vm_peak_bytes);
        seen.breach.map(Exit::Moved)
    }
}
