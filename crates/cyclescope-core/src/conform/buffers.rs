//! The sample: the lengths and offsets the checks use (`tabled`), and a message of each length
//! with its digest, which `outside_bytes` makes and the checks after it compare with.

use super::Outcome;
use super::verdict::Compared;

/// Message lengths in bits: around the byte, word and common block sizes, up to 4 KiB.
pub(crate) const LENGTHS: &[u64] = &[
    0, 1, 7, 8, 9, 63, 64, 65, 255, 256, 257, 440, 447, 504, 511, 512, 513, 1000, 1023, 1024, 1025,
    2047, 2048, 4096, 8191, 8192, 12_000, 32_768,
];

/// (message offset, digest offset) pairs past a 64-byte boundary, besides (0, 0).
pub(crate) const OFFSETS: &[(usize, usize)] = &[
    (1, 0),
    (2, 0),
    (3, 0),
    (4, 0),
    (5, 0),
    (7, 0),
    (8, 0),
    (12, 0),
    (15, 0),
    (16, 0),
    (31, 0),
    (32, 0),
    (33, 0),
    (48, 0),
    (63, 0),
    (0, 1),
    (0, 3),
    (0, 7),
    (0, 13),
    (0, 31),
    (0, 63),
    (1, 1),
    (17, 5),
    (63, 63),
];

/// A message and the digest it gave at offset 0.
#[derive(Debug, Clone)]
pub(crate) struct Sample {
    pub(crate) bits: u64,
    pub(crate) msg: Vec<u8>,
    pub(crate) digest: Vec<u8>,
}

/// Clears the bits past `bits` in the last byte (as the KAT generator has them).
pub(crate) fn clear_unused(m: &mut [u8], bits: u64) {
    let r = (bits % 8) as u32;
    if r != 0
        && let Some(last) = m.last_mut()
    {
        *last &= 0xffu8 << (8 - r);
    }
}

/// A compared call that returned an error instead of a digest.
pub(crate) fn failed(bits: u64, what: String, evidence: super::Evidence) -> Compared {
    Compared {
        bits,
        what,
        vector: None,
        want: Vec::new(),
        got: Vec::new(),
        failed: Some(evidence),
    }
}

/// The outcome of a check that cannot start without the sample.
pub(crate) fn no_sample() -> Outcome {
    Outcome::Skipped {
        why: "no call of outside_bytes gave a digest, so there is no sample to compare with".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
