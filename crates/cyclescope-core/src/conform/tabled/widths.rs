//! `digest_length`: one message hashed at widths the instance does not have, each in a framed
//! table job of its own at that width (`TableJob::any_width`), 0 bits last. These calls are
//! outside the KAT's and the timing's domain: a crash or a refusal that writes its digest
//! bytes is a finding; a write past the digest's room is a failure, as at any width.

use super::{Stop, Tabled, framed};
use crate::conform::{Evidence, Outcome};
use crate::measure::table::{Fault, Side, TableError, TableJob, hash_framed};
use crate::worker::Exit;

/// The message's length, in bits.
const BITS: u64 = 256;

impl Tabled<'_> {
    /// The outcome at every width, or why the job stopped.
    pub(super) fn digest_length(&mut self) -> Result<Outcome, Stop> {
        if !self.takes_bits {
            return Ok(Outcome::Skipped {
                why: "this ABI has no digest width argument".into(),
            });
        }
        let msg = self.message(BITS);
        let mut finding = None;
        for width in [self.job.digest_bits + 8, 7, 0] {
            let room = i64::from(width.div_ceil(8));
            let (before, after) = self.around();
            let job = TableJob {
                digest_bits: width,
                any_width: true,
                ..self.job.clone()
            };
            let frame = framed(&msg, BITS, (0, 0), before, after);
            let run = hash_framed(self.library, &job, &[frame], false);
            let said = match &run.answer {
                Ok(a) => {
                    self.account.add_answer(a);
                    "accepted".to_string()
                }
                Err(TableError::Fault {
                    fault: Fault::Returned(rc),
                    ..
                }) => format!("refused with {rc}"),
                Err(TableError::Cancelled) => return Err(Stop::Cancelled),
                Err(TableError::Ended { outcome, .. }) => {
                    if let Exit::Tampered(_) | Exit::Moved(_) = outcome.exit {
                        return Err(Stop::Tampered(format!(
                            "the library's table job for digest_length: its worker ended ({}){}",
                            outcome.exit, outcome.limit_note
                        )));
                    }
                    let what = format!(
                        "the worker ended ({}{}) at a digest width of {width} bits",
                        outcome.exit, outcome.limit_note
                    );
                    finding.get_or_insert(evidence(None, what));
                    continue;
                }
                Err(e) => {
                    let what = format!("a digest width of {width} bits gave no answer ({e})");
                    finding.get_or_insert(evidence(None, what));
                    continue;
                }
            };
            let digest_write = run.wrote.iter().find(|w| w.side == Side::Digest);
            if let Some(w) = digest_write.filter(|w| !(0..room).contains(&w.offset)) {
                let what =
                    format!("a digest width of {width} bits, {said}, wrote past its {room} bytes");
                return Ok(Outcome::Fail {
                    evidence: evidence(Some((w.offset, w.expected, w.found)), what),
                });
            }
            if let Some(w) = digest_write.filter(|_| run.answer.is_err()) {
                let what =
                    format!("a digest width of {width} bits, {said}, wrote its digest bytes");
                finding.get_or_insert(evidence(Some((w.offset, w.expected, w.found)), what));
            }
        }
        Ok(finding.map_or(Outcome::Pass, |evidence| Outcome::Finding { evidence }))
    }
}

fn evidence(at: Option<(i64, u8, u8)>, what: String) -> Evidence {
    Evidence {
        bits: BITS,
        offset: at.map(|(o, _, _)| o),
        byte: at.map(|(_, e, f)| (e, f)),
        what,
    }
}
