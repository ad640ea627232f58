//! The rule that turns a check's raw evidence into its outcome (`judge`): every digest the
//! engine compared, and with what (`Digests`), and a write the trial worker saw around a
//! buffer. Where the messages are vectors of this job's `KAT_2_12` file (`alignment`), each
//! digest is held against the answer the engine read from that file itself.

use serde::{Deserialize, Serialize};

use super::{Check, Evidence, Grade, Outcome};

/// The message lengths (bits) of the `KAT_2_12` vectors `alignment` hashes at every offset:
/// partial bytes, one and several blocks, the file's longest.
const VECTOR_BITS: [u64; 6] = [7, 440, 513, 1024, 2047, 4096];
/// The same for an ABI of whole bytes.
const VECTOR_BYTES: [u64; 6] = [8, 440, 512, 1024, 2048, 4096];

/// The `KAT_2_12` vectors `alignment` uses (their `Msg_Len`), for an ABI that takes bits or not.
pub(crate) fn vector_lengths(takes_bits: bool) -> &'static [u64] {
    if takes_bits {
        &VECTOR_BITS
    } else {
        &VECTOR_BYTES
    }
}

/// One compared call: the digest it should have given and the one it gave (or its error).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compared {
    pub bits: u64,
    /// What was compared, the words of the evidence on a difference.
    pub what: String,
    /// The `KAT_2_12` vector (its `Msg_Len`) whose `Dst` `want` is, when it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector: Option<u64>,
    #[serde(with = "hex_text")]
    pub want: Vec<u8>,
    #[serde(with = "hex_text")]
    pub got: Vec<u8>,
    /// The call's error return, instead of a digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<Evidence>,
}

impl Compared {
    /// The evidence of a difference (a shorter or longer digest is one too).
    fn difference(&self) -> Option<Evidence> {
        if let Some(e) = &self.failed {
            return Some(e.clone());
        }
        digest_difference(&self.want, &self.got, self.bits, self.what.clone()).or_else(|| {
            (self.want.len() != self.got.len()).then(|| Evidence {
                bits: self.bits,
                offset: Some(self.want.len().min(self.got.len()) as i64),
                byte: None,
                what: format!("{} of {} bytes", self.what, self.got.len()),
            })
        })
    }
}

/// A check's raw evidence: its compared calls in order (a repeated call's digest once per
/// distinct value), and a write only the worker could see.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Digests {
    pub calls: Vec<Compared>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<Evidence>,
}

impl Digests {
    /// Records a call unless the same digests were already recorded for it (`determinism`,
    /// `reentrancy`: thousands of calls, a few distinct digests).
    pub(crate) fn push_distinct(&mut self, c: Compared) {
        let seen = self.calls.iter().any(|o| {
            o.bits == c.bits && o.want == c.want && o.got == c.got && o.failed == c.failed
        });
        if !seen {
            self.calls.push(c);
        }
    }

    /// Whether a difference is recorded (a check may stop there).
    pub(crate) fn differs(&self) -> bool {
        self.claim.is_some() || self.calls.iter().any(|c| c.difference().is_some())
    }
}

/// The outcome `digests` give `check`: a write the worker saw is a failure; else the first
/// compared call that differs, at the check's grade for a difference; else a pass.
pub fn judge(check: Check, digests: &Digests) -> Outcome {
    if let Some(evidence) = &digests.claim {
        return Outcome::Fail {
            evidence: evidence.clone(),
        };
    }
    let grade = match check {
        Check::UnusedBits => Grade::OutOfDomain,
        _ => Grade::Blocking,
    };
    digests
        .calls
        .iter()
        .find_map(Compared::difference)
        .map_or(Outcome::Pass, |e| Outcome::graded(grade, e))
}

/// The `(message offset, digest offset)` pairs `alignment` hashes each vector at, (0, 0) first.
pub(crate) fn alignment_offsets() -> impl Iterator<Item = (usize, usize)> {
    std::iter::once((0, 0)).chain(super::buffers::OFFSETS.iter().copied())
}

/// The words of one `alignment` call.
pub(crate) fn alignment_what(m: usize, d: usize) -> String {
    format!(
        "the digest with the message at offset {m} and the digest at offset {d} past a 64-byte boundary"
    )
}

/// The first byte where two digests differ, as evidence.
fn digest_difference(want: &[u8], got: &[u8], bits: u64, what: String) -> Option<Evidence> {
    let i = want.iter().zip(got).position(|(a, b)| a != b)?;
    Some(Evidence {
        bits,
        offset: Some(i as i64),
        byte: Some((want[i], got[i])),
        what,
    })
}

/// Bytes as lowercase hex text in the protocol's JSON.
mod hex_text {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex::encode(b))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        hex::decode(text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(bits: u64, want: &[u8], got: &[u8]) -> Compared {
        Compared {
            bits,
            what: "the digest".into(),
            vector: None,
            want: want.to_vec(),
            got: got.to_vec(),
            failed: None,
        }
    }

    #[test]
    fn the_first_difference_decides_at_the_checks_grade() {
        let d = Digests {
            calls: vec![call(8, &[1, 2], &[1, 2]), call(9, &[1, 2], &[1, 3])],
            claim: None,
        };
        let Outcome::Fail { evidence } = judge(Check::Alignment, &d) else {
            panic!("a difference fails");
        };
        assert_eq!((evidence.bits, evidence.byte), (9, Some((2, 3))));
        assert_eq!(judge(Check::UnusedBits, &d).word(), "finding");
        let short = Digests {
            calls: vec![call(8, &[1, 2], &[1])],
            claim: None,
        };
        assert_eq!(judge(Check::Determinism, &short).word(), "fail");
    }
}
