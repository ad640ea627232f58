//! Conformance checks beyond the KAT: does a library leave its message alone, write only its
//! digest, read only its message, ignore the bytes around it, give the same digest wherever
//! the buffers sit, however often it is called, from two threads at once, and the same one as
//! a second implementation of the instance? This module owns the checks' names, their
//! outcomes and evidence, and how they read in logs and tables (`Check`, `Outcome`,
//! `CheckResult`) and each outcome's `Grade`: a failure voids the timed figure, a finding lies
//! outside the KAT's and the timing's domain and is only reported. The checks themselves
//! (`run`) execute only inside the KAT worker process, after its KAT files, and report over
//! the KAT protocol. It never decides a KAT status on its own: the KAT gate folds a failure
//! (never a finding) into `NONCONFORM`.

mod buffers;
mod calls;
mod noise;
mod oracle;
mod over_read;
mod pairing;
mod probe;
pub mod run;
pub mod verdict;

pub use pairing::oracle_for;
pub use run::{ConformPlan, OracleSpec};

use serde::{Deserialize, Serialize};

/// Bumped whenever a check changes what it accepts (stored beside every outcome). 2: the
/// out-of-domain calls run last, a crash or error return there is a finding, and a write
/// past the digest buffer at another width a failure. 3: the parent decides every outcome
/// it can from the digests the worker sends (`verdict`), `alignment` against this job's
/// `KAT_2_12` answers; a pass cached before that rested on the worker's word.
pub const CHECKS_VERSION: u32 = 3;

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

/// The findings that do not block, in run order (the ones a pass carries with it).
pub fn findings(results: &[CheckResult]) -> Vec<CheckResult> {
    let mut v: Vec<CheckResult> = results.iter().filter(|r| r.is_finding()).cloned().collect();
    v.sort_by_key(|r| run::RUN_ORDER.iter().position(|&c| c == r.check));
    v
}

/// `finding: digest_length: <evidence>` (several joined by `; `), the note the KAT line of
/// `kat`, `run` and `build` and the workbench put beside the verdict; None without findings.
/// Not sanitized: each frontend sanitizes for where it prints.
pub fn findings_note(findings: &[CheckResult]) -> Option<String> {
    let each: Vec<String> = findings
        .iter()
        .filter(|r| r.is_finding())
        .map(|r| format!("{}: {}", r.check, r.outcome.detail()))
        .collect();
    let word = if each.len() > 1 {
        "findings"
    } else {
        "finding"
    };
    (!each.is_empty()).then(|| format!("{word}, not blocking: {}", each.join("; ")))
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
mod tests;
