//! The worker side: runs every check on a loaded library and reports a step before each check
//! (and before each call that may end the process) and the outcome after it. The order keeps
//! every blocking check ahead of the calls outside the KAT's and the timing's domain
//! (`unused_bits`, `digest_length`), so that a crash there — a finding, not a failure — costs
//! no blocking check its verdict; `over_read`, whose failure ends the process, comes right
//! before them. Runs only inside `cyclescope worker kat`, after the KAT files; it decides no
//! KAT status. The checks against an oracle are not among them: the engine runs those itself,
//! before this worker starts (`oracle`), so that no second library shares the candidate's
//! process.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::probe::Probe;
use super::verdict::{self, Digests};
use super::{Check, CheckResult, Outcome, buffers, calls, over_read};
use crate::kat::known::KnownAnswer;
use crate::plugin::{Abi, HashLibrary};

/// The order outcomes arrive in (the parent holds the worker to it): first the two the engine
/// decides by itself against an oracle (`ORACLE_CHECKS`), then the worker's. `determinism` runs
/// right after the sample is taken, so that a library that changes after a number of calls
/// changes inside it, not in a check that compares with the sample. The checks whose calls
/// are out of domain come last: a library that crashes there (a division by the digest width
/// at 0 bits) cannot skip a blocking check by it, nor lose one an honest verdict; of the two,
/// `digest_length` (where such crashes are seen) is the very last.
pub(crate) const RUN_ORDER: [Check; 11] = [
    Check::Differential,
    Check::LongMessage,
    Check::OutsideBytes,
    Check::Determinism,
    Check::Alignment,
    Check::Reentrancy,
    Check::InputUnchanged,
    Check::OutputBounds,
    Check::OverRead,
    Check::UnusedBits,
    Check::DigestLength,
];

/// The checks the engine runs against an oracle, in trial workers of their own (`oracle`).
pub const ORACLE_CHECKS: [Check; 2] = [Check::Differential, Check::LongMessage];

/// The checks the KAT worker runs, in order.
fn worker_order() -> impl Iterator<Item = Check> {
    RUN_ORDER.into_iter().skip(ORACLE_CHECKS.len())
}

/// The second implementation to compare with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OracleSpec {
    /// The oracle instance's label (for the evidence).
    pub label: String,
    pub library: PathBuf,
    #[serde(default)]
    pub abi: Abi,
}

/// What the checks tell the worker to send.
#[derive(Debug, Clone, PartialEq)]
pub enum Report {
    /// About to run `check` (at `bits`, in the way `note` says).
    Step {
        check: Check,
        bits: Option<u64>,
        note: String,
    },
    /// A check ended: its outcome and, for a check judged from digests, the digests it
    /// was judged from (`verdict::judge`), for the parent to judge again.
    Done(CheckResult, Option<Digests>),
}

/// Runs the worker's checks on `lib` at `digest_bits`, reporting through `send`; `vectors`
/// are this job's `KAT_2_12` vectors `alignment` hashes (`verdict::vector_lengths`), read
/// back from the file the job wrote.
pub fn run(
    lib: &HashLibrary,
    digest_bits: u32,
    vectors: &[KnownAnswer],
    send: &mut dyn FnMut(Report),
) {
    let mut probe = match Probe::new(lib, digest_bits) {
        Ok(p) => p,
        Err(e) => {
            let why = format!("the worker could not map memory for the checks ({e})");
            for check in worker_order() {
                send(Report::Done(
                    CheckResult::new(check, Outcome::Skipped { why: why.clone() }),
                    None,
                ));
            }
            return;
        }
    };
    let mut samples = Vec::new();
    for check in worker_order() {
        send(Report::Step {
            check,
            bits: None,
            note: String::new(),
        });
        let judged: Judged = match check {
            Check::OutsideBytes => {
                let (d, s) = buffers::outside_bytes(&mut probe);
                samples = s;
                Ok(d).into()
            }
            Check::Alignment if !vectors.is_empty() => {
                Ok(buffers::alignment(&mut probe, vectors, &samples)).into()
            }
            _ if samples.is_empty() && needs_sample(check) => buffers::no_sample().into(),
            Check::Alignment => Ok(buffers::alignment(&mut probe, vectors, &samples)).into(),
            Check::UnusedBits => calls::unused_bits(&mut probe, &samples, &mut |bits, note| {
                send(Report::Step {
                    check,
                    bits: Some(bits),
                    note,
                })
            })
            .into(),
            Check::DigestLength => calls::digest_length(&mut probe, &mut |bits, note| {
                send(Report::Step {
                    check,
                    bits: Some(bits),
                    note,
                })
            })
            .into(),
            Check::Determinism => Ok(calls::determinism(&mut probe, &samples)).into(),
            Check::Reentrancy => calls::reentrancy(lib, digest_bits, &samples).into(),
            // The engine's, in trial workers of their own (`oracle`): never here.
            Check::Differential | Check::LongMessage => continue,
            Check::InputUnchanged => seen(probe.input.take()).into(),
            Check::OutputBounds => seen(probe.output.take()).into(),
            Check::OverRead => over_read::over_read(&mut probe, &samples, &mut |bits, flush| {
                send(Report::Step {
                    check,
                    bits: Some(bits),
                    note: flush.note().into(),
                })
            })
            .into(),
        };
        let (outcome, digests) = match judged {
            Judged::Claimed(o) => (o, None),
            // The same rule the parent judges the digests with.
            Judged::Digests(d) => (verdict::judge(check, &d), Some(d)),
        };
        send(Report::Done(CheckResult::new(check, outcome), digests));
    }
}

/// A check's result before its outcome: digests to judge, or an outcome claimed outright (a
/// skip, or a memory observation only the worker can make).
enum Judged {
    Digests(Digests),
    Claimed(Outcome),
}

impl From<Outcome> for Judged {
    fn from(o: Outcome) -> Self {
        Judged::Claimed(o)
    }
}

/// `Err` is a skip and why.
impl From<Result<Digests, String>> for Judged {
    fn from(r: Result<Digests, String>) -> Self {
        match r {
            Ok(d) => Judged::Digests(d),
            Err(why) => Judged::Claimed(Outcome::Skipped { why }),
        }
    }
}

fn needs_sample(check: Check) -> bool {
    !matches!(
        check,
        Check::DigestLength
            | Check::Differential
            | Check::LongMessage
            | Check::InputUnchanged
            | Check::OutputBounds
    )
}

fn seen(change: Option<super::Evidence>) -> Outcome {
    match change {
        None => Outcome::Pass,
        Some(evidence) => Outcome::Fail { evidence },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worker's checks on the bundled pseudoXOF in this process: every one reports, in
    /// order, and an honest library passes them all.
    #[test]
    fn an_honest_library_passes_and_every_check_reports_in_turn() {
        let lib = HashLibrary::open(&crate::catalog::bundled_library("pseudoxof")).unwrap();
        let mut steps = Vec::new();
        let mut done = Vec::new();
        run(&lib, 512, &[], &mut |r| match r {
            Report::Step { check, .. } => steps.push(check),
            Report::Done(result, _) => done.push(result),
        });
        let order: Vec<Check> = done.iter().map(|r| r.check).collect();
        assert_eq!(order, RUN_ORDER[ORACLE_CHECKS.len()..]);
        assert!(steps.iter().filter(|&&c| c == Check::OverRead).count() > 2);
        for r in &done {
            assert_eq!(r.outcome, Outcome::Pass, "{:?}", r.check);
        }
    }
}
