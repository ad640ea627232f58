//! One call as the checks make it: the message at a chosen offset in page-guarded memory with
//! fresh random bytes on both sides, the digest between fresh random canaries, and after the
//! call a comparison of everything around both. The first change seen around the message or
//! the digest, in any check, is kept as the evidence of `input_unchanged` or
//! `output_bounds`; the digest is returned either way.

use super::Evidence;
use super::noise::Noise;
use crate::plugin::{Arena, HashLibrary, Placement};

/// Bytes compared on each side of the message and of the digest.
pub(crate) const AROUND: usize = 64;

/// Where a call puts its buffers: offsets past a 64-byte boundary (0…63).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Offsets {
    pub(crate) msg: usize,
    pub(crate) out: usize,
}

/// The library under test and what every call found so far.
pub(crate) struct Probe<'a> {
    pub(crate) lib: &'a HashLibrary,
    pub(crate) digest_bits: u32,
    pub(crate) noise: Noise,
    /// The first change around or inside a message (`input_unchanged`).
    pub(crate) input: Option<Evidence>,
    /// The first change around a digest (`output_bounds`).
    pub(crate) output: Option<Evidence>,
    msg: Arena,
    out: Arena,
}

/// The call could not give a digest.
pub(crate) type CallFailed = Evidence;

impl<'a> Probe<'a> {
    pub(crate) fn new(lib: &'a HashLibrary, digest_bits: u32) -> std::io::Result<Self> {
        let digest = (digest_bits as usize).div_ceil(8);
        Ok(Self {
            lib,
            digest_bits,
            noise: Noise::fresh(),
            input: None,
            output: None,
            msg: Arena::new(4 * AROUND + 4096)?,
            out: Arena::new(4 * AROUND + digest)?,
        })
    }

    pub(crate) fn digest_bytes(&self) -> usize {
        (self.digest_bits as usize).div_ceil(8)
    }

    /// Whether the library takes lengths that end mid-byte (SUPERCOP's does not).
    pub(crate) fn takes_bits(&self) -> bool {
        self.lib.abi().is_iccs()
    }

    /// A random message of `bits` bits, its unused low bits clear (as the KAT generator has
    /// them).
    pub(crate) fn message(&mut self, bits: u64) -> Vec<u8> {
        let mut m = vec![0u8; bits.div_ceil(8) as usize];
        self.noise.fill(&mut m);
        clear_unused(&mut m, bits);
        m
    }

    /// Hashes `msg` at `at` with fresh random bytes around it.
    pub(crate) fn hash(
        &mut self,
        msg: &[u8],
        bits: u64,
        at: Offsets,
    ) -> Result<Vec<u8>, CallFailed> {
        let mut around = [0u8; 2 * AROUND];
        self.noise.fill(&mut around);
        self.hash_around(msg, bits, at, &around)
    }

    /// Hashes `msg` at `at` between the given surroundings (`AROUND` bytes before, then after).
    pub(crate) fn hash_around(
        &mut self,
        msg: &[u8],
        bits: u64,
        at: Offsets,
        around: &[u8; 2 * AROUND],
    ) -> Result<Vec<u8>, CallFailed> {
        let n = msg.len();
        let msg_at = AROUND + at.msg;
        if self.msg.len() < msg_at + n + AROUND {
            self.msg = Arena::new(msg_at + n + AROUND).map_err(|e| io_failed(bits, &e))?;
        }
        let (before, after) = around.split_at(AROUND);
        let region = &mut self.msg.bytes_mut()[msg_at - AROUND..msg_at + n + AROUND];
        region[..AROUND].copy_from_slice(before);
        region[AROUND..AROUND + n].copy_from_slice(msg);
        region[AROUND + n..].copy_from_slice(after);
        let d = self.digest_bytes();
        let out_at = AROUND + at.out;
        let mut canary = vec![0u8; d + 2 * AROUND];
        self.noise.fill(&mut canary);
        self.out.bytes_mut()[out_at - AROUND..out_at + d + AROUND].copy_from_slice(&canary);
        let rc = self.lib.crypt_hash_in(
            self.digest_bits,
            &self.msg,
            &mut self.out,
            Placement {
                msg_at,
                msg_bits: bits,
                out_at,
                out_bytes: d,
            },
        );
        let seen = &self.msg.bytes()[msg_at - AROUND..msg_at + n + AROUND];
        if self.input.is_none() {
            let mut expected = around[..AROUND].to_vec();
            expected.extend_from_slice(msg);
            expected.extend_from_slice(after);
            self.input = first_change(&expected, seen, n, bits, "message");
        }
        let written = &self.out.bytes()[out_at - AROUND..out_at + d + AROUND];
        if self.output.is_none() {
            let mut expected = canary.clone();
            expected[AROUND..AROUND + d].copy_from_slice(&written[AROUND..AROUND + d]);
            self.output = first_change(&expected, written, d, bits, "digest");
        }
        if rc != 0 {
            return Err(Evidence {
                bits,
                offset: None,
                byte: None,
                what: format!("CryptHash returned {rc}"),
            });
        }
        Ok(written[AROUND..AROUND + d].to_vec())
    }
}

