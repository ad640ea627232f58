//! The conformance checks by name, their outcomes with the evidence and the grades of what
//! they find (`conform` runs them; events carry their results, and a figure's doubt names the
//! one that failed).

use serde::{Deserialize, Serialize};

/// How much a difference weighs: whether it voids the figure timed at the instance's own
/// width on whole-byte messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Grade {
    /// The timed calls could do it too (a changed input, a write past the digest, a read past
    /// the message, a digest that depends on anything but the message): the instance is
    /// NONCONFORM and not measured without consent.
    Blocking,
    /// Only at a call neither the KAT nor the timing makes (a digest width the instance does
    /// not have, set unused bits): reported beside the harness's verdict, never blocking.
    OutOfDomain,
}

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
    /// Set unused low bits of a partial last byte: a changed digest, an error or a crash is a
    /// finding, a write past the buffers a failure.
    UnusedBits,
    /// Two threads hashing different messages at once get the serial digests.
    Reentrancy,
    /// Other digest widths (0 bits among them): a crash there, or a refused width that wrote
    /// its own bytes, is a finding; a write past the width's bytes a failure.
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

    /// The grades this check's outcomes can have (the parent refuses any other).
    pub fn grades(self) -> &'static [Grade] {
        match self {
            Check::UnusedBits | Check::DigestLength => &[Grade::Blocking, Grade::OutOfDomain],
            _ => &[Grade::Blocking],
        }
    }

    /// The grade of the worker ending during this check: the out-of-domain checks make only
    /// calls the KAT and the timing never make, so a crash there says nothing of the figure.
    pub fn death_grade(self) -> Grade {
        match self {
            Check::UnusedBits | Check::DigestLength => Grade::OutOfDomain,
            _ => Grade::Blocking,
        }
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

/// How one check ended. `Fail` and `Finding` are the two grades of a difference
/// (`Outcome::grade`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    Pass,
    /// `Grade::Blocking`: the library broke the property; it is not measured without consent.
    Fail {
        evidence: Evidence,
    },
    /// `Grade::OutOfDomain`: outside what the KAT and the timing call; reported, it does not
    /// block.
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

    /// A difference's grade (None for a pass or a skip).
    pub fn grade(&self) -> Option<Grade> {
        match self {
            Outcome::Fail { .. } => Some(Grade::Blocking),
            Outcome::Finding { .. } => Some(Grade::OutOfDomain),
            Outcome::Pass | Outcome::Skipped { .. } => None,
        }
    }

    /// The outcome of `grade` with `evidence`.
    pub(crate) fn graded(grade: Grade, evidence: Evidence) -> Self {
        match grade {
            Grade::Blocking => Outcome::Fail { evidence },
            Grade::OutOfDomain => Outcome::Finding { evidence },
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
        self.outcome.grade() == Some(Grade::Blocking)
    }

    /// Whether this is a finding that does not block (`Grade::OutOfDomain`).
    pub fn is_finding(&self) -> bool {
        self.outcome.grade() == Some(Grade::OutOfDomain)
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
