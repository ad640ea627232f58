//! The bundled `pseudohash` baseline library (ICCS `pseudohash`: 512, 768 or 1024 bits) behind
//! the ICCS `CryptHash` API. One library serves all three widths, so its `ngcc_meta` says
//! `digest_bits = 0` and the catalog chooses. All computing is in `iccs_sm3`.

use core::ffi::{c_int, c_ulonglong};

use iccs_sm3::ffi::crypt_hash_via;
use iccs_sm3::iccs::pseudohash;
use iccs_sm3::meta::{NgccMetaCommon, NgccMetaHash, iccs_meta};

static META: NgccMetaHash = iccs_meta("pseudohash", 0);

/// `int CryptHash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits, unsigned char *digest)`:
/// pseudohash of the message; widths other than 512, 768 and 1024 are `-4`.
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
    unsafe { crypt_hash_via(pseudohash, digest_len_bits, msg, msg_len_bits, digest) }
}

/// `const ngcc_meta_t *ngcc_meta(void)`: points at the whole static hash block.
#[unsafe(no_mangle)]
pub extern "C" fn ngcc_meta() -> *const NgccMetaCommon {
    core::ptr::addr_of!(META).cast()
}
