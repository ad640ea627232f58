//! The `CryptHash` pointer boundary shared by the bundled cdylibs: turns the C arguments into
//! slices once, here, so every library's export is a one-line call and no library repeats the
//! unsafe conversion. Bad arguments become ICCS error codes, never a panic or a crash: a
//! negative width is `INVALID_DIGESTBITLEN`; a NULL pointer becomes an empty slice, so the
//! safe function reports `HASH_FAILED` when a non-zero length needed it.

use core::ffi::{c_int, c_ulonglong};

use crate::iccs::{HASH_FAILED, INVALID_DIGESTBITLEN};

/// A safe ICCS helper: `(digest_bits, msg, msg_bits, out) -> rc`. It must check the width
/// first, then that `msg` holds `msg_bits` bits and `out` holds the digest.
pub type SafeHash = fn(u32, &[u8], u64, &mut [u8]) -> i32;

/// Runs `hash` on the C arguments of `CryptHash`. The output slice is exactly
/// `ceil(digest_len_bits / 8)` bytes, so `hash` cannot write past what the API allows.
/// Overlapping message and digest buffers are rejected with `HASH_FAILED` (they would alias a
/// shared and a mutable slice).
///
/// # Safety
/// The ICCS API contract: `msg` is NULL or valid for reads of `ceil(msg_len_bits / 8)` bytes,
/// and `digest` is NULL or valid for writes of `ceil(digest_len_bits / 8)` bytes, both for the
/// duration of the call.
pub unsafe fn crypt_hash_via(
    hash: SafeHash,
    digest_len_bits: c_int,
    msg: *const u8,
    msg_len_bits: c_ulonglong,
    digest: *mut u8,
) -> c_int {
    let Ok(digest_bits) = u32::try_from(digest_len_bits) else {
        return INVALID_DIGESTBITLEN;
    };
    let out_len = digest_bits.div_ceil(8) as usize;
    let msg_len = match usize::try_from(msg_len_bits.div_ceil(8)) {
        Ok(n) if n <= isize::MAX as usize => n,
        _ => return HASH_FAILED,
    };
    if !msg.is_null() && !digest.is_null() && msg_len > 0 && out_len > 0 {
        let (m, d) = (msg as usize, digest as usize);
        if m < d.saturating_add(out_len) && d < m.saturating_add(msg_len) {
            return HASH_FAILED;
        }
    }
    let msg: &[u8] = if msg.is_null() {
        &[]
    } else {
        // SAFETY: non-NULL, and by the caller's contract valid for `msg_len` bytes of reads
        // during this call; `msg_len` fits in isize (checked above).
        unsafe { core::slice::from_raw_parts(msg, msg_len) }
    };
    let out: &mut [u8] = if digest.is_null() {
        &mut []
    } else {
        // SAFETY: non-NULL, valid for `out_len` bytes of writes by the caller's contract, and
        // not overlapping `msg` (checked above), so the two slices do not alias.
        unsafe { core::slice::from_raw_parts_mut(digest, out_len) }
    };
    hash(digest_bits, msg, msg_len_bits, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iccs::{HASH_SUCCESS, sm3hash};

    fn call(bits: c_int, msg: *const u8, msg_bits: u64, out: *mut u8) -> c_int {
        // SAFETY: the tests pass NULL or live buffers of the stated sizes.
        unsafe { crypt_hash_via(sm3hash, bits, msg, msg_bits, out) }
    }

    #[test]
    fn bad_arguments_become_error_codes() {
        let mut out = [0u8; 32];
        let p = out.as_mut_ptr();
        assert_eq!(call(-256, b"abc".as_ptr(), 24, p), INVALID_DIGESTBITLEN);
        assert_eq!(call(512, b"abc".as_ptr(), 24, p), INVALID_DIGESTBITLEN);
        assert_eq!(call(256, core::ptr::null(), 24, p), HASH_FAILED);
        assert_eq!(
            call(256, b"abc".as_ptr(), 24, core::ptr::null_mut()),
            HASH_FAILED
        );
        assert_eq!(call(256, b"abc".as_ptr(), u64::MAX, p), HASH_FAILED);
        assert_eq!(out, [0; 32]);
        assert_eq!(call(256, core::ptr::null(), 0, p), HASH_SUCCESS);
        assert_eq!(out, crate::sm3(b""));
    }

    #[test]
    fn overlapping_buffers_are_rejected() {
        let mut buf = [7u8; 64];
        let p = buf.as_mut_ptr();
        assert_eq!(
            call(256, p.cast_const(), 8 * 40, p.wrapping_add(8)),
            HASH_FAILED
        );
        assert_eq!(
            call(256, p.cast_const(), 8 * 8, p.wrapping_add(8)),
            HASH_SUCCESS
        );
    }
}
