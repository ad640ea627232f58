//! Conformance checks beyond the KAT: does a library leave its message alone, write only its
//! digest, read only its message, ignore the bytes around it, give the same digest wherever
//! the buffers sit, however often it is called, from two threads at once, and the same one as
//! a second implementation of the instance? This module owns the checks' names, their
//! outcomes and evidence, and how they read in logs and tables (`Check`, `Outcome`,
//! `CheckResult`); the checks themselves (`run`) execute only inside the KAT worker process,
//! after its KAT files, and report over the KAT protocol. It never decides a KAT status on
//! its own: the KAT gate folds a failure into `NONCONFORM`.

mod buffers;
mod calls;
mod noise;
mod oracle;
mod over_read;
mod pairing;
mod probe;
pub mod run;

pub use pairing::oracle_for;
pub use run::{ConformPlan, OracleSpec};

use serde::{Deserialize, Serialize};

/// Bumped whenever a check changes what it accepts (stored beside every outcome).
pub const CHECKS_VERSION: u32 = 1;

/// One conformance check; listed (and shown) in this order, run in `run::RUN_ORDER`.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    strum::EnumIter,
)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// The message and 64 bytes on each side are compared after every call.
    InputUnchanged,
    /// Random canaries before and after the digest are compared after every call.
    OutputBounds,
    /// Messages flush against an inaccessible page at either end: a read past them faults.
    OverRead,
    /// Different random bytes around the message give the same digest.
    OutsideBytes,
    /// Message and digest at offsets 0…63 give the same digest.
    Alignment,
    /// The same message gives the same digest, also after more calls than the KAT makes.
    Determinism,
    /// A finding only: the unused low bits of a partial last byte change the digest.
    UnusedBits,
    /// Two threads hashing different messages at once get the serial digests.
    Reentrancy,
    /// A finding only: an unsupported digest width returns non-zero and writes nothing.
    DigestLength,
    /// Random lengths up to a few MiB agree with a second implementation of the instance.
    Differential,
    /// Lengths around 2^32 bits (a 32-bit bit counter's wrap) agree with the oracle (`--full`).
    LongMessage,
}

impl Check {
    /// The name in logs, JSON and tables.
    pub fn name(self) -> &'static str {
        match self {
            Check::InputUnchanged => "input_unchanged",
            Check::OutputBounds => "output_bounds",
            Check::OutsideBytes => "outside_bytes",
            Check::Alignment => "alignment",
            Check::UnusedBits => "unused_bits",
            Check::DigestLength => "digest_length",
            Check::Determinism => "determinism",
            Check::Reentrancy => "reentrancy",
            Check::Differential => "differential",
            Check::LongMessage => "long_message",
            Check::OverRead => "over_read",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        <Self as strum::IntoEnumIterator>::iter().find(|c| c.name() == name)
    }

    /// Whether a difference is only a finding: the API leaves the behaviour open.
    pub fn only_finds(self) -> bool {
        matches!(self, Check::UnusedBits | Check::DigestLength)
    }

    /// Every check, in the order they are shown.
    pub fn all() -> Vec<Check> {
        <Self as strum::IntoEnumIterator>::iter().collect()
    }
}

impl std::fmt::Display for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a difference was seen at: enough to reproduce it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    /// The message length of the call, in bits.
    pub bits: u64,
    /// The offset of the first differing byte, relative to what `what` names (negative:
    /// before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<i64>,
    /// The first differing byte: expected, found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub byte: Option<(u8, u8)>,
    /// What differed, in words (`the message`, `the digest at message offset 3`, …).
    pub what: String,
}

impl std::fmt::Display for Evidence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at {} bits", self.what, self.bits)?;
        if let Some(o) = self.offset {
            write!(f, ", byte offset {o}")?;
        }
        if let Some((want, got)) = self.byte {
            write!(f, ": {want:#04x} expected, {got:#04x} found")?;
        }
        Ok(())
    }
}

/// How one check ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    Pass,
    /// The library broke the property: it is not measured without consent.
    Fail {
        evidence: Evidence,
    },
    /// A behaviour the API leaves open, worth knowing; it does not block.
    Finding {
        evidence: Evidence,
    },
    /// Not run, and why.
    Skipped {
        why: String,
    },
}

impl Outcome {
    pub fn word(&self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail { .. } => "fail",
            Outcome::Finding { .. } => "finding",
            Outcome::Skipped { .. } => "skipped",
        }
    }

    /// The evidence or the reason, in one line (empty on a pass).
    pub fn detail(&self) -> String {
        match self {
            Outcome::Pass => String::new(),
            Outcome::Fail { evidence } | Outcome::Finding { evidence } => evidence.to_string(),
            Outcome::Skipped { why } => why.clone(),
        }
    }
}

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckResult {
    pub check: Check,
    #[serde(flatten)]
    pub outcome: Outcome,
}

impl CheckResult {
    pub(crate) fn new(check: Check, outcome: Outcome) -> Self {
        Self { check, outcome }
    }

    pub fn is_failure(&self) -> bool {
        matches!(self.outcome, Outcome::Fail { .. })
    }