pub(crate) fn io_failed(bits: u64, e: &std::io::Error) -> Evidence {
    Evidence {
        bits,
        offset: None,
        byte: None,
        what: format!("the worker could not map memory for the call ({e})"),
    }
}

/// Clears the bits past `bits` in the last byte.
pub(crate) fn clear_unused(m: &mut [u8], bits: u64) {
    let r = (bits % 8) as u32;
    if r != 0
        && let Some(last) = m.last_mut()
    {
        *last &= 0xffu8 << (8 - r);
    }
}

/// The first byte where `seen` differs from `expected`: `expected` is `AROUND` bytes, the
/// `len` bytes of the named buffer, `AROUND` bytes; offsets are relative to the buffer.
fn first_change(
    expected: &[u8],
    seen: &[u8],
    len: usize,
    bits: u64,
    buffer: &str,
) -> Option<Evidence> {
    let i = expected.iter().zip(seen).position(|(a, b)| a != b)?;
    let offset = i as i64 - AROUND as i64;
    let what = if offset < 0 {
        format!("a write into the {AROUND} bytes before the {buffer}")
    } else if (offset as usize) < len {
        format!("a write into the {buffer} itself")
    } else {
        format!("a write into the {AROUND} bytes after the {buffer}")
    };
    // Inside the digest every value is the library's to choose: only its surroundings count.
    if buffer == "digest" && (0..len as i64).contains(&offset) {
        return None;
    }
    Some(Evidence {
        bits,
        offset: Some(offset),
        byte: Some((expected[i], seen[i])),
        what,
    })
}

/// The first byte where two digests differ, as evidence.
pub(crate) fn digest_difference(
    want: &[u8],
    got: &[u8],
    bits: u64,
    what: String,
) -> Option<Evidence> {
    let i = want.iter().zip(got).position(|(a, b)| a != b)?;
    Some(Evidence {
        bits,
        offset: Some(i as i64),
        byte: Some((want[i], got[i])),
        what,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_placed_relative_to_its_buffer() {
        let expected = vec![1u8; 2 * AROUND + 4];
        let mut seen = expected.clone();
        seen[AROUND - 2] = 9;
        let e = first_change(&expected, &seen, 4, 32, "message").unwrap();
        assert_eq!((e.offset, e.byte), (Some(-2), Some((1, 9))));
        assert!(e.what.contains("before the message"), "{}", e.what);
        let mut seen = expected.clone();
        seen[AROUND + 4] = 0;
        let e = first_change(&expected, &seen, 4, 32, "digest").unwrap();
        assert_eq!(e.offset, Some(4));
        assert!(e.what.contains("after the digest"), "{}", e.what);
        let mut inside = expected.clone();
        inside[AROUND + 1] = 0;
        assert!(first_change(&expected, &inside, 4, 32, "digest").is_none());
        assert!(first_change(&expected, &inside, 4, 32, "message").is_some());
    }

    #[test]
    fn unused_bits_are_the_low_bits_of_the_last_byte() {
        let mut m = [0xff, 0xff];
        clear_unused(&mut m, 11);
        assert_eq!(m, [0xff, 0xe0]);
        let mut m = [0xff];
        clear_unused(&mut m, 8);
        assert_eq!(m, [0xff]);
    }
}
