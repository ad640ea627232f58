//! The checks against a second implementation of the same instance (the oracle: the other of
//! a submission's Reference and Optimized builds, or the instance `config.toml` names):
//! `differential` at random lengths up to 3 MiB, and `long_message` (`--full`) around 2^32
//! bits, where a 32-bit bit counter wraps. Both run in the engine, never in a candidate's
//! process: the engine draws the messages, each library hashes them in a table job of its own
//! trial worker (`measure::table`, the oracle's first), and the engine compares the digests
//! that came back. Neither library shares a process with the other, so neither can see, patch
//! or forge the other's answers, and the candidate's job is a table job like its known
//! answers'.

use std::path::Path;

use super::buffers::clear_unused;
use super::buffers::failed;
use super::noise::Noise;
use super::verdict::{Compared, Digests};
use super::{Check, Evidence, OracleSpec};
use crate::measure::table::{self, Account, Fault, TableError, TableJob};
use crate::plugin::Abi;
use crate::worker::Exit;

/// Short, middle and long random lengths (bits): the long ones between 1 MiB (KAT_2_23's
/// length, which the KAT already covers) and 3 MiB.
fn random_lengths(noise: &mut Noise, whole_bytes: bool) -> Vec<u64> {
    let mut v = Vec::new();
    for (n, lo, hi) in [
        (8, 0, 8192),
        (4, 8193, 1 << 19),
        (2, (1 << 23) + 1, 3 << 23),
    ] {
        for _ in 0..n {
            let b = noise.between(lo, hi);
            v.push(if whole_bytes { b / 8 * 8 } else { b });
        }
    }
    v
}

/// The candidate and its oracle, as the engine hands them to trial workers.
pub struct Pair<'a> {
    pub candidate: &'a Path,
    pub abi: Abi,
    pub oracle: &'a OracleSpec,
}

/// Why an oracle check gave no outcome of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// The check could not run (the oracle failed): the skip's reason.
    Skip(String),
    /// The candidate's worker wrote to its protocol channel or left its place: the job is
    /// TAMPERED, in these words.
    Tampered(String),
    Cancelled,
}

/// Runs `check` (`differential` or `long_message`) for `pair`, each library's table job as
/// `job` says (its width, deadline, CPU and limits; the ABI is each library's own).
pub fn run(
    check: Check,
    pair: &Pair,
    job: &TableJob,
    account: &mut Account,
) -> Result<Digests, Stop> {
    let mut noise = Noise::fresh();
    match check {
        Check::LongMessage => long_message(pair, job, &mut noise, account),
        _ => {
            let whole = !(pair.abi.is_iccs() && pair.oracle.abi.is_iccs());
            let messages: Vec<(Vec<u8>, u64)> = random_lengths(&mut noise, whole)
                .into_iter()
                .map(|bits| {
                    let mut m = vec![0u8; bits.div_ceil(8) as usize];
                    noise.fill(&mut m);
                    clear_unused(&mut m, bits);
                    (m, bits)
                })
                .collect();
            let refs: Vec<(&[u8], u64)> =
                messages.iter().map(|(m, b)| (m.as_slice(), *b)).collect();
            compare(pair, job, &refs, account)
        }
    }
}

/// `long_message`: 2^32 bits and one 512-bit block on either side, the three messages the
/// prefixes of one random 512 MiB buffer.
fn long_message(
    pair: &Pair,
    job: &TableJob,
    noise: &mut Noise,
    account: &mut Account,
) -> Result<Digests, Stop> {
    const WRAP: u64 = 1 << 32;
    let mut msg = vec![0u8; (WRAP + 512) as usize / 8];
    noise.fill(&mut msg);
    let refs: Vec<(&[u8], u64)> = [WRAP - 512, WRAP, WRAP + 512]
        .into_iter()
        .map(|bits| (&msg[..], bits))
        .collect();
    compare(pair, job, &refs, account)
}

