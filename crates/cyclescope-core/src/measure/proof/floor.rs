//! The physical floor: a trial that claims more bytes per unit of its counter than this CPU can
//! load is IMPLAUSIBLE, never a figure. A hash must read every byte of its message, and a core
//! loads at most two vectors of its widest kind a cycle from L1: 2 × 64 bytes with AVX-512 (or
//! SVE at 512 bits), 2 × 32 with AVX, 2 × 16 otherwise — read from this machine's CPU flags. That
//! bounds figures counted in core cycles (perf_event). The reference counters (the TSC,
//! `cntvct_el0`) tick at a fixed rate whatever the core's clock, so for them — and for every
//! trial, as a second bound — the floor is per nanosecond of the trial's CLOCK_MONOTONIC_RAW
//! time, at the highest clock this CPU may run at: 1.5 times the clock the host check found
//! (cpufreq's maximum, else the probed clock: room for turbo beyond it), and never above
//! 6.5 GHz, above any shipped core's clock. Without either fact, the widest path of any x86-64 or
//! AArch64 core (128 bytes a cycle) at 6.5 GHz.

use std::sync::OnceLock;

use crate::measure::stats::Trial;
use crate::vocabulary::{FailureKind, JobFailure};

/// Most message bytes any core can load per core cycle (x86-64 and AArch64 alike).
pub const MAX_BYTES_PER_CORE_CYCLE: f64 = 128.0;
/// The highest core clock any core runs at, Hz.
pub const MAX_CORE_CLOCK_HZ: f64 = 6.5e9;
/// Most message bytes any core can load per nanosecond.
pub const MAX_BYTES_PER_NS: f64 = MAX_BYTES_PER_CORE_CYCLE * MAX_CORE_CLOCK_HZ / 1e9;
/// Room above the host check's clock for turbo (the probed clock is the base, or the TSC's).
const TURBO_HEADROOM: f64 = 1.5;

/// What this machine's cores can load: bytes a core cycle, and the highest clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Floor {
    pub bytes_per_core_cycle: f64,
    pub max_core_hz: f64,
}

impl Floor {
    /// Any core at all.
    pub const ANY_CORE: Floor = Floor {
        bytes_per_core_cycle: MAX_BYTES_PER_CORE_CYCLE,
        max_core_hz: MAX_CORE_CLOCK_HZ,
    };

    /// This machine's floor: its CPU flags' widest load, and `clock_hz` (the host check's fixed
    /// clock) with turbo headroom.
    pub(crate) fn of_this_host(clock_hz: Option<f64>) -> Self {
        static WIDTH: OnceLock<f64> = OnceLock::new();
        let width = *WIDTH.get_or_init(|| {
            std::fs::read_to_string("/proc/cpuinfo")
                .map_or(MAX_BYTES_PER_CORE_CYCLE, |c| load_bytes_per_cycle(&c))
        });
        Self::new(width, clock_hz)
    }

    fn new(bytes_per_core_cycle: f64, clock_hz: Option<f64>) -> Self {
        Self {
            bytes_per_core_cycle: bytes_per_core_cycle.min(MAX_BYTES_PER_CORE_CYCLE),
            max_core_hz: clock_hz
                .filter(|hz| *hz > 0.0)
                .map_or(MAX_CORE_CLOCK_HZ, |hz| {
                    (hz * TURBO_HEADROOM).min(MAX_CORE_CLOCK_HZ)
                }),
        }
    }

    /// Bytes a nanosecond.
    pub fn bytes_per_ns(&self) -> f64 {
        self.bytes_per_core_cycle * self.max_core_hz / 1e9
    }
}

/// Two loads a cycle of the widest vector `/proc/cpuinfo`'s flags name.
fn load_bytes_per_cycle(cpuinfo: &str) -> f64 {
    let flags: Vec<&str> = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags") || l.starts_with("Features"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.split_whitespace().collect())
        .unwrap_or_default();
    if flags.is_empty() {
        return MAX_BYTES_PER_CORE_CYCLE;
    }
    let has = |f: &str| flags.contains(&f);
    2.0 * if has("avx512f") || has("sve") {
        64.0
    } else if has("avx") {
        32.0
    } else {
        16.0
    }
}

/// IMPLAUSIBLE when a trial of `input_bytes`-byte calls claims more than `floor` lets a core
/// load; `core_cycles` says whether its cycles are core cycles (else reference ticks).
pub(crate) fn check(
    trials: &[Trial],
    input_bytes: u64,
    core_cycles: bool,
    floor: &Floor,
) -> Result<(), JobFailure> {
    for (i, t) in trials.iter().enumerate() {
        let bytes = input_bytes as f64 * t.measurements as f64;
        if bytes == 0.0 {
            continue;
        }
        let per_cycle = bytes / t.cycles as f64;
        let max_cycle = floor.bytes_per_core_cycle;
        if core_cycles && per_cycle > max_cycle {
            return Err(implausible(
                i,
                format!(
                    "{per_cycle:.0} bytes per core cycle, more than the {max_cycle:.0} this CPU can load"
                ),
            ));
        }
        let per_ns = bytes / (t.seconds * 1e9);
        let max_ns = floor.bytes_per_ns();
        if per_ns > max_ns {
            return Err(implausible(
                i,
                format!(
                    "{per_ns:.0} bytes per nanosecond, more than the {max_ns:.0} this CPU can load \
                     ({max_cycle:.0} bytes per cycle at {:.1} GHz)",
                    floor.max_core_hz / 1e9
                ),
            ));
        }
    }
    Ok(())
}

fn implausible(trial: usize, what: String) -> JobFailure {
    JobFailure::new(
        FailureKind::Implausible,
        format!(
            "trial {} claims {what}: the library cannot have read its whole message, so the figure is refused",
            trial + 1
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_widest_load_comes_from_the_flags_and_the_clock_from_the_host_check() {
        let flags = |f: &str| format!("processor\t: 0\nflags\t\t: fpu sse2 {f}\n");
        assert_eq!(load_bytes_per_cycle(&flags("avx2 avx512f")), 128.0);
        assert_eq!(load_bytes_per_cycle(&flags("avx avx2")), 64.0);
        assert_eq!(load_bytes_per_cycle(&flags("")), 32.0);
        assert_eq!(load_bytes_per_cycle("Features\t: fp asimd sve\n"), 128.0);
        assert_eq!(load_bytes_per_cycle("nothing"), MAX_BYTES_PER_CORE_CYCLE);
        let f = Floor::new(64.0, Some(2.6e9));
        assert!((f.bytes_per_ns() - 64.0 * 3.9).abs() < 1e-9);
        assert_eq!(Floor::new(64.0, Some(6e9)).max_core_hz, MAX_CORE_CLOCK_HZ);
        assert_eq!(Floor::new(64.0, None).max_core_hz, MAX_CORE_CLOCK_HZ);
        // The forgery: 300 TSC cycles a call at 64 KiB on a 2.6 GHz AVX-512 host.
        let forged = [Trial {
            measurements: 100,
            seconds: 100.0 * 300.0 / 2.6e9,
            cycles: 100 * 300,
        }];
        let floor = Floor::new(128.0, Some(2.6e9));
        assert!(check(&forged, 65_536, false, &Floor::ANY_CORE).is_ok());
        let f = check(&forged, 65_536, false, &floor).unwrap_err();
        assert!(f.detail.contains("this CPU can load"), "{}", f.detail);
    }
}
