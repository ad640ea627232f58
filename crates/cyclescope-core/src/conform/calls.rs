//! The checks' worker's checks about the calls themselves: `digest_length` (an unsupported
//! width, outside the KAT's and the timing's domain: what goes wrong there only at that call is
//! a finding, what would void a timed figure, a write past a buffer, a failure) and
//! `reentrancy` (two threads at once). `DETERMINISM_CALLS` is the engine's (`tabled`).

use super::Outcome;
use super::buffers::{Sample, failed};
use super::probe::{AROUND, Offsets, Probe};
use super::verdict::{Compared, Digests};
use crate::plugin::{Arena, HashLibrary, Placement};

/// Calls of `determinism`: more than KAT_2_12's 4097 and KAT_2_23's 3 together, so a library
/// that changes after a few thousand calls in one process changes inside this check.
pub(crate) const DETERMINISM_CALLS: usize = 6000;
/// Calls per thread of `reentrancy` (each a message of up to 4 KiB).
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

/// One call of a sample's message at offset 0, against its digest.
fn compared(probe: &mut Probe, s: &Sample, what: String) -> Compared {
    match probe.hash(&s.msg, s.bits, Offsets::default()) {
        Ok(got) => Compared {
            bits: s.bits,
            what,
            vector: None,
            want: s.digest.clone(),
            got,
            failed: None,
        },
        Err(evidence) => failed(s.bits, what, evidence),
    }
}

/// `reentrancy`: two threads, each hashing its own messages (the longest of the sample, in
/// turn), both started together; every digest against the serial one.
pub(crate) fn reentrancy(
    lib: &HashLibrary,
    digest_bits: u32,
    samples: &[Sample],
) -> Result<Digests, String> {
    let mut long: Vec<&Sample> = samples.iter().filter(|s| s.bits >= 1024).collect();
    long.sort_by_key(|s| std::cmp::Reverse(s.bits));
    let mut sets: [Vec<Sample>; 2] = [Vec::new(), Vec::new()];
    for (i, s) in long.iter().enumerate() {
        sets[i % 2].push((*s).clone());
    }
    if sets.iter().any(Vec::is_empty) {
        return Err("the sample has too few messages of 1024 bits or more".into());
    }
    let start = std::sync::Barrier::new(2);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let each: Vec<Result<Digests, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = sets
            .iter()
            .map(|set| {
                let (start, stop) = (&start, &stop);
                scope.spawn(move || one_thread(lib, digest_bits, set, start, stop))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a checking thread panicked".into()))
            })
            .collect()
    });
    // The first thread's calls, then the second's: the outcome is the first difference.
    let mut digests = Digests::default();
    for d in each {
        digests.calls.extend(d?.calls);
    }
    Ok(digests)
}

fn one_thread(
    lib: &HashLibrary,
    digest_bits: u32,
    set: &[Sample],
    start: &std::sync::Barrier,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<Digests, String> {
    use std::sync::atomic::Ordering;
    let mut probe = match Probe::new(lib, digest_bits) {
        Ok(p) => p,
        Err(e) => {
            start.wait();
            return Err(format!("a checking thread could not map memory ({e})"));
        }
    };
    start.wait();
    let mut digests = Digests::default();
    for i in 0..REENTRANT_CALLS {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let s = &set[i % set.len()];
        let what = "the digest, hashed while another thread was hashing another message,";
        digests.push_distinct(compared(&mut probe, s, what.into()));
        if digests.differs() {
            stop.store(true, Ordering::Relaxed);
            break;
        }
    }
    Ok(digests)
}
