//! The sample: the lengths and offsets the checks use, and the checks' worker's own sample
//! (a message of each length and its digest, which the worker's checks compare with). The
//! engine's `outside_bytes` and `alignment` (`tabled`) use the same lengths and offsets in
//! framed table jobs.

use super::Outcome;
use super::probe::{Offsets, Probe};
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

/// The lengths this library takes (whole bytes only for SUPERCOP's ABI).
pub(crate) fn lengths(probe: &Probe) -> Vec<u64> {
    LENGTHS
        .iter()
        .copied()
        .filter(|b| probe.takes_bits() || b % 8 == 0)
        .collect()
}

/// The checks' worker's sample: a random message of each length, hashed once at offset 0
/// between random bytes (a length whose call failed is left out). The lengths change from the
/// first call on, as in every job of a KAT's.
pub(crate) fn sample(probe: &mut Probe) -> Vec<Sample> {
    let mut samples = Vec::new();
    for bits in lengths(probe) {
        let msg = probe.message(bits);
        if let Ok(digest) = probe.hash(&msg, bits, Offsets::default()) {
            samples.push(Sample { bits, msg, digest });
        }
    }
    samples
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
