//! Conformance checks beyond the KAT: does a library leave its message alone, write only its
//! digest, read only its message, ignore the bytes around it, give the same digest wherever
//! the buffers sit, however often it is called, from two threads at once, and the same one as
//! a second implementation of the instance? This module owns the checks' names, their
//! outcomes and evidence, and how they read in logs and tables (`Check`, `Outcome`,
//! `CheckResult`) and each outcome's `Grade`: a failure voids the timed figure, a finding lies
//! outside the KAT's and the timing's domain and is only reported. The engine runs every check,
//! every call in a trial worker on messages the engine drew: the two against an oracle
//! (`oracle`), and the rest in framed table jobs (`tabled`), in the order of `run`. It never
//! decides a KAT status on its own: the KAT gate folds a failure (never a finding) into
//! `NONCONFORM`.

mod buffers;
mod calls;
mod noise;
pub mod oracle;
mod pairing;
pub mod run;
pub mod tabled;
pub mod verdict;

/// The checks' names and grades are vocabulary every floor may speak (the doubt of a figure
/// names the check that failed).
pub use crate::vocabulary::{Check, CheckResult, Evidence, Grade, Outcome};
pub use pairing::oracle_for;
pub use run::{ENGINE_CHECKS, ORACLE_CHECKS, OracleSpec};

use serde::{Deserialize, Serialize};

/// Bumped whenever a check changes what it accepts (stored beside every outcome). 2: the
/// out-of-domain calls run last, a crash or error return there is a finding, and a write
/// past the digest buffer at another width a failure. 3: the parent decides every outcome
/// it can from the digests the worker sends (`verdict`), `alignment` against this job's
/// `KAT_2_12` answers; a pass cached before that rested on the worker's word. 4: `differential`
/// and `long_message` are the engine's, from the oracle's and the candidate's table jobs; before,
/// both libraries shared the candidate's process, and the digests were the worker's word. 5:
/// `outside_bytes`, `determinism`, `alignment` and `unused_bits` are the engine's too, in framed
/// table jobs of the trial worker on messages the engine drew (`tabled`). 6: `reentrancy` is the
/// engine's, in two threads of one such job (`--two-threads`). 7: `over_read` is the engine's,
/// each message laid against an inaccessible page in such a job, its digest compared too.
pub const CHECKS_VERSION: u32 = 7;

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
