//! `over_read`: each length of the sample with its message ending flush against a page the
//! worker may not read, then starting right after one (`measure::table::FLUSH_END`,
//! `FLUSH_START`), in one framed table job. A read past either end kills the worker with
//! SIGSEGV, and the record it died on names the length and the side; each digest must still
//! be the sample's.

use super::{Stop, Tabled, compared, framed};
use crate::conform::verdict::Digests;
use crate::measure::table::{AROUND, FLUSH_END, FLUSH_START};
use crate::vocabulary::Check;

/// The words of a flush placement, None for a message at an offset.
pub(super) fn flush_note(msg_offset: u8) -> Option<&'static str> {
    match msg_offset {
        FLUSH_END => Some("the message ending flush against an inaccessible page"),
        FLUSH_START => Some("the message starting right after an inaccessible page"),
        _ => None,
    }
}

impl Tabled<'_> {
    pub(super) fn over_read(&mut self) -> Result<Digests, Stop> {
        let samples = self.samples.clone();
        let mut plan = Vec::with_capacity(2 * samples.len());
        for side in [FLUSH_END, FLUSH_START] {
            for s in &samples {
                plan.push((s, side));
            }
        }
        let frames: Vec<_> = plan
            .iter()
            .map(|&(s, side)| framed(&s.msg, s.bits, (side, 0), [0; AROUND], [0; AROUND]))
            .collect();
        let answers = self.hash(Check::OverRead, &frames)?;
        let mut digests = Digests::default();
        for ((s, side), got) in plan.into_iter().zip(answers) {
            let note = flush_note(side).unwrap_or_default();
            let mut c = compared(
                s.bits,
                &format!("the digest with {note}"),
                s.digest.clone(),
                got,
            );
            if let Some(e) = c.failed.as_mut() {
                e.what = format!("{} with {note}", e.what);
            }
            digests.calls.push(c);
        }
        Ok(digests)
    }
}
