//! A hash call with its arguments checked once, for loops that call it many times (warm-ups,
//! the guide's timed loop, the per-call phase): the ABI is chosen once per loop, so the loop
//! body is nothing but the indirect call. Unsafe only for that call.

use std::ffi::c_int;

use super::abi::HashFn;
use super::{GuardedBuffer, HashLibrary};

/// A `CryptHash` call with its arguments checked once, for loops that call it many times: the
/// timed loop then contains nothing but the indirect call.
pub(crate) struct PreparedCall<'a> {
    f: HashFn,
    digest_bits: c_int,
    msg: &'a GuardedBuffer,
    msg_bits: u64,
    digest: &'a mut GuardedBuffer,
}

impl HashLibrary {
    /// Checks the arguments like [`HashLibrary::crypt_hash`] and binds them for repeated calls.
    pub(crate) fn prepare<'a>(
        &'a self,
        digest_bits: u32,
        msg: &'a GuardedBuffer,
        msg_bits: u64,
        digest: &'a mut GuardedBuffer,
    ) -> PreparedCall<'a> {
        assert!(
            msg_bits.div_ceil(8) <= msg.len() as u64,
            "message shorter than msg_bits"
        );
        assert!(
            (digest_bits as usize).div_ceil(8) <= digest.len(),
            "digest buffer shorter than digest_bits"
        );
        assert!(
            !matches!(self.entry, HashFn::Supercop(_)) || msg_bits.is_multiple_of(8),
            "SUPERCOP libraries take whole bytes"
        );
        PreparedCall {
            f: self.entry,
            digest_bits: c_int::try_from(digest_bits).unwrap_or(c_int::MAX),
            msg,
            msg_bits,
            digest,
        }
    }
}

impl PreparedCall<'_> {
    /// One call (the per-call phase, warm-ups).
    #[inline(always)]
    pub(crate) fn call(&mut self) -> i32 {
        self.call_n(1)
    }

    /// `n` calls back to back; the last nonzero return code (0 when all succeeded). The ABI
    /// is chosen once, outside the loop: each loop body is the bare call of one ABI.
    #[inline(always)]
    pub(crate) fn call_n(&mut self, n: u64) -> i32 {
        let (msg, digest) = (self.msg.as_ptr(), self.digest.as_mut_ptr());
        let mut failed = 0;
        match self.f {
            HashFn::Iccs(f) => {
                for _ in 0..n {
                    // SAFETY: as in `HashLibrary::crypt_hash`: the lengths were checked in
                    // `prepare`, the buffers are borrowed for the lifetime of this value, and
                    // so is the library that keeps the function mapped.
                    let rc = unsafe { f(self.digest_bits, msg, self.msg_bits, digest) };
                    if rc != 0 {
                        failed = rc;
                    }
                }
            }
            HashFn::Supercop(f) => {
                let len = self.msg_bits / 8;
                for _ in 0..n {
                    // SAFETY: as above; `prepare` checked that the length is whole bytes.
                    let rc = unsafe { f(digest, msg, len) };
                    if rc != 0 {
                        failed = rc;
                    }
                }
            }
        }
        failed
    }

    /// True when neither buffer's guards were touched.
    pub fn guards_intact(&self) -> bool {
        self.msg.guards_intact() && self.digest.guards_intact()
    }
}
