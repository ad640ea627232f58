//! The checks' worker side: the checks that only the candidate's own process can make, on a
//! loaded library — `input_unchanged` and `output_bounds`
//! (over this process's calls), `over_read` (a guard page at either end of the message) and
//! `digest_length` (widths the instance does not have) — a step reported before each (and
//! before each call that may end the process), the outcome after it. `over_read`, whose
//! failure ends the process, and `digest_length`, whose crash is only a finding, come last.
//! Runs only inside `cyclescope worker kat`, after the engine's own checks (`ENGINE_CHECKS`,
//! each in trial workers: `oracle`, `tabled`); it decides no KAT status.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::probe::Probe;
use super::verdict::{self, Digests};
use super::{Check, CheckResult, Outcome, buffers, calls, over_read};
use crate::plugin::{Abi, HashLibrary};

/// The order outcomes arrive in (the parent holds the worker to it): first the engine's own
/// (`ENGINE_CHECKS`: the two against an oracle, then the four it runs in framed table jobs,
/// `outside_bytes` first for the sample the others compare with), then the worker's. Each of
/// the engine's runs in trial workers of its own, so a crash in one decides that one alone. In
/// the worker the checks whose calls are out of domain come last, `over_read`, whose failure
/// ends the process, right before them: a library that crashes at a width of 0 bits cannot
/// skip a blocking check by it, nor lose one an honest verdict.
pub(crate) const RUN_ORDER: [Check; 11] = run_order();

/// The checks the engine runs against an oracle, in trial workers of their own (`oracle`).
pub const ORACLE_CHECKS: [Check; 2] = [Check::Differential, Check::LongMessage];

/// Every check the engine runs itself, in order: the oracle's, then the framed tables'
/// (`tabled`; `reentrancy` in two threads of one trial worker).
pub const ENGINE_CHECKS: [Check; 7] = [
    ORACLE_CHECKS[0],
    ORACLE_CHECKS[1],
    Check::OutsideBytes,
    Check::Determinism,
    Check::Alignment,
    Check::UnusedBits,
    Check::Reentrancy,
];

/// The checks the KAT worker runs, in order.
const WORKER_CHECKS: [Check; 4] = [
    Check::InputUnchanged,
    Check::OutputBounds,
    Check::OverRead,
    Check::DigestLength,
];

/// `ENGINE_CHECKS`, then `WORKER_CHECKS`.
const fn run_order() -> [Check; 11] {
    let mut order = [Check::Differential; 11];
    let mut i = 0;
    while i < order.len() {
        order[i] = match i < ENGINE_CHECKS.len() {
            true => ENGINE_CHECKS[i],
            false => WORKER_CHECKS[i - ENGINE_CHECKS.len()],
        };
        i += 1;
    }
    order
}

/// The checks the KAT worker runs, in order.
fn worker_order() -> impl Iterator<Item = Check> {
    WORKER_CHECKS.into_iter()
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

/// Runs the worker's checks on `lib` at `digest_bits`, reporting through `send`. They compare
/// with a sample of their own: messages of the lengths `outside_bytes` uses, hashed here.
pub fn run(lib: &HashLibrary, digest_bits: u32, send: &mut dyn FnMut(Report)) {
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
    let samples = buffers::sample(&mut probe);
    for check in worker_order() {
        send(Report::Step {
            check,
            bits: None,
            note: String::new(),
        });
        let judged: Judged = match check {
            _ if samples.is_empty() && needs_sample(check) => buffers::no_sample().into(),
            Check::DigestLength => calls::digest_length(&mut probe, &mut |bits, note| {
                send(Report::Step {
                    check,
                    bits: Some(bits),
                    note,
                })
            })
            .into(),
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
            // The engine's, in trial workers of their own (`oracle`, `tabled`): never here.
            _ => continue,
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
    check == Check::OverRead
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
        run(&lib, 512, &mut |r| match r {
            Report::Step { check, .. } => steps.push(check),
            Report::Done(result, _) => done.push(result),
        });
        let order: Vec<Check> = done.iter().map(|r| r.check).collect();
        assert_eq!(order, RUN_ORDER[ENGINE_CHECKS.len()..]);
        assert!(steps.iter().filter(|&&c| c == Check::OverRead).count() > 2);
        for r in &done {
            assert_eq!(r.outcome, Outcome::Pass, "{:?}", r.check);
        }
    }
}
