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

/// Ok when `inst` gives every answer of `kas`; else the job's failure, naming the first
/// message that differs (TAMPERED) or what stopped the job.
pub(super) fn hold(inst: &Instance, kas: &[KnownAnswer]) -> Result<(), JobFailure> {
    let job = TableJob {
        digest_bits: inst.digest_bits,
        abi: inst.abi,
        twice: false,
        in_place: false,
        timeout: TIMEOUT,
    };
    // `crypto_hash` takes whole bytes only: the vectors it can be asked.
    let asked: Vec<&KnownAnswer> = kas
        .iter()
        .filter(|ka| inst.abi.is_iccs() || ka.bits.is_multiple_of(8))
        .collect();
    let messages: Vec<(&[u8], u64)> = asked
        .iter()
        .map(|ka| (ka.msg.as_slice(), ka.bits))
        .collect();
    let digests = table::hash_table(&inst.library, &job, &messages).map_err(|e| {
        let e = match e {
            TableError::Fault {
                fault: Fault::Overflow,
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
            TableError::Worker(why) => DigestError::Worker(why),
            TableError::OneShot(e) => DigestError::OneShot(e),
        };
        let mut failure = e.job_failure();
        failure.detail = format!(
            "the KAT's known answers, hashed again in the program the timed calls run in: {e}"
        );
        failure
    })?;
    match asked
        .iter()
        .zip(&digests)
        .find(|(ka, got)| ka.digest != **got)
    {
        None => Ok(()),
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
