//! The AArch64 virtual counter `cntvct_el0`: reference ticks at `cntfrq_el0` (often 19.2 MHz to
//! 1 GHz, far below the core clock). An `isb` before the read keeps it from being taken early;
//! `reference_now` skips it for loop timing. Never used as the guide's cycle figure when
//! perf_event core cycles are available.

use core::arch::asm;

use super::ReferenceCounter;

/// The counter [`reference_now`] and the stamps read.
pub const REFERENCE: Option<ReferenceCounter> = Some(ReferenceCounter::Cntvct);

/// Unserialised `mrs cntvct_el0`.
#[inline(always)]
pub fn reference_now() -> u64 {
    let t: u64;
    // SAFETY: Linux enables EL0 access to the virtual counter; the read has no side effects.
    // (No `nomem`: memory accesses must not be moved across a timestamp.)
    unsafe { asm!("mrs {}, cntvct_el0", out(reg) t, options(nostack, preserves_flags)) };
    t
}

/// `isb; mrs cntvct_el0`: the barrier makes earlier instructions complete before the read.
#[inline(always)]
pub fn stamp_start() -> u64 {
    let t: u64;
    // SAFETY: as for `reference_now`; `isb` only synchronises the instruction stream.
    unsafe { asm!("isb", "mrs {}, cntvct_el0", out(reg) t, options(nostack, preserves_flags)) };
    t
}

/// `isb; mrs cntvct_el0; isb`: the timed call has completed before the read, and later
/// instructions do not start before it.
#[inline(always)]
pub fn stamp_end() -> u64 {
    let t: u64;
    // SAFETY: as for `stamp_start`.
    unsafe {
        asm!("isb", "mrs {}, cntvct_el0", "isb", out(reg) t, options(nostack, preserves_flags))
    };
    t
}
