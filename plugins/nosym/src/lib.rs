//! Test fixture: a well-formed shared library for this machine that exports a function but not
//! `CryptHash`, so the loader's "missing symbol" error is tested on a real artifact. It must
//! never gain a `CryptHash`.

use core::ffi::c_int;

/// Not the ICCS entry point.
#[unsafe(no_mangle)]
pub extern "C" fn not_crypthash() -> c_int {
    0
}
