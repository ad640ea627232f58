//! Cycle counters: `perf_event` user-mode core cycles of the calling thread, the reference
//! counter of the architecture (TSC on x86-64, `cntvct_el0` on AArch64) read unserialised for
//! loop timing and serialised for per-call stamps, the loop counter that picks the best of them,
//! the timer-overhead measurement and the clock probe (the raw reads themselves, which the trial
//! worker shares, are `cyclescope-counter-raw`'s). Together with `plugin` this is the only
//! module allowed `unsafe`, and every block says why it is sound. It never decides whether a
//! host is fit to measure on (that is `host`), and never converts cycles to time.

pub mod callgrind;
mod clock;
mod perf;
mod run_counter;
pub mod witness;

// The pieces the trial worker reads the same way live in `cyclescope-counter-raw`, which the
// worker links too.
pub(crate) use cyclescope_counter_raw::perf_attr;
pub(crate) use cyclescope_counter_raw::reference::reference_now;

/// The architecture's reference counter, by the name records give it (None: there is none).
pub(crate) const REFERENCE_SOURCE: Option<CycleSource> =
    match cyclescope_counter_raw::reference::REFERENCE {
        Some(ReferenceCounter::Tsc) => Some(CycleSource::Tsc),
        Some(ReferenceCounter::Cntvct) => Some(CycleSource::Cntvct),
        None => None,
    };

pub use clock::{ClockProbe, ClockProbeConfig, clock_probe, monotonic_raw_ns};
pub use perf::PerfCycles;
pub use run_counter::{NoHardwareInstructions, RunCounter};

use cyclescope_counter_raw::reference::ReferenceCounter;
use nix::errno::Errno;
use serde::{Deserialize, Serialize};

/// What a cycle count counts. Named in every record, because the two kinds differ by the ratio
/// of the core clock to the reference clock (turbo, throttling, a pinned lower frequency).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CycleSource {
    /// `perf_event_open(PERF_COUNT_HW_CPU_CYCLES)`, user mode only: core cycles, the guide's unit.
    #[serde(rename = "perf_event:cpu-cycles:u")]
    PerfUserCycles,
    /// The x86-64 time-stamp counter: constant-rate reference cycles.
    #[serde(rename = "tsc")]
    Tsc,
    /// The AArch64 virtual counter `cntvct_el0`: reference ticks at `cntfrq_el0`.
    #[serde(rename = "cntvct_el0")]
    Cntvct,
    /// Instructions the candidate executed, counted exactly under valgrind's callgrind
    /// (`callgrind`). A record of this source holds instructions where others hold cycles.
    #[serde(rename = "valgrind:callgrind:Ir")]
    CallgrindInstructions,
    /// `perf_event_open(PERF_COUNT_HW_INSTRUCTIONS)`, user mode only: retired instructions by
    /// the PMU. Near-exact, not exact (interrupts, speculation at the edges): timed trials
    /// and their interval, where callgrind counts once.
    #[serde(rename = "perf_event:instructions:u")]
    PerfUserInstructions,
}

/// What a run counts (`--counter`): cycles (the guide's unit, perf_event or the reference
/// counter) or instructions (exact under valgrind, or the PMU's `instructions:u`; `RunCounter`
/// says which). Ratios and Δ divide only within one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Counter {
    #[default]
    Cycles,
    Instructions,
}

impl Counter {
    pub fn name(self) -> &'static str {
        match self {
            Counter::Cycles => "cycles",
            Counter::Instructions => "instructions",
        }
    }

    /// The unit a figure of this counter is shown in, per call.
    pub fn unit(self) -> &'static str {
        match self {
            Counter::Cycles => "cycles",
            Counter::Instructions => "instr",
        }
    }
}

/// Whether a source follows the core clock or a fixed reference clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CycleKind {
    Core,
    Reference,
    Instructions,
}

