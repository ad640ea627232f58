//! The physical floor: a trial that claims more bytes per unit of its counter than any core
//! can load is IMPLAUSIBLE, never a figure. A hash must read every byte of its message, and
//! the widest load path shipped on x86-64 (two 64-byte AVX-512 loads per cycle: Ice Lake and
//! later, Zen 5) and on AArch64 (two 64-byte SVE loads per cycle: A64FX) moves 128 bytes per
//! core cycle from L1. That bounds figures counted in core cycles (perf_event). The reference
//! counters (the TSC, `cntvct_el0`) tick at a fixed rate whatever the core's clock, so for them
//! — and for every trial, as a second bound — the floor is per nanosecond of the trial's
//! CLOCK_MONOTONIC_RAW time: 128 bytes per cycle at 6.5 GHz, above any shipped core's clock.

use crate::measure::stats::Trial;
use crate::vocabulary::{FailureKind, JobFailure};

/// Most message bytes a core can load per core cycle (x86-64 and AArch64 alike).
pub const MAX_BYTES_PER_CORE_CYCLE: f64 = 128.0;
/// The highest core clock the time bound allows, Hz.
pub const MAX_CORE_CLOCK_HZ: f64 = 6.5e9;
/// Most message bytes a core can load per nanosecond.
pub const MAX_BYTES_PER_NS: f64 = MAX_BYTES_PER_CORE_CYCLE * MAX_CORE_CLOCK_HZ / 1e9;

/// IMPLAUSIBLE when a trial of `input_bytes`-byte calls claims more than a core can load;
/// `core_cycles` says whether its cycles are core cycles (else reference ticks).
pub(crate) fn check(
    trials: &[Trial],
    input_bytes: u64,
    core_cycles: bool,
) -> Result<(), JobFailure> {
    for (i, t) in trials.iter().enumerate() {
        let bytes = input_bytes as f64 * t.measurements as f64;
        if bytes == 0.0 {
            continue;
        }
        let per_cycle = bytes / t.cycles as f64;
        if core_cycles && per_cycle > MAX_BYTES_PER_CORE_CYCLE {
            return Err(implausible(
                i,
                format!(
                    "{per_cycle:.0} bytes per core cycle, more than the {MAX_BYTES_PER_CORE_CYCLE:.0} a core can load"
                ),
            ));
        }
        let per_ns = bytes / (t.seconds * 1e9);
        if per_ns > MAX_BYTES_PER_NS {
            return Err(implausible(
                i,
                format!(
                    "{per_ns:.0} bytes per nanosecond, more than the {MAX_BYTES_PER_NS:.0} a core \
                     can load ({MAX_BYTES_PER_CORE_CYCLE:.0} bytes per cycle at {:.1} GHz)",
                    MAX_CORE_CLOCK_HZ / 1e9
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
