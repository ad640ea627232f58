//! Cycle counters: `perf_event` user-mode core cycles of the calling thread, the reference
//! counter of the architecture (TSC on x86-64, `cntvct_el0` on AArch64) read unserialised for
//! loop timing and serialised for per-call stamps, the loop counter that picks the best of them,
//! the timer-overhead measurement and the clock probe. Together with `plugin` this is the only
//! module allowed `unsafe`, and every block says why it is sound. It never decides whether a
//! host is fit to measure on (that is `host`), and never converts cycles to time.

mod clock;
mod perf;
pub mod witness;

#[cfg(target_arch = "aarch64")]
mod cntvct;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod no_reference;
#[cfg(target_arch = "x86_64")]
mod tsc;

#[cfg(target_arch = "aarch64")]
use cntvct as reference;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
use no_reference as reference;
#[cfg(target_arch = "x86_64")]
use tsc as reference;

pub use clock::{ClockProbe, ClockProbeConfig, clock_probe, monotonic_raw_ns};
pub use perf::PerfCycles;
pub(crate) use reference::{REFERENCE_SOURCE, reference_now, stamp_end, stamp_start};

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
}

/// Whether a source follows the core clock or a fixed reference clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CycleKind {
    Core,
    Reference,
}

impl CycleSource {
    /// The stable name written to records (`"perf_event:cpu-cycles:u"`, `"tsc"`, `"cntvct_el0"`).
    pub fn name(self) -> &'static str {
        match self {
            CycleSource::PerfUserCycles => "perf_event:cpu-cycles:u",
            CycleSource::Tsc => "tsc",
            CycleSource::Cntvct => "cntvct_el0",
        }
    }

    /// Parses a record name back (the inverse of [`CycleSource::name`]).
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        [Self::PerfUserCycles, Self::Tsc, Self::Cntvct]
            .into_iter()
            .find(|s| s.name() == name)
    }

    pub(crate) fn kind(self) -> CycleKind {
        match self {
            CycleSource::PerfUserCycles => CycleKind::Core,
            CycleSource::Tsc | CycleSource::Cntvct => CycleKind::Reference,
        }
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

/// The guide's loop counter: perf_event user cycles when the kernel gives them, else the
/// reference counter (labelled as reference cycles through [`LoopCounter::source`]).
#[derive(Debug)]
pub(crate) struct LoopCounter {
    inner: Inner,
    /// Why perf_event was not used, when it was not.
    perf_error: Option<CounterError>,
}

#[derive(Debug)]
enum Inner {
    Perf(PerfCycles),
    Reference { source: CycleSource, start: u64 },
}

impl LoopCounter {
    /// perf_event user cycles if they open and count, else the reference counter; an error
    /// only when neither exists.
    pub fn open() -> Result<Self, CounterError> {
        match PerfCycles::open_counting() {
            Ok(perf) => Ok(LoopCounter {
                inner: Inner::Perf(perf),
                perf_error: None,
            }),
            Err(e) => {
                let mut counter = Self::reference()?;
                counter.perf_error = Some(e);
                Ok(counter)
            }
        }
    }

    /// The reference counter only (an independent check of a perf-based figure).
    pub(crate) fn reference() -> Result<Self, CounterError> {
        let source = REFERENCE_SOURCE.ok_or(CounterError::NoReferenceCounter)?;
        Ok(LoopCounter {
            inner: Inner::Reference { source, start: 0 },
            perf_error: None,
        })
    }

    pub(crate) fn source(&self) -> CycleSource {
        match &self.inner {
            Inner::Perf(_) => CycleSource::PerfUserCycles,
            Inner::Reference { source, .. } => *source,
        }
    }

    /// Why the perf_event counter is not in use (None when it is, or was not tried).
    pub(crate) fn perf_error(&self) -> Option<&CounterError> {
        self.perf_error.as_ref()
    }

    #[inline]
    pub(crate) fn start(&mut self) {
        match &mut self.inner {
            Inner::Perf(p) => p.reset_enable(),
            Inner::Reference { start, .. } => *start = reference_now(),
        }
    }

    /// Counts since [`LoopCounter::start`] (0 if the perf counter could not be read).
    #[inline]
    pub(crate) fn stop(&mut self) -> u64 {
        match &mut self.inner {
            Inner::Perf(p) => p.disable_read(),
            Inner::Reference { start, .. } => reference_now().wrapping_sub(*start),
        }
    }
}

/// Cost of one serialised stamp pair (`stamp_start(); stamp_end()`), in reference ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TimerOverhead {
    pub(crate) source: CycleSource,
    pub(crate) median: u64,
    pub(crate) p99: u64,
    pub(crate) min: u64,
    pub(crate) repetitions: usize,
}

/// Default repetitions of [`timer_overhead`].
pub(crate) const TIMER_OVERHEAD_REPETITIONS: usize = 10_000;

/// Measures back-to-back serialised stamp pairs: what a per-call sample costs on its own, to be
/// subtracted from per-call samples and reported next to them.
pub(crate) fn timer_overhead(repetitions: usize) -> Result<TimerOverhead, CounterError> {
    let source = REFERENCE_SOURCE.ok_or(CounterError::NoReferenceCounter)?;
    let repetitions = repetitions.max(1);
    // u32, saturating: half the memory of u64 samples (this runs in the trial process, whose
    // peak RSS is published), and a pair that took 2^32 ticks is an outlier either way.
    let mut ticks: Vec<u32> = Vec::with_capacity(repetitions);
    // A few untimed pairs bring the instructions into cache.
    for _ in 0..16 {
        std::hint::black_box(stamp_end().wrapping_sub(stamp_start()));
    }
    for _ in 0..repetitions {
        let t0 = stamp_start();
        let t1 = stamp_end();
        ticks.push(u32::try_from(t1.wrapping_sub(t0)).unwrap_or(u32::MAX));
    }
    ticks.sort_unstable();
    Ok(TimerOverhead {
        source,
        median: u64::from(ticks[ticks.len() / 2]),
        p99: u64::from(ticks[(ticks.len() * 99 / 100).min(ticks.len() - 1)]),
        min: u64::from(ticks[0]),
        repetitions,
    })
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
        ] {
            assert_eq!(CycleSource::from_name(s.name()), Some(s));
            assert_eq!(
                serde_json::to_string(&s).unwrap(),
                format!("\"{}\"", s.name())
            );
        }
        assert!(CycleSource::PerfUserCycles.counts_core_cycles());
        assert!(!CycleSource::Tsc.counts_core_cycles());
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

    #[test]
    fn loop_counter_counts_something() {
        let mut c = LoopCounter::open().expect("a counter on x86-64/aarch64");
        c.start();
        let mut x = 0u64;
        for i in 0..10_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        let n = c.stop();
        assert!(n > 0, "{:?} counted 0", c.source());
        if c.source() != CycleSource::PerfUserCycles {
            assert!(c.perf_error().is_some());
        }
    }

    #[test]
    fn timer_overhead_is_ordered() {
        let o = timer_overhead(1000).unwrap();
        assert!(o.min <= o.median && o.median <= o.p99);
        assert_eq!(o.repetitions, 1000);
    }
}
