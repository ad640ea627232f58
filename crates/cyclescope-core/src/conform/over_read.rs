//! `over_read`: each length of the sample with its message ending flush against an
//! inaccessible page, then starting right after one. A read past either end kills the
//! worker with SIGSEGV; the step announced before each call lets the parent name the length
//! and the side. Runs last, since a failure ends the process. The digests are not compared
//! here (such a message is rarely aligned: that is `alignment`'s question).

use super::Outcome;
use super::buffers::Sample;
use super::probe::{AROUND, Probe, io_failed};
use crate::plugin::{Arena, Placement};

/// Which end of the message touches the inaccessible page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flush {
    End,
    Start,
}

impl Flush {
    pub(crate) fn note(self) -> &'static str {
        match self {
            Flush::End => "the message ending flush against an inaccessible page",
            Flush::Start => "the message starting right after an inaccessible page",
        }
    }
}

/// Runs the check; `step` is told each (bits, side) before its call.
pub(crate) fn over_read(
    probe: &mut Probe,
    samples: &[Sample],
    step: &mut dyn FnMut(u64, Flush),
) -> Outcome {
    let d = probe.digest_bytes();
    for s in samples {
        for flush in [Flush::End, Flush::Start] {
            let n = s.msg.len();
            let (mut msg, mut out) = match (Arena::new(n), Arena::new(d + 2 * AROUND)) {
                (Ok(m), Ok(o)) => (m, o),
                (Err(e), _) | (_, Err(e)) => {
                    return Outcome::Skipped {
                        why: io_failed(s.bits, &e).to_string(),
                    };
                }
            };
            let msg_at = match flush {
                Flush::End => msg.len() - n,
                Flush::Start => 0,
            };
            msg.bytes_mut()[msg_at..msg_at + n].copy_from_slice(&s.msg);
            step(s.bits, flush);
            let at = Placement {
                msg_at,
                msg_bits: s.bits,
                out_at: AROUND,
                out_bytes: d,
            };
            let rc = probe
                .lib
                .crypt_hash_in(probe.digest_bits, &msg, &mut out, at);
            if rc != 0 {
                let what = format!("CryptHash returned {rc} with {}", flush.note());
                let evidence = super::Evidence {
                    bits: s.bits,
                    offset: None,
                    byte: None,
                    what,
                };
                return Outcome::Fail { evidence };
            }
        }
    }
    Outcome::Pass
}
