//! Architectures without a reference counter cyclescope knows: only perf_event can count here.

use super::ReferenceCounter;

/// No reference counter: the reads below return zero and no one may time with them.
pub const REFERENCE: Option<ReferenceCounter> = None;

#[inline(always)]
pub fn reference_now() -> u64 {
    0
}

#[inline(always)]
pub fn stamp_start() -> u64 {
    0
}

#[inline(always)]
pub fn stamp_end() -> u64 {
    0
}
