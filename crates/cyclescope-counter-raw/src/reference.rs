//! The reference counter of the architecture: TSC on x86-64, `cntvct_el0` on AArch64, none
//! elsewhere (only perf_event can count there). `reference_now` is read unserialised for
//! loop timing, `stamp_start`/`stamp_end` serialised around a single call. Each user names
//! the counter in its own vocabulary from [`REFERENCE`].

#[cfg(target_arch = "aarch64")]
mod cntvct;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod none;
#[cfg(target_arch = "x86_64")]
mod tsc;

#[cfg(target_arch = "aarch64")]
pub use cntvct::{REFERENCE, reference_now, stamp_end, stamp_start};
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub use none::{REFERENCE, reference_now, stamp_end, stamp_start};
#[cfg(target_arch = "x86_64")]
pub use tsc::{REFERENCE, reference_now, stamp_end, stamp_start};

/// Which reference counter this architecture has (records call them `tsc` and `cntvct_el0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReferenceCounter {
    /// The x86-64 time-stamp counter: constant-rate reference cycles.
    Tsc,
    /// The AArch64 virtual counter: reference ticks at `cntfrq_el0`.
    Cntvct,
}
