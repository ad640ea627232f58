//! The worker side: runs every check on a loaded library and reports a step before each check
//! (and before each call that may end the process) and the outcome after it. The order keeps
//! every blocking check ahead of the calls outside the KAT's and the timing's domain
//! (`unused_bits`, `digest_length`), so that a crash there — a finding, not a failure — costs
//! no blocking check its verdict; `over_read`, whose failure ends the process, comes right
//! before them. Runs only inside `cyclescope worker kat`, after the KAT files; it decides no
//! KAT status.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::probe::Probe;
use super::verdict::{self, Digests};
use super::{Check, CheckResult, Outcome, buffers, calls, oracle, over_read};
use crate::kat::known::KnownAnswer;
use crate::plugin::{Abi, HashLibrary};

/// The order the worker reports outcomes in (the parent holds it to it). `determinism` runs
/// right after the sample is taken, so that a library that changes after a number of calls
/// changes inside it, not in a check that compares with the sample. The checks whose calls
/// are out of domain come last: a library that crashes there (a division by the digest width
/// at 0 bits) cannot skip a blocking check by it, nor lose one an honest verdict; of the two,
/// `digest_length` (where such crashes are seen) is the very last.
pub(crate) const RUN_ORDER: [Check; 11] = [
    Check::OutsideBytes,
    Check::Determinism,
    Check::Alignment,
    Check::Reentrancy,
    Check::Differential,
    Check::LongMessage,
    Check::InputUnchanged,
    Check::OutputBounds,
    Check::OverRead,
    Check::UnusedBits,
    Check::DigestLength,
];

/// The second implementation to compare with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OracleSpec {
    /// The oracle instance's label (for the evidence).
    pub label: String,
    pub library: PathBuf,
    #[serde(default)]
    pub abi: Abi,
}

/// What to run beyond the default checks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConformPlan {
    pub oracle: Option<OracleSpec>,
    /// `long_message` (the KAT's `--full`).
    pub long_message: bool,
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

/// Runs every check on `lib` at `digest_bits`, reporting through `send`; `vectors` are this
/// job's `KAT_2_12` vectors `alignment` hashes (`verdict::vector_lengths`), read back from the
/// file the job wrote.
pub fn run(
    lib: &HashLibrary,
    digest_bits: u32,
    plan: &ConformPlan,
    vectors: &[KnownAnswer],
    send: &mut dyn FnMut(Report),
) {
    let mut probe = match Probe::new(lib, digest_bits) {
        Ok(p) => p,
        Err(e) => {
            let why = format!("the worker could not map memory for the checks ({e})");
            for check in RUN_ORDER {
                send(Report::Done(
                    CheckResult::new(check, Outcome::Skipped { why: why.clone() }),
                    None,
                ));
            }
            return;
        }
    };
    let oracle_lib = plan.oracle.as_ref().map(|o| {
        HashLibrary::open_abi(&o.library, o.abi)
            .map_err(|e| format!("the oracle {} did not load: {e}", o.label))
    });
    let oracle_label = plan
        .oracle
        .as_ref()
        .map(|o| o.label.clone())
        .unwrap_or_default();
    let mut samples = Vec::new();
    for check in RUN_ORDER {
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
            Check::Differential => match &oracle_lib {
                None => no_oracle().into(),
                Some(Err(why)) => Err(why.clone()).into(),
                Some(Ok(o)) => oracle::differential(&mut probe, o, &oracle_label).into(),
            },
            Check::LongMessage => match (&oracle_lib, plan.long_message) {
                (_, false) => {
                    Err("opt-in: `kat --full` runs it (a 512 MiB message)".to_string()).into()
                }
                (None, true) => no_oracle().into(),
                (Some(Err(why)), true) => Err(why.clone()).into(),
                (Some(Ok(o)), true) => oracle::long_message(&mut probe, o, &oracle_label).into(),
            },
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

fn no_oracle() -> Outcome {
    Outcome::Skipped {
        why: "no second implementation of this instance (a Reference/Optimized pair of one \
              submission, or `oracle = \"LABEL\"` in config.toml)"
            .into(),
    }
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

    /// The checks on the bundled pseudoXOF in this process: every one reports, in order, and
    /// an honest library passes all but the two that need an oracle or `--full`.
    #[test]
    fn an_honest_library_passes_and_every_check_reports_in_turn() {
        let lib = HashLibrary::open(&crate::catalog::bundled_library("pseudoxof")).unwrap();
        let mut steps = Vec::new();
        let mut done = Vec::new();
        run(&lib, 512, &ConformPlan::default(), &[], &mut |r| match r {
            Report::Step { check, .. } => steps.push(check),
            Report::Done(result, _) => done.push(result),
        });
        let order: Vec<Check> = done.iter().map(|r| r.check).collect();
        assert_eq!(order, RUN_ORDER);
        assert!(steps.iter().filter(|&&c| c == Check::OverRead).count() > 2);
        for r in &done {
            let skipped = matches!(r.check, Check::Differential | Check::LongMessage);
            match &r.outcome {
                Outcome::Pass => assert!(!skipped, "{r:?}"),
                Outcome::Skipped { .. } => assert!(skipped, "{r:?}"),
                other => panic!("{:?}: {other:?}", r.check),
            }
        }
    }

    #[test]
    fn a_library_against_itself_as_oracle_agrees() {
        let path = crate::catalog::bundled_library("pseudoxof");
        let lib = HashLibrary::open(&path).unwrap();
        let plan = ConformPlan {
            oracle: Some(OracleSpec {
                label: "itself".into(),
                library: path,
                abi: Abi::Iccs,
            }),
            long_message: false,
        };
        let mut differential = None;
        run(&lib, 256, &plan, &[], &mut |r| {
            if let Report::Done(result, _) = r
                && result.check == Check::Differential
            {
                differential = Some(result.outcome);
            }
        });
        assert_eq!(differential, Some(Outcome::Pass));
    }
}
