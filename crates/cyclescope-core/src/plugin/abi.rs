//! The calling conventions a candidate may export: the ICCS `CryptHash` (digest width and
//! message length in bits) and SUPERCOP's `crypto_hash` (fixed digest, length in bytes). Both
//! are resolved to one function pointer behind an enum; callers that loop dispatch once per
//! loop, never per call, so the timed loop holds nothing but the call itself.

use std::ffi::{c_int, c_ulonglong};

/// `int CryptHash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits, unsigned char *digest)`.
pub(crate) type CryptHashFn = unsafe extern "C" fn(c_int, *const u8, c_ulonglong, *mut u8) -> c_int;
/// `int crypto_hash(unsigned char *out, const unsigned char *in, unsigned long long inlen)`.
pub(crate) type SupercopHashFn = unsafe extern "C" fn(*mut u8, *const u8, c_ulonglong) -> c_int;

/// What a catalog or `--abi` says a library exports.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Abi {
    /// `CryptHash` of the ICCS hash API (the NGCC harness's).
    #[default]
    Iccs,
    /// `crypto_hash` of SUPERCOP / eBASH.
    Supercop,
}

impl Abi {
    pub fn name(self) -> &'static str {
        match self {
            Abi::Iccs => "iccs",
            Abi::Supercop => "supercop",
        }
    }

    pub fn from_name(name: &str) -> Option<Abi> {
        [Abi::Iccs, Abi::Supercop]
            .into_iter()
            .find(|a| a.name() == name)
    }

    /// The symbol resolved for this ABI (with its NUL).
    pub(crate) fn symbol(self) -> &'static [u8] {
        match self {
            Abi::Iccs => b"CryptHash\0",
            Abi::Supercop => b"crypto_hash\0",
        }
    }

    /// For serde's `skip_serializing_if`: ICCS is the default and stays unwritten.
    pub fn is_iccs(&self) -> bool {
        *self == Abi::Iccs
    }
}

/// The resolved entry point.
#[derive(Clone, Copy)]
pub(crate) enum HashFn {
    Iccs(CryptHashFn),
    Supercop(SupercopHashFn),
}

/// Returned (without calling the library) when a SUPERCOP function is asked for a message that
/// ends mid-byte: `crypto_hash` takes whole bytes only.
pub const SUPERCOP_PARTIAL_BYTE: i32 = -100;
