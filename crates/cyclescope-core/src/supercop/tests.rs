//! The procedure against published values: SHA-512 (the `sha2` crate, not candidate code)
//! must give the checksums that lib25519's tests, derived from SUPERCOP's crypto_hash/try.c,
//! list for it.

use sha2::{Digest, Sha512};

use super::*;

struct Sha;

impl ByteHash for Sha {
    fn hash(&mut self, out: &mut GuardedBuffer, msg: &GuardedBuffer, mlen: usize) -> i32 {
        out.data_mut()
            .copy_from_slice(&Sha512::digest(&msg.data()[..mlen]));
        0
    }
    fn hash_in_place(&mut self, buf: &mut GuardedBuffer, mlen: usize) -> Option<i32> {
        let d = Sha512::digest(&buf.data()[..mlen]);
        buf.data_mut()[..64].copy_from_slice(&d);
        Some(0)
    }
}

/// `hash_sha512_checksums` in lib25519's `command/lib25519-test.c` (small, big).
const SHA512_SMALL: &str = "8220572f58bd4730be165c9739d8d4b0fd2e0229dbe01e25b4aed23f00f23b70";
const SHA512_BIG: &str = "c1e322b7cbfc941260c5508967ba05bce22eeee94d425e708b7c3301ea1d5e2e";

#[test]
fn sha512_gives_the_published_checksums() {
    assert_eq!(checksum(&mut Sha, 64, SMALL).unwrap(), SHA512_SMALL);
    assert_eq!(checksum(&mut Sha, 64, BIG).unwrap(), SHA512_BIG);
}

#[test]
fn a_function_that_ignores_overlap_or_varies_is_named() {
    struct Varies(u8);
    impl ByteHash for Varies {
        fn hash(&mut self, out: &mut GuardedBuffer, _: &GuardedBuffer, _: usize) -> i32 {
            self.0 = self.0.wrapping_add(1);
            out.data_mut().fill(self.0);
            0
        }
        fn hash_in_place(&mut self, _: &mut GuardedBuffer, _: usize) -> Option<i32> {
            Some(0)
        }
    }
    assert!(matches!(
        checksum(&mut Varies(0), 32, SMALL),
        Err(SupercopError::Nondeterministic { .. })
    ));
}