impl CycleSource {
    /// The stable name written to records (`"perf_event:cpu-cycles:u"`, `"tsc"`, `"cntvct_el0"`).
    pub fn name(self) -> &'static str {
        match self {
            CycleSource::PerfUserCycles => "perf_event:cpu-cycles:u",
            CycleSource::Tsc => "tsc",
            CycleSource::Cntvct => "cntvct_el0",
            CycleSource::CallgrindInstructions => "valgrind:callgrind:Ir",
            CycleSource::PerfUserInstructions => "perf_event:instructions:u",
        }
    }

    /// Parses a record name back (the inverse of [`CycleSource::name`]).
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        [
            Self::PerfUserCycles,
            Self::Tsc,
            Self::Cntvct,
            Self::CallgrindInstructions,
            Self::PerfUserInstructions,
        ]
        .into_iter()
        .find(|s| s.name() == name)
    }

    pub(crate) fn kind(self) -> CycleKind {
        match self {
            CycleSource::PerfUserCycles => CycleKind::Core,
            CycleSource::Tsc | CycleSource::Cntvct => CycleKind::Reference,
            CycleSource::CallgrindInstructions | CycleSource::PerfUserInstructions => {
                CycleKind::Instructions
            }
        }
    }

    /// What this source counts.
    pub fn counter(self) -> Counter {
        match self.kind() {
            CycleKind::Instructions => Counter::Instructions,
            CycleKind::Core | CycleKind::Reference => Counter::Cycles,
        }
    }

    /// True for an exact count (no interval needed between two of them).
    pub fn is_exact(self) -> bool {
        self == CycleSource::CallgrindInstructions
    }

    /// True for the architecture's reference counter (TSC, `cntvct_el0`): ticks at the rate the
    /// clock probe measures, whatever the core does.
    pub(crate) fn counts_reference_ticks(self) -> bool {
        self.kind() == CycleKind::Reference
    }

    /// True for core cycles (the guide's unit), false for reference cycles.
    pub fn counts_core_cycles(self) -> bool {
        self.kind() == CycleKind::Core
    }
}

impl std::fmt::Display for CycleSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An optional counter as records and journals name it: its name, or `""` when none was
/// reported (a job that failed before its worker said which counter it opened). `"none"`, which
/// older workers sent when no per-call counter existed, reads as none too.
pub(crate) mod source_or_empty {
    use super::CycleSource;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(
        v: &Option<CycleSource>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.serialize_str(v.map_or("", CycleSource::name))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<CycleSource>, D::Error> {
        let name = String::deserialize(d)?;
        match name.as_str() {
            "" | "none" => Ok(None),
            other => CycleSource::from_name(other).map(Some).ok_or_else(|| {
                serde::de::Error::custom(format!("unknown cycle counter {other:?}"))
            }),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CounterError {
    #[error(
        "no hardware cycle counter (perf_event_open: {errno:?}): the kernel exposes no PMU for \
         cpu-cycles, as in most virtual machines"
    )]
    NoPmu { errno: Errno },
    #[error(
        "perf_event_open: {errno:?}: user cycle counting is not permitted (kernel.perf_event_paranoid \
         above 2, or a seccomp/container policy)"
    )]
    NotPermitted { errno: Errno },
    /// ENOSYS: there is no perf_event_open to ask at all — a kernel built without perf events,
    /// or a user-mode emulator (qemu-user) that does not pass the call through.
    #[error(
        "perf_event_open is not implemented here ({errno:?}): a kernel without perf events, or \
         an emulator such as qemu-user"
    )]
    Unimplemented { errno: Errno },
    #[error("perf_event_open failed: {errno:?} ({errno})")]
    Open { errno: Errno },
    #[error("this architecture has no reference cycle counter cyclescope knows (TSC, cntvct_el0)")]
    NoReferenceCounter,
    #[error("cannot pin the probing thread to CPU {cpu}: {errno:?}")]
    Pin { cpu: usize, errno: Errno },
    #[error(
        "perf_event_open succeeds but the cycle counter reads 0 over a busy loop (a PMU that does not count)"
    )]
    NoCount,
}