    /// `{check, outcome, detail}`, the shape of `kat --json`'s `conformance` list.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "check": self.check.name(),
            "outcome": self.outcome.word(),
            "detail": crate::sanitize::log_field(&self.outcome.detail()),
        })
    }

    /// `conform  <check> <outcome> <detail>`, a KAT log line (every field sanitized).
    pub(crate) fn log_line(&self) -> String {
        let detail = self.outcome.detail();
        let line = format!(
            "conform  {} {}{}{}",
            self.check.name(),
            self.outcome.word(),
            if detail.is_empty() { "" } else { " " },
            crate::sanitize::log_field(&detail)
        );
        line
    }

    /// `input_unchanged: <evidence>`, the KAT detail of a failure.
    pub(crate) fn failure_detail(&self) -> String {
        format!("{}: {}", self.check.name(), self.outcome.detail())
    }
}

/// The checks as a record or `build.json` stores them: the rules' version and every outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedChecks {
    pub version: u32,
    pub checks: Vec<CheckResult>,
}

impl RecordedChecks {
    /// None for an empty list (a KAT carried over, or one that never got to the checks).
    pub(crate) fn of(results: &[CheckResult]) -> Option<Self> {
        (!results.is_empty()).then(|| Self {
            version: CHECKS_VERSION,
            checks: results.to_vec(),
        })
    }
}

/// The failing check that ran first, if any: the one the KAT detail and tables name (a
/// library wrong after 5000 calls fails everything after `determinism`, which names it best).
pub fn first_failure(results: &[CheckResult]) -> Option<&CheckResult> {
    results
        .iter()
        .filter(|r| r.is_failure())
        .min_by_key(|r| run::RUN_ORDER.iter().position(|&c| c == r.check))
}

/// Whether an outcome is of one kind.
type OutcomeIs = fn(&Outcome) -> bool;

/// `12 pass, 1 finding (unused_bits), 1 skipped` — the one-line summary tables and pages show.
pub fn summary(results: &[CheckResult]) -> String {
    let named = |of: OutcomeIs| -> Vec<&str> {
        results
            .iter()
            .filter(|r| of(&r.outcome))
            .map(|r| r.check.name())
            .collect()
    };
    let passed = named(|o| matches!(o, Outcome::Pass)).len();
    let mut parts = vec![format!("{passed} pass")];
    let others: [(&str, OutcomeIs); 3] = [
        ("failed", |o| matches!(o, Outcome::Fail { .. })),
        ("finding", |o| matches!(o, Outcome::Finding { .. })),
        ("skipped", |o| matches!(o, Outcome::Skipped { .. })),
    ];
    for (word, of) in others {
        let n = named(of);
        if !n.is_empty() {
            parts.push(format!("{} {word} ({})", n.len(), n.join(", ")));
        }
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev() -> Evidence {
        Evidence {
            bits: 1000,
            offset: Some(-3),
            byte: Some((0x12, 0x00)),
            what: "the 16 bytes before the digest".into(),
        }
    }

    #[test]
    fn names_round_trip_and_follow_the_issue() {
        let names: Vec<&str> = Check::all().iter().map(|c| c.name()).collect();
        assert_eq!(names.len(), 11);
        for c in Check::all() {
            assert_eq!(Check::from_name(c.name()), Some(c));
            assert_eq!(serde_json::to_value(c).unwrap(), c.name());
        }
        assert!(Check::UnusedBits.only_finds() && Check::DigestLength.only_finds());
        assert!(!Check::OverRead.only_finds());
    }

    #[test]
    fn a_failure_reads_with_its_evidence_on_one_log_line() {
        let r = CheckResult::new(Check::OutputBounds, Outcome::Fail { evidence: ev() });
        assert_eq!(
            r.log_line(),
            "conform  output_bounds fail the 16 bytes before the digest at 1000 bits, byte offset -3: 0x12 expected, 0x00 found"
        );
        assert_eq!(r.to_json()["outcome"], "fail");
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<CheckResult>(&json).unwrap(), r);
        let mut hostile = ev();
        hostile.what = "x\nRESULT a b PASS ".into();
        let r = CheckResult::new(Check::Alignment, Outcome::Finding { evidence: hostile });
        assert_eq!(r.log_line().lines().count(), 1);
    }

    #[test]
    fn the_summary_names_what_did_not_pass() {
        let rs = vec![
            CheckResult::new(Check::InputUnchanged, Outcome::Pass),
            CheckResult::new(Check::Alignment, Outcome::Fail { evidence: ev() }),
            CheckResult::new(Check::UnusedBits, Outcome::Finding { evidence: ev() }),
            CheckResult::new(
                Check::LongMessage,
                Outcome::Skipped {
                    why: "opt-in".into(),
                },
            ),
        ];
        assert_eq!(
            summary(&rs),
            "1 pass, 1 failed (alignment), 1 finding (unused_bits), 1 skipped (long_message)"
        );
        assert_eq!(first_failure(&rs).unwrap().check, Check::Alignment);
        let mut later = rs.clone();
        later.insert(
            0,
            CheckResult::new(Check::OverRead, Outcome::Fail { evidence: ev() }),
        );
        assert_eq!(
            first_failure(&later).unwrap().check,
            Check::Alignment,
            "in run order"
        );
    }
}
