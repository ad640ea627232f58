//! `reentrancy` in a framed table job of two threads (`--two-threads`).

use super::{Stop, Tabled, compared, framed};
use crate::conform::Outcome;
use crate::conform::calls::reentrant_plan;
use crate::conform::verdict::Digests;
use crate::vocabulary::Check;

impl Tabled<'_> {
    /// `reentrancy`: the sample's messages of 1024 bits or more, shared by two threads of one
    /// job that hash at once (`--two-threads`), each digest against the sample's.
    pub(super) fn reentrancy(&mut self) -> Result<Digests, Stop> {
        let plan =
            reentrant_plan(&self.samples).map_err(|why| Stop::Decided(Outcome::Skipped { why }))?;
        let mut frames = Vec::with_capacity(plan.len());
        for s in &plan {
            let (before, after) = self.around();
            frames.push(framed(&s.msg, s.bits, (0, 0), before, after));
        }
        let answers = self.hash(Check::Reentrancy, &frames)?;
        let what = "the digest, hashed while another thread was hashing another message,";
        let mut digests = Digests::default();
        for (s, got) in plan.iter().zip(answers) {
            digests.push_distinct(compared(s.bits, what, s.digest.clone(), got));
            if digests.differs() {
                break;
            }
        }
        Ok(digests)
    }
}
