//! The KAT's known answers held against the program the timed calls run in: every vector of a
//! `KAT_2_12` text and the three of a `KAT_2_23` text that matched their references (answers
//! the engine holds, read back from disk) hashed again in one table job of the trial worker
//! (`measure::table`), each message in a buffer of exactly its length. A library that computes
//! the proved function only in its KAT job, at any of those lengths, gives another digest
//! here, and no figure of it is kept.

use crate::catalog::Instance;
use crate::kat::known::KnownAnswer;
use crate::measure::proof::reference::DigestError;
use crate::measure::table::{self, Fault, TableError, TableJob};
use crate::vocabulary::{FailureKind, JobFailure};

/// How long hashing the 4097 messages of at most 512 bytes and the three of 1 MiB may take.
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// Ok when `inst` gives every answer of `kas`, with the digest of the timing message of each
/// of `lengths` (bytes) hashed in the same job: the reference digests the timed calls are held
/// to, so that a library cannot be right where the KAT's answers are asked and wrong where the
/// reference digests are (one job: nothing tells the two apart). Else the job's failure,
/// naming the first message that differs (TAMPERED) or what stopped the job.
pub(super) fn hold(
    inst: &Instance,
    kas: &[KnownAnswer],
    lengths: &[u64],
) -> Result<Vec<(u64, Vec<u8>)>, JobFailure> {
    let job = TableJob::plain(inst.digest_bits, inst.abi, TIMEOUT);
    // `crypto_hash` takes whole bytes only: the vectors it can be asked.
    let asked: Vec<&KnownAnswer> = kas
        .iter()
        .filter(|ka| inst.abi.is_iccs() || ka.bits.is_multiple_of(8))
        .collect();
    let timing: Vec<(u64, Vec<u8>)> = lengths
        .iter()
        .map(|&bytes| {
            (
                bytes,
                crate::measure::proof::reference::harness_message(bytes),
            )
        })
        .collect();
    let messages: Vec<(&[u8], u64)> = asked
        .iter()
        .map(|ka| (ka.msg.as_slice(), ka.bits))
        .chain(
            timing
                .iter()
                .map(|(bytes, m)| (m.as_slice(), bytes.saturating_mul(8))),
        )
        .collect();
    let answer = table::hash_table(&inst.library, &job, &messages).map_err(|e| failure(inst, e))?;
    match asked
        .iter()
        .zip(&answer.digests)
        .find(|(ka, got)| ka.digest != **got)
    {
        None => Ok(timing
            .iter()
            .map(|(bytes, _)| *bytes)
            .zip(answer.digests[asked.len()..].iter().cloned())
            .collect()),
        Some((ka, got)) => Err(JobFailure::new(
            FailureKind::Tampered,
            format!(
                "the {}-bit message of {} that the KAT proved, hashed again in the program the \
                 timed calls run in, gave {} instead of the KAT's {}: the library computes \
                 another function outside its KAT job, so no figure of it is the proved \
                 function's",
                ka.bits,
                ka.file,
                hex::encode(got),
                hex::encode(&ka.digest)
            ),
        )),
    }
}

/// The job's failure when the known answers' job stopped (what the trial worker reported, or
/// how it ended).
fn failure(inst: &Instance, e: TableError) -> JobFailure {
    let e = match e {
        TableError::Fault {
            fault: Fault::Overflow(_),
            ..
        } => DigestError::Overflow(inst.label.clone()),
        TableError::Fault {
            fault: Fault::Returned(rc),
            ..
        } => DigestError::Refused(rc),
        TableError::Fault {
            fault: Fault::InputChanged(offset),
            ..
        } => DigestError::Worker(format!(
            "the library wrote into its const message, first at byte {offset}"
        )),
        TableError::Worker(why) | TableError::Memory(why) => DigestError::Worker(why),
        TableError::OneShot(e) => DigestError::OneShot(e),
        TableError::Cancelled => DigestError::Worker("cancelled".into()),
        TableError::Ended {
            library, outcome, ..
        } => DigestError::OneShot(crate::worker::one_shot::no_answer(&library, &outcome)),
    };
    let mut failure = e.job_failure();
    failure.detail =
        format!("the KAT's known answers, hashed again in the program the timed calls run in: {e}");
    failure
}