impl CounterError {
    /// Classifies a failed `perf_event_open` by its errno.
    pub(crate) fn from_open_errno(errno: Errno) -> Self {
        match errno {
            Errno::ENOENT | Errno::ENODEV | Errno::EOPNOTSUPP => CounterError::NoPmu { errno },
            Errno::EACCES | Errno::EPERM => CounterError::NotPermitted { errno },
            Errno::ENOSYS => CounterError::Unimplemented { errno },
            _ => CounterError::Open { errno },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_names_round_trip_and_match_serde() {
        for s in [
            CycleSource::PerfUserCycles,
            CycleSource::Tsc,
            CycleSource::Cntvct,
            CycleSource::CallgrindInstructions,
            CycleSource::PerfUserInstructions,
        ] {
            assert_eq!(CycleSource::from_name(s.name()), Some(s));
            assert_eq!(
                serde_json::to_string(&s).unwrap(),
                format!("\"{}\"", s.name())
            );
        }
        assert!(CycleSource::PerfUserCycles.counts_core_cycles());
        assert!(!CycleSource::Tsc.counts_core_cycles());
        // Hardware instructions are instructions, but timed: not valgrind's exact count.
        let hw = CycleSource::PerfUserInstructions;
        assert_eq!(hw.counter(), Counter::Instructions);
        assert!(!hw.is_exact() && !hw.counts_core_cycles() && !hw.counts_reference_ticks());
        assert!(CycleSource::Tsc.counts_reference_ticks());
    }

    #[test]
    fn open_errors_are_classified() {
        assert!(matches!(
            CounterError::from_open_errno(Errno::ENOENT),
            CounterError::NoPmu { .. }
        ));
        assert!(matches!(
            CounterError::from_open_errno(Errno::EACCES),
            CounterError::NotPermitted { .. }
        ));
        assert!(matches!(
            CounterError::from_open_errno(Errno::EINVAL),
            CounterError::Open { .. }
        ));
    }

    /// The trial worker's loop counter (its own module, compiled here for the test) counts,
    /// and says why when it is not perf_event.
    #[test]
    fn the_trial_workers_loop_counter_counts_something() {
        use crate::companion::counter::{CycleSource as WorkerSource, LoopCounter};
        let (mut c, refusal) = LoopCounter::open(None);
        c.start();
        let mut x = 0u64;
        for i in 0..10_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        let n = c.stop();
        assert!(n > 0, "{:?} counted 0", c.source());
        assert_eq!(
            refusal.is_none(),
            c.source() == WorkerSource::PerfUserCycles
        );
        // Its names are the engine's.
        for (theirs, ours) in [
            (WorkerSource::PerfUserCycles, CycleSource::PerfUserCycles),
            (
                WorkerSource::PerfUserInstructions,
                CycleSource::PerfUserInstructions,
            ),
            (WorkerSource::Tsc, CycleSource::Tsc),
            (WorkerSource::Cntvct, CycleSource::Cntvct),
        ] {
            assert_eq!(theirs.name(), ours.name());
        }
        assert_eq!(
            crate::companion::counter::REFERENCE_SOURCE.map(|s| s.name()),
            REFERENCE_SOURCE.map(CycleSource::name)
        );
    }

    /// The trial worker's perf_event path — open, the counting check, start, stop, the
    /// running == enabled and non-zero checks of every trial — with the software task clock,
    /// so a machine without a PMU (CI) runs the code hardware cycles take.
    #[test]
    fn the_trial_workers_perf_path_runs_with_a_software_event() {
        use crate::companion::counter::{CycleSource as WorkerSource, LoopCounter};
        use crate::companion::perf_attr::PerfEventAttr;
        let paranoid: i32 = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(3);
        let (mut c, refusal) = LoopCounter::open_event(PerfEventAttr::task_clock());
        if paranoid > 2
            || matches!(refusal, Some(crate::companion::counter::PerfRefusal::Errno(e)) if e == libc::ENOSYS)
        {
            return;
        }
        assert_eq!(
            refusal, None,
            "the task clock must open and count (paranoid {paranoid})"
        );
        assert_eq!(c.source(), WorkerSource::PerfUserCycles);
        let mut last = 0;
        for _ in 0..3 {
            c.start();
            let mut x = 0u64;
            for i in 0..200_000u64 {
                x = std::hint::black_box(x.wrapping_add(i));
            }
            last = c.stop_checked().expect("a whole, non-zero reading");
            assert!(last > 0);
        }
        // Stopped, it counts no further: a second reading is the same figure.
        assert_eq!(c.stop_checked(), Ok(last));
    }

    #[test]
    fn the_trial_workers_timer_overhead_is_measured() {
        // A coarse reference counter (cntvct_el0 at tens of MHz, as under qemu) can read the
        // same tick twice: 0 is a valid median there.
        let median = crate::companion::counter::timer_overhead().expect("a buffer");
        assert!(median < 1_000_000, "{median}");
    }
}
