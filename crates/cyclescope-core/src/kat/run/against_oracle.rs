//! The KAT job's checks against an oracle (`differential`, `long_message`), run by the engine
//! once every file is written and before the checks' worker starts: each library hashes the
//! engine's messages in a trial worker of its own (`conform::oracle`), and the engine judges
//! the digests (`conform::verdict::judge`). It speaks each check's step and outcome in the KAT
//! protocol's messages, so the job's bookkeeping (`order`, `check`) reads them as it reads the
//! worker's.

use super::KatOptions;
use super::KatScope;
use crate::catalog::Instance;
use crate::conform::oracle::{self, Pair, Stop};
use crate::conform::verdict::{self, Digests};
use crate::conform::{Check, CheckResult, ORACLE_CHECKS, Outcome};
use crate::kat::KatStatus;
use crate::kat::generate::KatFile;
use crate::kat::job::KatMessage;
use crate::measure::table::TableJob;

/// How the checks went.
pub(super) enum Ran {
    /// Both checks have an outcome (a skip among them).
    Done,
    /// The candidate's worker tampered: a TAMPERED fault was spoken, and the job ends.
    Stopped,
    Cancelled,
}

/// Runs both checks for `inst` and speaks them into `send`; `files` are the job's (a fault
/// names the last).
pub(super) fn run(
    inst: &Instance,
    opts: &KatOptions,
    files: &[KatFile],
    send: &mut dyn FnMut(KatMessage),
) -> Ran {
    let found = crate::conform::oracle_for(inst, &opts.peers);
    let job = TableJob {
        cancel: opts.cancel.clone(),
        cpu: opts.cpu,
        limits: Some(opts.limits),
        ..TableJob::plain(inst.digest_bits, inst.abi, opts.timeout)
    };
    for check in ORACLE_CHECKS {
        send(KatMessage::CheckStep {
            check,
            bits: None,
            note: String::new(),
        });
        let ran: Result<Digests, Stop> = match &found {
            _ if check == Check::LongMessage && opts.scope != KatScope::Full => Err(Stop::Skip(
                "opt-in: `kat --full` runs it (a 512 MiB message)".into(),
            )),
            None => Err(Stop::Skip(
                "no second implementation of this instance (a Reference/Optimized pair of one \
                 submission, or `oracle = \"LABEL\"` in config.toml)"
                    .into(),
            )),
            Some(o) => oracle::run(
                check,
                &Pair {
                    candidate: &inst.library,
                    abi: inst.abi,
                    oracle: o,
                },
                &job,
            ),
        };
        let (outcome, digests) = match ran {
            Ok(d) => (verdict::judge(check, &d), Some(d)),
            Err(Stop::Skip(why)) => (Outcome::Skipped { why }, None),
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
            digests,
        });
    }
    Ran::Done
}
