//! The bundled `sm3hash` baseline library (ICCS `sm3hash`, 256 bits only) behind the ICCS
//! `CryptHash` API, with an `ngcc_meta` block like a harness-built library. All computing is in
//! `iccs_sm3`; this crate only exports symbols.

use core::ffi::{c_int, c_ulonglong};

use iccs_sm3::ffi::crypt_hash_via;
use iccs_sm3::iccs::sm3hash;
use iccs_sm3::meta::{NgccMetaCommon, NgccMetaHash, iccs_meta};

static META: NgccMetaHash = iccs_meta("sm3hash-256", 256);

/// `int CryptHash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits, unsigned char *digest)`:
/// SM3 of the message; any width but 256 is `-4`.
///
/// # Safety
/// The ICCS API contract (see [`crypt_hash_via`]).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn CryptHash(
    digest_len_bits: c_int,
    msg: *const u8,
    msg_len_bits: c_ulonglong,
    digest: *mut u8,
) -> c_int {
    // SAFETY: the caller keeps the ICCS API contract, which is crypt_hash_via's.
    unsafe { crypt_hash_via(sm3hash, digest_len_bits, msg, msg_len_bits, digest) }
}

/// `const ngcc_meta_t *ngcc_meta(void)`: points at the whole static hash block.
#[unsafe(no_mangle)]
pub extern "C" fn ngcc_meta() -> *const NgccMetaCommon {
    core::ptr::addr_of!(META).cast()
}
