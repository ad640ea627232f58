//! The KAT job's conformance checks (`conform::ENGINE_CHECKS`), once every file is written:
//! against an oracle (`differential`, `long_message`: `conform::oracle`), in framed table jobs
//! (`outside_bytes`, `determinism`, `alignment`, `unused_bits`, `reentrancy`, `over_read`,
//! `digest_length`: `conform::tabled`), and from what those jobs saw around their buffers
//! (`input_unchanged`, `output_bounds`). Every call is made in a trial worker, the program and
//! job kind of every timed call, on messages the engine drew, and the engine judges what comes
//! back (`conform::verdict::judge`). It speaks each check's step and outcome in the KAT job's
//! messages, so the job's bookkeeping (`order`, `check`) reads them in turn.

use super::KatOptions;
use super::KatScope;
use crate::catalog::Instance;
use crate::conform::oracle::{self, Pair};
use crate::conform::tabled::{self, Tabled};
use crate::conform::verdict::{self, Digests};
use crate::conform::{Check, CheckResult, ENGINE_CHECKS, Evidence, Outcome};
use crate::kat::KatStatus;
use crate::kat::generate::KatFile;
use crate::kat::job::KatMessage;
use crate::kat::known::KnownAnswer;
use crate::measure::table::{Account, TableJob};

/// How the checks went.
pub(super) enum Ran {
    /// Every check has an outcome (a skip among them).
    Done,
    /// A candidate's worker tampered: a TAMPERED fault was spoken, and the job ends.
    Stopped,
    Cancelled,
}

/// A check decided by a change seen or not.
fn seen(change: Option<Evidence>) -> Outcome {
    match change {
        None => Outcome::Pass,
        Some(evidence) => Outcome::Fail { evidence },
    }
}

/// Why a check gave no digests.
enum Stop {
    Decided(Outcome),
    Tampered(String),
    Cancelled,
}

/// Runs every check of `ENGINE_CHECKS` for `inst` and speaks them into `send`; `files` are the
/// job's (a fault names the last), `vectors` the `KAT_2_12` vectors the engine verified.
pub(super) fn run(
    inst: &Instance,
    opts: &KatOptions,
    files: &[KatFile],
    vectors: &[KnownAnswer],
    account: &mut Account,
    send: &mut dyn FnMut(KatMessage),
) -> Ran {
    let found = crate::conform::oracle_for(inst, &opts.peers);
    let job = TableJob {
        cancel: opts.cancel.clone(),
        cpu: opts.cpu,
        limits: Some(opts.limits),
        ..TableJob::plain(inst.digest_bits, inst.abi, opts.timeout)
    };
    let mut own = Tabled::new(&inst.library, job.clone());
    let skip = |why: &str| Stop::Decided(Outcome::Skipped { why: why.into() });
    let started = std::time::Instant::now();
    for check in ENGINE_CHECKS {
        send(KatMessage::CheckStep {
            check,
            bits: None,
            note: String::new(),
        });
        let ran: Result<Digests, Stop> = match (check, &found) {
            (Check::LongMessage, _) if opts.scope != KatScope::Full => {
                Err(skip("opt-in: `kat --full` runs it (a 512 MiB message)"))
            }
            (Check::Differential | Check::LongMessage, None) => Err(skip(
                "no second implementation of this instance (a Reference/Optimized pair of one \
                 submission, or `oracle = \"LABEL\"` in config.toml)",
            )),
            (Check::Differential | Check::LongMessage, Some(o)) => {
                let pair = Pair {
                    candidate: &inst.library,
                    abi: inst.abi,
                    oracle: o,
                };
                oracle::run(check, &pair, &job, account).map_err(|s| match s {
                    oracle::Stop::Skip(why) => skip(&why),
                    oracle::Stop::Tampered(why) => Stop::Tampered(why),
                    oracle::Stop::Cancelled => Stop::Cancelled,
                })
            }
            // The first change the framed jobs above saw, each in the trial worker beside
            // the call (`tabled::Tabled::note`): these two come after every framed check.
            (Check::InputUnchanged, _) => Err(Stop::Decided(seen(own.input.clone()))),
            (Check::OutputBounds, _) => Err(Stop::Decided(seen(own.output.clone()))),
            _ => own.run(check, vectors).map_err(|s| match s {
                tabled::Stop::Decided(o) => Stop::Decided(o),
                tabled::Stop::Tampered(why) => Stop::Tampered(why),
                tabled::Stop::Cancelled => Stop::Cancelled,
            }),
        };
        let outcome = match ran {
            Ok(d) => verdict::judge(check, &d),
            Err(Stop::Decided(o)) => o,
            Err(Stop::Cancelled) => return Ran::Cancelled,
            Err(Stop::Tampered(detail)) => {
                send(KatMessage::Fault {
                    file: files.last().copied().unwrap_or(KatFile::Kat2_12),
                    status: KatStatus::Tampered,
                    detail,
                });
                return Ran::Stopped;
            }
        };
        send(KatMessage::CheckDone {
            result: CheckResult::new(check, outcome),
        });
    }
    account.add(own.account.peak_memory_bytes, own.account.cpu_time);
    // What the checks add to the gate, in the log beside the files' own times.
    send(KatMessage::Log {
        line: format!(
            "timing  conformance {:.3} s ({} checks, each in trial workers)",
            started.elapsed().as_secs_f64(),
            ENGINE_CHECKS.len()
        ),
    });
    Ran::Done
}