/// The oracle's digests of `messages`, then the candidate's, compared in order up to the first
/// difference.
fn compare(
    pair: &Pair,
    job: &TableJob,
    messages: &[(&[u8], u64)],
    account: &mut Account,
) -> Result<Digests, Stop> {
    let label = &pair.oracle.label;
    let as_abi = |abi| TableJob { abi, ..job.clone() };
    let wants = match table::hash_table(&pair.oracle.library, &as_abi(pair.oracle.abi), messages) {
        Ok(a) => {
            account.add_answer(&a);
            a.digests
        }
        Err(TableError::Cancelled) => return Err(Stop::Cancelled),
        Err(e) => {
            return Err(Stop::Skip(format!(
                "the oracle {label} failed: {}",
                said(&e)
            )));
        }
    };
    let what = format!("the digest, against the oracle {label}'s,");
    let (gots, end) = match table::hash_table(pair.candidate, &as_abi(pair.abi), messages) {
        Ok(a) => {
            account.add_answer(&a);
            (a.digests, None)
        }
        Err(TableError::Fault {
            index,
            fault,
            before,
        }) => (before, Some((index, fault))),
        Err(TableError::Cancelled) => return Err(Stop::Cancelled),
        Err(TableError::Ended { outcome, .. })
            if matches!(outcome.exit, Exit::Tampered(_) | Exit::Moved(_)) =>
        {
            return Err(Stop::Tampered(format!(
                "the library's table job for the oracle checks: {}",
                worker_said(&outcome)
            )));
        }
        // No digests at all is no pass: the check is the candidate's to fail.
        Err(e) => {
            return Ok(Digests {
                calls: Vec::new(),
                claim: Some(Evidence {
                    bits: messages.first().map_or(0, |&(_, b)| b),
                    offset: None,
                    byte: None,
                    what: format!("the candidate's table job gave no digests: {}", said(&e)),
                }),
            });
        }
    };
    let mut digests = Digests::default();
    for ((&(_, bits), want), got) in messages.iter().zip(wants).zip(gots) {
        digests.calls.push(Compared {
            bits,
            what: what.clone(),
            vector: None,
            want,
            got,
            failed: None,
        });
        if digests.differs() {
            return Ok(digests);
        }
    }
    if let Some((index, fault)) = end {
        let bits = messages.get(index).map_or(0, |&(_, b)| b);
        let (offset, why) = fault_evidence(fault);
        let evidence = Evidence {
            bits,
            offset,
            byte: None,
            what: why,
        };
        match fault {
            // An error return is the call's answer; a write is what the worker saw.
            Fault::Returned(_) => digests.calls.push(failed(bits, what, evidence)),
            _ => digests.claim = Some(evidence),
        }
    }
    Ok(digests)
}

/// What a fault the candidate's worker reported says, and the byte it names.
fn fault_evidence(fault: Fault) -> (Option<i64>, String) {
    match fault {
        Fault::Returned(rc) => (None, format!("CryptHash returned {rc}")),
        Fault::InputChanged(at) => (
            Some(at as i64),
            "a write into the message itself, in the candidate's table job".into(),
        ),
        Fault::Overflow(buffer) => (
            None,
            format!(
                "a write past the {} buffer, in the candidate's table job",
                buffer.unwrap_or("message or digest")
            ),
        ),
    }
}

/// A table job's error in the words of how its worker ended.
fn said(e: &TableError) -> String {
    match e {
        TableError::Ended { outcome, .. } => worker_said(outcome),
        TableError::Fault { index, fault, .. } => {
            format!("message {}: {}", index + 1, fault_evidence(*fault).1)
        }
        e => e.to_string(),
    }
}

fn worker_said(outcome: &crate::worker::Outcome) -> String {
    format!("its worker ended ({}){}", outcome.exit, outcome.limit_note)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_cover_short_middle_and_past_the_kats_longest() {
        let mut noise = Noise::seeded(7);
        let bits = random_lengths(&mut noise, false);
        assert_eq!(bits.len(), 14);
        assert!(bits[..8].iter().all(|&b| b <= 8192));
        assert!(bits[12..].iter().all(|&b| b > 1 << 23 && b <= 3 << 23));
        let whole = random_lengths(&mut noise, true);
        assert!(whole.iter().all(|b| b % 8 == 0));
    }

    /// The bundled pseudoXOF against itself, each in a trial worker of its own: every digest
    /// agrees; against pseudohash (another function of the same width) the first differs, and
    /// the check stops there.
    #[test]
    fn a_library_agrees_with_itself_and_not_with_another_function() {
        let xof = crate::catalog::bundled_library("pseudoxof");
        let oracle = |library: &Path| OracleSpec {
            label: "other".into(),
            library: library.to_path_buf(),
            abi: Abi::Iccs,
        };
        let job = TableJob::plain(512, Abi::Iccs, std::time::Duration::from_secs(120));
        let itself = oracle(&xof);
        let pair = Pair {
            candidate: &xof,
            abi: Abi::Iccs,
            oracle: &itself,
        };
        let mut account = Account::default();
        let d = run(Check::Differential, &pair, &job, &mut account).unwrap();
        assert_eq!(d.calls.len(), 14, "{d:?}");
        // Both workers' control groups, where the machine has them.
        assert!(account.cpu_time.is_some() || account.peak_memory_bytes.is_none());
        assert!(
            d.calls
                .iter()
                .all(|c| c.want.len() == 64 && c.want == c.got)
        );
        let other = oracle(&crate::catalog::bundled_library("pseudohash"));
        let pair = Pair {
            oracle: &other,
            ..pair
        };
        let d = run(Check::Differential, &pair, &job, &mut account).unwrap();
        assert_eq!(d.calls.len(), 1, "{d:?}");
        assert_eq!(
            super::super::verdict::judge(Check::Differential, &d).word(),
            "fail"
        );
    }
}
