//! The checks about the calls themselves: the checks' worker's `digest_length` (an unsupported
//! width, outside the KAT's and the timing's domain: what goes wrong there only at that call is
//! a finding, what would void a timed figure, a write past a buffer, a failure), and the
//! engine's plans for `determinism` (`DETERMINISM_CALLS`) and `reentrancy` (two threads of one
//! trial worker at once), which `tabled` runs.

use super::Outcome;
use super::buffers::Sample;
use super::probe::{AROUND, Probe};
use crate::plugin::{Arena, Placement};

/// Calls of `determinism`: more than KAT_2_12's 4097 and KAT_2_23's 3 together, so a library
/// that changes after a few thousand calls in one process changes inside this check.
pub(crate) const DETERMINISM_CALLS: usize = 6000;
/// Calls per thread of `reentrancy` (each a message of 1024 bits or more, up to 4 KiB).
const REENTRANT_CALLS: usize = 400;

/// `digest_length`: widths the instance does not have, each announced before its call (so
/// that the parent names the width a crash happened at, a finding). A width the library
/// refuses may write its own bytes (a finding: the API only defines 0 as success), an
/// accepted one exactly those; a write past them is a failure, as past any digest.
pub(crate) fn digest_length(probe: &mut Probe, step: &mut dyn FnMut(u64, String)) -> Outcome {
    if !probe.takes_bits() {
        return Outcome::Skipped {
            why: "this ABI has no digest width argument".into(),
        };
    }
    let bits = 256u64;
    let msg = probe.message(bits);
    let mut finding = None;
    // 0 bits last: a division by the width is the likeliest crash, and a crash ends the check.
    for width in [probe.digest_bits + 8, 7, 0] {
        let room = (width as usize).div_ceil(8);
        let (Ok(mut m), Ok(mut out)) = (
            Arena::new(bits as usize / 8 + AROUND),
            Arena::new(room + 2 * AROUND),
        ) else {
            return Outcome::Skipped {
                why: "the worker could not map memory for the check".into(),
            };
        };
        m.bytes_mut()[..msg.len()].copy_from_slice(&msg);
        let mut canary = vec![0u8; room + 2 * AROUND];
        probe.noise.fill(&mut canary);
        out.bytes_mut()[..canary.len()].copy_from_slice(&canary);
        step(bits, format!("a digest width of {width} bits"));
        let rc = probe.lib.crypt_hash_in(
            width,
            &m,
            &mut out,
            Placement {
                msg_at: 0,
                msg_bits: bits,
                out_at: AROUND,
                out_bytes: room,
            },
        );
        let seen = &out.bytes()[..canary.len()];
        let own = AROUND..AROUND + room;
        let mut changes = canary
            .iter()
            .zip(seen)
            .enumerate()
            .filter(|&(_, (a, b))| a != b);
        let said = if rc == 0 {
            "accepted".to_string()
        } else {
            format!("refused with {rc}")
        };
        let evidence = |i: usize, want: u8, got: u8, what: String| super::Evidence {
            bits,
            offset: Some(i as i64 - AROUND as i64),
            byte: Some((want, got)),
            what,
        };
        if let Some((i, (&want, &got))) = changes.clone().find(|&(i, _)| !own.contains(&i)) {
            let what =
                format!("a digest width of {width} bits, {said}, wrote past its {room} bytes");
            return Outcome::Fail {
                evidence: evidence(i, want, got, what),
            };
        }
        if rc != 0
            && finding.is_none()
            && let Some((i, (&want, &got))) = changes.next()
        {
            let what = format!("a digest width of {width} bits, {said}, wrote its digest bytes");
            finding = Some(evidence(i, want, got, what));
        }
    }
    finding.map_or(Outcome::Pass, |evidence| Outcome::Finding { evidence })
}

/// `reentrancy`'s calls, in the order of a `--two-threads` table (the even records in one
/// thread, the odd in the other): the sample's messages of 1024 bits or more, longest first,
/// dealt to the two threads in turn, `REENTRANT_CALLS` each.
pub(crate) fn reentrant_plan(samples: &[Sample]) -> Result<Vec<Sample>, String> {
    let mut long: Vec<&Sample> = samples.iter().filter(|s| s.bits >= 1024).collect();
    long.sort_by_key(|s| std::cmp::Reverse(s.bits));
    let sets: [Vec<&Sample>; 2] = [
        long.iter().step_by(2).copied().collect(),
        long.iter().skip(1).step_by(2).copied().collect(),
    ];
    if sets.iter().any(Vec::is_empty) {
        return Err("the sample has too few messages of 1024 bits or more".into());
    }
    Ok((0..2 * REENTRANT_CALLS)
        .map(|i| {
            let set = &sets[i % 2];
            set[(i / 2) % set.len()].clone()
        })
        .collect())
}
