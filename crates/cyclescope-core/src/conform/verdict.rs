//! The rule that turns a check's raw evidence into its outcome, shared by both sides: the
//! worker computes its outcome with `judge`, sends the evidence beside it (`Digests`: every
//! digest it compared, and with what), and the parent judges the same evidence again
//! (`admit`), so that a `pass` a library forges on the protocol channel does not follow from
//! digests it did not compute. Where the messages are vectors of this job's `KAT_2_12` file
//! (`alignment`), the parent also holds each digest against the answer it read from that
//! file itself. What only the worker can see (a write around a buffer) stays a claim.

use serde::{Deserialize, Serialize};

use super::probe::digest_difference;
use super::{Check, CheckResult, Evidence, Grade, Outcome};
use crate::kat::known::KnownAnswer;

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

/// The checks whose outcome follows from digests (`Digests`); the others' evidence is a
/// memory observation of the worker's, a claim (`docs/trust.md`).
pub fn judged_from_digests(check: Check) -> bool {
    !matches!(
        check,
        Check::InputUnchanged | Check::OutputBounds | Check::OverRead | Check::DigestLength
    )
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

/// What the parent knows to judge a `check_done` with.
pub(crate) struct Known<'a> {
    /// The `alignment` vectors of this job's `KAT_2_12`, read by the parent from the file it
    /// verified (empty when that file did not pass or was not generated).
    pub(crate) vectors: &'a [KnownAnswer],
}

/// The parent's judgement of a worker's `check_done`: the outcome it admits, or why the
/// message is forged (the job is then TAMPERED).
pub(crate) fn admit(
    result: CheckResult,
    digests: Option<&Digests>,
    known: &Known,
) -> Result<CheckResult, String> {
    let check = result.check;
    if !judged_from_digests(check) {
        return Ok(result);
    }
    let anchored = check == Check::Alignment && !known.vectors.is_empty();
    if let Outcome::Skipped { why } = &result.outcome {
        // Its messages are the engine's own vectors: nothing but a worker unable to map
        // memory skips it, and that proves nothing either.
        if anchored {
            return Ok(CheckResult::new(
                check,
                Outcome::Fail {
                    evidence: Evidence {
                        bits: 0,
                        offset: None,
                        byte: None,
                        what: format!(
                            "not run although the engine holds its KAT vectors (the worker said: {why})"
                        ),
                    },
                },
            ));
        }
        return Ok(result);
    }
    let Some(digests) = digests else {
        return Err(format!(
            "`check_done` for {check} ({}) without the digests it compared",
            result.outcome.word()
        ));
    };
    if anchored {
        against_vectors(digests, known.vectors)?;
    }
    let decided = judge(check, digests);
    if decided != result.outcome {
        return Err(format!(
            "`check_done` for {check} says {} but its digests give {}",
            result.outcome.word(),
            decided.word()
        ));
    }
    Ok(result)
}

/// `alignment`'s calls must be every vector at every offset pair, in order, each against the
/// `Dst` the parent read for it.
fn against_vectors(digests: &Digests, vectors: &[KnownAnswer]) -> Result<(), String> {
    let planned: Vec<(&KnownAnswer, String)> = vectors
        .iter()
        .flat_map(|v| alignment_offsets().map(move |(m, d)| (v, alignment_what(m, d))))
        .collect();
    if digests.calls.len() != planned.len() {
        return Err(format!(
            "`check_done` for alignment has {} digests, not the {} of its KAT vectors",
            digests.calls.len(),
            planned.len()
        ));
    }
    for (c, (v, what)) in digests.calls.iter().zip(&planned) {
        if c.vector != Some(v.bits) || c.bits != v.bits || &c.what != what || c.want != v.digest {
            return Err(format!(
                "`check_done` for alignment: its call at {} bits ({}) is not against the KAT_2_12 vector of {} bits",
                c.bits,
                crate::sanitize::log_field(&c.what),
                v.bits
            ));
        }
    }
    Ok(())
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

    fn pass(check: Check) -> CheckResult {
        CheckResult::new(check, Outcome::Pass)
    }

    fn none() -> Known<'static> {
        Known { vectors: &[] }
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

    #[test]
    fn a_pass_stands_only_on_digests_that_give_it() {
        let same = Digests {
            calls: vec![call(8, &[1], &[1])],
            claim: None,
        };
        let differ = Digests {
            calls: vec![call(8, &[1], &[2])],
            claim: None,
        };
        assert!(admit(pass(Check::Alignment), None, &none()).is_err());
        assert!(admit(pass(Check::Alignment), Some(&differ), &none()).is_err());
        assert_eq!(
            admit(pass(Check::Alignment), Some(&same), &none()),
            Ok(pass(Check::Alignment))
        );
        // A memory observation stays the worker's claim.
        assert!(admit(pass(Check::OutputBounds), None, &none()).is_ok());
        // The JSON the worker sends reads back to the same digests.
        let json = serde_json::to_string(&differ).unwrap();
        assert!(json.contains("\"want\":\"01\""), "{json}");
        assert_eq!(serde_json::from_str::<Digests>(&json).unwrap(), differ);
    }

    #[test]
    fn alignment_against_vectors_needs_every_call_against_the_answer_held() {
        let v = KnownAnswer {
            msg: vec![0xAB],
            bits: 8,
            digest: vec![7, 7],
            file: "KAT_2_12_x.txt".into(),
        };
        let vectors = [v];
        let known = Known { vectors: &vectors };
        let honest = |want: &[u8], got: &[u8]| Digests {
            calls: alignment_offsets()
                .map(|(m, d)| Compared {
                    vector: Some(8),
                    what: alignment_what(m, d),
                    ..call(8, want, got)
                })
                .collect(),
            claim: None,
        };
        let right = honest(&[7, 7], &[7, 7]);
        assert!(admit(pass(Check::Alignment), Some(&right), &known).is_ok());
        // Self-consistent digests of another function: not this file's answers.
        let other = honest(&[9, 9], &[9, 9]);
        assert!(admit(pass(Check::Alignment), Some(&other), &known).is_err());
        let mut fewer = right.clone();
        fewer.calls.truncate(1);
        assert!(admit(pass(Check::Alignment), Some(&fewer), &known).is_err());
        // A skip proves nothing when the engine holds the vectors: a failure.
        let skipped = CheckResult::new(Check::Alignment, Outcome::Skipped { why: "x".into() });
        assert!(admit(skipped, None, &known).unwrap().is_failure());
    }
}
