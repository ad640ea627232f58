//! The x86-64 time-stamp counter: constant-rate reference cycles. `reference_now` is a bare
//! `rdtsc` for loop timing (whole loops amortise its reordering); the stamp pair is serialised
//! so that a per-call sample brackets exactly the call. Never used as the guide's cycle figure
//! when perf_event core cycles are available.

use core::arch::x86_64::{__rdtscp, _mm_lfence, _rdtsc};

use super::ReferenceCounter;

/// The counter [`reference_now`] and the stamps read.
pub const REFERENCE: Option<ReferenceCounter> = Some(ReferenceCounter::Tsc);

/// Unserialised `rdtsc`.
#[inline(always)]
pub fn reference_now() -> u64 {
    // SAFETY: `rdtsc` reads a register every x86-64 CPU has; it touches no memory.
    unsafe { _rdtsc() }
}

/// `lfence; rdtsc`: the stamp is taken after every earlier instruction has completed locally,
/// so nothing before it leaks into the timed region.
#[inline(always)]
pub fn stamp_start() -> u64 {
    // SAFETY: `lfence` and `rdtsc` exist on every x86-64 CPU (SSE2 is baseline); they only
    // order execution and read the counter.
    unsafe {
        _mm_lfence();
        _rdtsc()
    }
}

/// `rdtscp; lfence`: `rdtscp` waits for earlier instructions (the timed call) to finish and the
/// fence keeps later ones from starting before the stamp is read.
#[inline(always)]
pub fn stamp_end() -> u64 {
    let mut aux = 0u32;
    // SAFETY: `rdtscp` writes IA32_TSC_AUX through a pointer to a live local `u32`; every
    // x86-64 CPU of the last fifteen years implements it (cpuinfo flag `rdtscp`).
    unsafe {
        let t = __rdtscp(&mut aux);
        _mm_lfence();
        t
    }
}
