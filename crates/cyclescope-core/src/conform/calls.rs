//! The checks about the calls themselves: `unused_bits` (the low bits past a length that ends
//! mid-byte), `digest_length` (an unsupported width), `determinism` (the same message again,
//! after more calls than the KAT makes in a process) and `reentrancy` (two threads at once).

use super::Outcome;
use super::buffers::Sample;
use super::probe::{AROUND, Offsets, Probe, digest_difference};
use crate::plugin::{Arena, HashLibrary, Placement};

/// Calls of `determinism`: more than KAT_2_12's 4097 and KAT_2_23's 3 together, so a library
/// that changes after a few thousand calls in one process changes inside this check.
pub(crate) const DETERMINISM_CALLS: usize = 6000;
/// Calls per thread of `reentrancy` (each a message of up to 4 KiB).
const REENTRANT_CALLS: usize = 400;

/// `unused_bits`: a finding when setting the unused low bits of the last byte changes the
/// digest (the official generator clears them, so the KAT never sees it).
pub(crate) fn unused_bits(probe: &mut Probe, samples: &[Sample]) -> Outcome {
    if !probe.takes_bits() {
        return Outcome::Skipped {
            why: "this ABI takes whole bytes only".into(),
        };
    }
    for s in samples.iter().filter(|s| s.bits % 8 != 0) {
        let mut set = s.msg.clone();
        let r = (s.bits % 8) as u32;
        if let Some(last) = set.last_mut() {
            *last |= 0xffu8 >> r;
        }
        let got = match probe.hash(&set, s.bits, Offsets::default()) {
            Ok(g) => g,
            Err(evidence) => return Outcome::Fail { evidence },
        };
        let what = "the digest with the unused low bits of the last byte set".to_string();
        if let Some(evidence) = digest_difference(&s.digest, &got, s.bits, what) {
            return Outcome::Finding { evidence };
        }
    }
    Outcome::Pass
}

/// `digest_length`: a width the library refuses must leave the digest buffer untouched; a
/// width it accepts must not be written past. A finding, since the API only says 0 = success.
pub(crate) fn digest_length(probe: &mut Probe) -> Outcome {
    if !probe.takes_bits() {
        return Outcome::Skipped {
            why: "this ABI has no digest width argument".into(),
        };
    }
    let bits = 256u64;
    let msg = probe.message(bits);
    for width in [0u32, 7, probe.digest_bits + 8] {
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
        // A refused width may write nothing; an accepted one nothing past its bytes.
        let allowed = if rc == 0 { AROUND..AROUND + room } else { 0..0 };
        let changed = canary
            .iter()
            .zip(seen)
            .enumerate()
            .find(|&(i, (a, b))| a != b && !allowed.contains(&i));
        if let Some((i, (&want, &got))) = changed {
            let said = if rc == 0 {
                "accepted".to_string()
            } else {
                format!("refused with {rc}")
            };
            return Outcome::Finding {
                evidence: super::Evidence {
                    bits,
                    offset: Some(i as i64 - AROUND as i64),
                    byte: Some((want, got)),
                    what: format!(
                        "a digest width of {width} bits, {said}, wrote the digest buffer"
                    ),
                },
            };
        }
    }
    Outcome::Pass
}

/// `determinism`: the sample's messages over and over, each digest against the first.
pub(crate) fn determinism(probe: &mut Probe, samples: &[Sample]) -> Outcome {
    for i in 0..DETERMINISM_CALLS.max(samples.len()) {
        let Some(s) = samples.get(i % samples.len().max(1)) else {
            break;
        };
        let got = match probe.hash(&s.msg, s.bits, Offsets::default()) {
            Ok(g) => g,
            Err(evidence) => return Outcome::Fail { evidence },
        };
        let what = format!("the digest of a message hashed before, {i} calls into the check,");
        if let Some(evidence) = digest_difference(&s.digest, &got, s.bits, what) {
            return Outcome::Fail { evidence };
        }
    }
    Outcome::Pass
}

/// `reentrancy`: two threads, each hashing its own messages (the longest of the sample, in
/// turn), both started together; every digest against the serial one.
pub(crate) fn reentrancy(lib: &HashLibrary, digest_bits: u32, samples: &[Sample]) -> Outcome {
    let mut long: Vec<&Sample> = samples.iter().filter(|s| s.bits >= 1024).collect();
    long.sort_by_key(|s| std::cmp::Reverse(s.bits));
    let mut sets: [Vec<Sample>; 2] = [Vec::new(), Vec::new()];
    for (i, s) in long.iter().enumerate() {
        sets[i % 2].push((*s).clone());
    }
    if sets.iter().any(Vec::is_empty) {
        return Outcome::Skipped {
            why: "the sample has too few messages of 1024 bits or more".into(),
        };
    }
    let start = std::sync::Barrier::new(2);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let outcomes: Vec<Outcome> = std::thread::scope(|scope| {
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
                h.join().unwrap_or_else(|_| Outcome::Skipped {
                    why: "a checking thread panicked".into(),
                })
            })
            .collect()
    });
    outcomes
        .into_iter()
        .find(|o| *o != Outcome::Pass)
        .unwrap_or(Outcome::Pass)
}

fn one_thread(
    lib: &HashLibrary,
    digest_bits: u32,
    set: &[Sample],
    start: &std::sync::Barrier,
    stop: &std::sync::atomic::AtomicBool,
) -> Outcome {
    use std::sync::atomic::Ordering;
    let mut probe = match Probe::new(lib, digest_bits) {
        Ok(p) => p,
        Err(e) => {
            start.wait();
            return Outcome::Skipped {
                why: format!("a checking thread could not map memory ({e})"),
            };
        }
    };
    start.wait();
    for i in 0..REENTRANT_CALLS {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let s = &set[i % set.len()];
        let got = match probe.hash(&s.msg, s.bits, Offsets::default()) {
            Ok(g) => g,
            Err(evidence) => return Outcome::Fail { evidence },
        };
        let what = "the digest, hashed while another thread was hashing another message,";
        if let Some(evidence) = digest_difference(&s.digest, &got, s.bits, what.into()) {
            stop.store(true, Ordering::Relaxed);
            return Outcome::Fail { evidence };
        }
    }
    Outcome::Pass
}
