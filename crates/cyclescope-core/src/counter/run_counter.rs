//! What a run is told to count (`--counter`, the workbench's `i`): cycles by the guide's timed
//! trials, instructions exactly under valgrind, or the PMU's retired instructions through
//! perf_event in timed trials, and why the last cannot be had here. The campaign stores it so
//! a resumed run counts the same. It never opens a counter; which source a record names is the worker's report (`CycleSource`).

use serde::{Deserialize, Serialize};

use super::{Counter, CounterError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunCounter {
    /// Cycles: perf_event core cycles, else the reference counter.
    #[default]
    Cycles,
    /// Instructions counted exactly under valgrind's callgrind, one process per job.
    Instructions,
    /// Hardware `instructions:u` through perf_event, in the guide's timed trials; never the
    /// reference counter in their place.
    HwInstructions,
}

impl RunCounter {
    /// What its records hold, for ratios and Δ.
    pub fn counts(self) -> Counter {
        match self {
            RunCounter::Cycles => Counter::Cycles,
            RunCounter::Instructions | RunCounter::HwInstructions => Counter::Instructions,
        }
    }

    /// True for the count under valgrind: one process, no interval, no per-call phase.
    pub fn under_valgrind(self) -> bool {
        self == RunCounter::Instructions
    }

    /// The `--counter` word for it.
    pub fn flag(self) -> &'static str {
        match self {
            RunCounter::Cycles => "cycles",
            RunCounter::Instructions => "instructions",
            RunCounter::HwInstructions => "hw-instructions",
        }
    }
}

/// Why `--counter hw-instructions` cannot count on this machine: the run's refusal before any
/// job, and a job's failure when its worker finds the same.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--counter hw-instructions: the hardware instructions:u event {}; `--counter instructions` \
     counts instructions exactly, under valgrind, on any machine",
    why_no_instructions(.0)
)]
pub struct NoHardwareInstructions(pub CounterError);

fn why_no_instructions(cause: &CounterError) -> String {
    match cause {
        CounterError::NoPmu { errno } => format!(
            "does not open (perf_event_open: {errno:?}, {}): the kernel exposes no PMU for it, \
             as in most virtual machines",
            errno.desc()
        ),
        CounterError::NotPermitted { errno } => format!(
            "is not permitted (perf_event_open: {errno:?}, {}): kernel.perf_event_paranoid above \
             2, or a seccomp/container policy",
            errno.desc()
        ),
        CounterError::Unimplemented { errno } | CounterError::Open { errno } => format!(
            "does not open (perf_event_open: {errno:?}, {})",
            errno.desc()
        ),
        CounterError::NoCount => "opens but counts 0 over a busy loop".to_string(),
        other => format!("cannot be had ({other})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_counter_reads_back_and_older_campaigns_still_parse() {
        for c in [
            RunCounter::Cycles,
            RunCounter::Instructions,
            RunCounter::HwInstructions,
        ] {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.flag()));
            assert_eq!(serde_json::from_str::<RunCounter>(&json).unwrap(), c);
        }
        // What campaigns stored as a `Counter` before.
        for (c, now) in [
            (Counter::Cycles, RunCounter::Cycles),
            (Counter::Instructions, RunCounter::Instructions),
        ] {
            let old = serde_json::to_string(&c).unwrap();
            let read: RunCounter = serde_json::from_str(&old).unwrap();
            assert_eq!((read, read.counts()), (now, c));
        }
        assert_eq!(RunCounter::HwInstructions.counts(), Counter::Instructions);
        assert!(!RunCounter::HwInstructions.under_valgrind());
        assert!(RunCounter::Instructions.under_valgrind());
    }

    #[test]
    fn the_refusal_names_the_errno_and_the_counter_that_works_anywhere() {
        use nix::errno::Errno;
        for (cause, errno) in [
            (CounterError::from_open_errno(Errno::ENOENT), "ENOENT"),
            (
                CounterError::from_open_errno(Errno::EOPNOTSUPP),
                "EOPNOTSUPP",
            ),
            (CounterError::from_open_errno(Errno::EACCES), "EACCES"),
            (CounterError::from_open_errno(Errno::EINVAL), "EINVAL"),
        ] {
            let text = NoHardwareInstructions(cause).to_string();
            assert!(text.contains(errno), "{text}");
            assert!(text.contains("`--counter instructions`"), "{text}");
            assert!(!text.contains("cycle"), "{text}");
        }
        let silent = NoHardwareInstructions(CounterError::NoCount).to_string();
        assert!(silent.contains("counts 0"), "{silent}");
    }
}
