//! The candidate's entry point with its arguments fixed (`Call`), its loops — the guide's, the
//! probe's over a pool of messages — and the two named functions an instruction count is read
//! from, plus the harness's message. What runs here is timed or counted: nothing but the calls
//! and what the loops need.

use core::ffi::c_int;

use crate::library::Entry;

/// The candidate's entry point with its arguments fixed, the ABI chosen before any loop.
pub struct Call {
    pub entry: Entry,
    pub digest_bits: c_int,
    pub msg: *const u8,
    pub msg_bits: u64,
    pub digest: *mut u8,
}

impl Call {
    /// `n` calls; the last non-zero return, or 0.
    #[inline(always)]
    pub(super) fn call_n(&self, n: u64) -> c_int {
        let mut failed = 0;
        match self.entry {
            Entry::Iccs(f) => {
                for _ in 0..n {
                    // SAFETY: both pointers point into live buffers at least as long as the
                    // API lets the callee touch (the message holds msg_bits, the digest
                    // digest_bits), inside guard bytes of the same allocations. What the
                    // candidate does beyond its contract is what this process contains.
                    let rc = unsafe { f(self.digest_bits, self.msg, self.msg_bits, self.digest) };
                    if rc != 0 {
                        failed = rc;
                    }
                }
            }
            Entry::Supercop(f) => {
                let len = self.msg_bits / 8;
                for _ in 0..n {
                    // SAFETY: as above, for `crypto_hash(out, in, inlen)`.
                    let rc = unsafe { f(self.digest, self.msg, len) };
                    if rc != 0 {
                        failed = rc;
                    }
                }
            }
        }
        failed
    }

    /// The probe's loop: call `i` hashes the `i`-th message of `stride` bytes from `msg`, and
    /// its digest is copied to the `i`-th slot of `out` (slots of `out.len() / n` bytes).
    ///
    /// Before each call one byte of every 64-byte line of the `i`-th message of `touch` (as
    /// long as a message, one after another) is read: the probe's own message, the twin's
    /// message of a pool like the probe's that it never hashes. So both pay the same memory
    /// traffic, whatever the other core does to the caches, and differ only by what the
    /// library does with the bytes it hashes.
    #[inline(always)]
    pub(super) fn call_pool(
        &self,
        n: u64,
        stride: usize,
        touch: *const u8,
        out: &mut [u8],
    ) -> c_int {
        let mut failed = 0;
        let mut at = self.msg;
        let mut ahead = touch;
        let len = self.msg_bits.div_ceil(8) as usize;
        let slot = out.len() / (n.max(1) as usize);
        for i in 0..n as usize {
            for k in (0..len).step_by(64) {
                // SAFETY: `ahead` steps through `touch`, which holds `n` messages of `len`
                // bytes (`k < len`); volatile, so the read is not elided.
                let _ = unsafe { core::ptr::read_volatile(ahead.add(k)) };
            }
            let rc = match self.entry {
                // SAFETY: `at` stays inside the pool, which holds `n` messages of `stride`
                // bytes (msg_bits / 8 each) inside guard bytes; the digest as in `call_n`.
                Entry::Iccs(f) => unsafe { f(self.digest_bits, at, self.msg_bits, self.digest) },
                // SAFETY: as above, for `crypto_hash(out, in, inlen)`.
                Entry::Supercop(f) => unsafe { f(self.digest, at, self.msg_bits / 8) },
            };
            if rc != 0 {
                failed = rc;
            }
            // Byte by byte through volatile reads: a `memcpy` call would be one more call out of
            // the counted function, which callgrind would count as the candidate's.
            for (k, d) in out[i * slot..(i + 1) * slot].iter_mut().enumerate() {
                // SAFETY: the digest buffer holds `slot` bytes (digest_bits / 8, rounded up).
                *d = unsafe { core::ptr::read_volatile(self.digest.add(k)) };
            }
            at = at.wrapping_add(stride);
            ahead = ahead.wrapping_add(len);
        }
        failed
    }
}

/// The warm-up calls of an instruction count (`--count`), in a function of their own: the
/// parent reads callgrind's call graph and counts only what the candidate executed when called
/// from [`cyclescope_counted_calls`], so first-call costs (lazy binding, page faults) stay here.
/// One call per invocation, so that its code differs from the counted loop's (identical
/// functions would be folded into one symbol).
#[unsafe(no_mangle)]
#[inline(never)]
pub(super) fn cyclescope_warmup_calls(call: &Call) -> c_int {
    call.call_n(1)
}

/// The counted calls of an instruction count (`--count`): `call_n` is inlined here, so the
/// only calls out of this function are the candidate's entry point.
///
/// The fresh-message probe's count goes through here too (`pool`: its messages' stride, the
/// messages read before each call and the slots for their digests), so that callgrind counts
/// it the same way.
#[unsafe(no_mangle)]
#[inline(never)]
pub(super) fn cyclescope_counted_calls(
    call: &Call,
    n: u64,
    pool: Option<(usize, *const u8, &mut [u8])>,
) -> c_int {
    match pool {
        None => call.call_n(n),
        Some((stride, touch, out)) => call.call_pool(n, stride, touch, out),
    }
}
