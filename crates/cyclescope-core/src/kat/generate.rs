//! The official ICCS hash KAT generators (`KAT_CryptHash.c`, spec §2.1) reproduced byte for
//! byte: `KAT_2_12`, `KAT_2_23`, `KAT_2_33` and `KAT_Loop`, written to any `io::Write` while
//! the SHA-256 of the text's canonical form is computed on the fly. The hash function is a
//! closure, so the generators run against a loaded library (in a worker process) or against
//! plain Rust in tests; a closure may also stop the file with an error of its own (the worker
//! that made the call ended). Every call's guard bytes are checked (`OVERFLOW`) and a non-zero
//! return stops the file (`CRYPTOFAIL`; the loop ignores it, like the official generator).
//! This module never loads libraries, spawns processes or decides a file's verdict.

mod files;
mod records;
mod writer;

use std::io::Write;

use serde::{Deserialize, Serialize};

pub use writer::{KatWriter, Written};

use super::KatStatus;
use crate::plugin::GuardedBuffer;

/// The message length of the `KAT_2_23` records: 2^23 bits (1 MiB).
pub(crate) const MSG_LEN_BITS_2_23: u64 = 1 << 23;
/// The message length of the `KAT_2_33` records: 2^33 bits (1 GiB).
pub(crate) const MSG_LEN_BITS_2_33: u64 = 1 << 33;
/// Chained iterations of `KAT_Loop`.
pub(crate) const LOOP_ITERATIONS: u64 = 1_000_000;
/// The length of `KAT_Loop`'s message, in bits.
pub(crate) const LOOP_BITS: u64 = 8192;

/// One of the four KAT files of a hash instance, in the order the official generator writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum KatFile {
    #[serde(rename = "KAT_2_12")]
    Kat2_12,
    #[serde(rename = "KAT_2_23")]
    Kat2_23,
    #[serde(rename = "KAT_2_33")]
    Kat2_33,
    #[serde(rename = "KAT_Loop")]
    Loop,
}

impl KatFile {
    pub const ALL: [KatFile; 4] = [
        KatFile::Kat2_12,
        KatFile::Kat2_23,
        KatFile::Kat2_33,
        KatFile::Loop,
    ];

    /// `KAT_2_12`, …: the file name prefix, and the 8 characters of its DRNG seed.
    pub fn tag(self) -> &'static str {
        match self {
            KatFile::Kat2_12 => "KAT_2_12",
            KatFile::Kat2_23 => "KAT_2_23",
            KatFile::Kat2_33 => "KAT_2_33",
            KatFile::Loop => "KAT_Loop",
        }
    }

    pub fn from_tag(tag: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.tag() == tag)
    }

    /// `KAT_2_12_<kat name>.txt`.
    pub(crate) fn file_name(self, kat_name: &str) -> String {
        format!("{}_{kat_name}.txt", self.tag())
    }

    /// The 64-byte DRNG seed: the tag repeated 8 times.
    pub(crate) fn seed(self) -> Vec<u8> {
        self.tag().repeat(8).into_bytes()
    }

    /// Steps reported by progress: records, or loop iterations.
    pub(crate) fn total_steps(self) -> u64 {
        match self {
            KatFile::Kat2_12 => 4097,
            KatFile::Kat2_23 | KatFile::Kat2_33 => 3,
            KatFile::Loop => LOOP_ITERATIONS,
        }
    }

    /// The bytes the generator writes for this file at `digest_bits` (the text's length does
    /// not depend on the digests' values): what the parent allows a KAT folder to hold.
    pub(crate) fn expected_bytes(self, digest_bits: u32) -> u64 {
        let digest = records::digest_bytes(digest_bits);
        let partial = |bits: u64| {
            let seed = self.seed().len() as u64;
            2 * records::partial_message_bytes(bits, 0)
                + records::partial_message_bytes(bits, seed)
                + 3 * digest
        };
        match self {
            KatFile::Kat2_12 => (0..self.total_steps())
                .map(|bits| records::full_message_bytes(bits) + digest)
                .sum(),
            KatFile::Kat2_23 => partial(MSG_LEN_BITS_2_23),
            KatFile::Kat2_33 => partial(MSG_LEN_BITS_2_33),
            KatFile::Loop => records::full_message_bytes(8192) + digest,
        }
    }

    /// The suffix of the log's `timing` line.
    pub(crate) fn timing_note(self) -> &'static str {
        match self {
            KatFile::Loop => " (1e6 x 8192-bit)",
            _ => "",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    #[error("CryptHash returned {rc} for msg_len={msg_bits} bits")]
    CryptoFail { rc: i32, msg_bits: u64 },
    #[error(
        "CryptHash wrote outside its {buffer} buffer for msg_len={msg_bits} bits (guard bytes changed)"
    )]
    Overflow { buffer: &'static str, msg_bits: u64 },
    #[error("writing the KAT text: {0}")]
    Io(#[from] std::io::Error),
    /// The worker that made the call reported a fault the generator cannot see from here, or
    /// ended without its digests (a crash, a stop, a timeout, a forged line).
    #[error("{detail}")]
    Worker { status: KatStatus, detail: String },
}

impl GenerateError {
    /// The KAT status of a candidate fault; `None` for our own I/O failures.
    pub(crate) fn status(&self) -> Option<KatStatus> {
        match self {
            GenerateError::CryptoFail { .. } => Some(KatStatus::Cryptofail),
            GenerateError::Overflow { .. } => Some(KatStatus::Overflow),
            GenerateError::Worker { status, .. } => Some(*status),
            GenerateError::Io(_) => None,
        }
    }
}

/// Calls the hash and checks the guards of both buffers, then (if asked) the return code.
fn checked_call<H>(
    hash: &mut H,
    msg: &GuardedBuffer,
    msg_bits: u64,
    digest: &mut GuardedBuffer,
    check_rc: bool,
) -> Result<(), GenerateError>
where
    H: FnMut(&GuardedBuffer, u64, &mut GuardedBuffer) -> Result<i32, GenerateError>,
{
    let rc = hash(msg, msg_bits, digest)?;
    if !digest.guards_intact() {
        return Err(GenerateError::Overflow {
            buffer: "digest",
            msg_bits,
        });
    }
    if !msg.guards_intact() {
        return Err(GenerateError::Overflow {
            buffer: "message",
            msg_bits,
        });
    }
    if check_rc && rc != 0 {
        return Err(GenerateError::CryptoFail { rc, msg_bits });
    }
    Ok(())
}

/// Writes `file` for a `digest_bits` instance to `out`, calling `hash(msg, msg_bits, digest)`
/// and `progress(done, total)` after every record (loop: every iteration). Returns the byte
/// count and the canonical digests of what was written.
pub fn generate<H, W>(
    file: KatFile,
    digest_bits: u32,
    hash: &mut H,
    out: W,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Written, GenerateError>
where
    H: FnMut(&GuardedBuffer, u64, &mut GuardedBuffer) -> Result<i32, GenerateError>,
    W: Write,
{
    let mut w = KatWriter::new(out);
    let digest_len = (digest_bits as usize).div_ceil(8);
    match file {
        KatFile::Kat2_12 => files::kat_2_12(digest_bits, digest_len, hash, &mut w, progress)?,
        KatFile::Kat2_23 => files::partial(
            file,
            MSG_LEN_BITS_2_23,
            digest_bits,
            digest_len,
            hash,
            &mut w,
            progress,
        )?,
        KatFile::Kat2_33 => files::partial(
            file,
            MSG_LEN_BITS_2_33,
            digest_bits,
            digest_len,
            hash,
            &mut w,
            progress,
        )?,
        KatFile::Loop => files::kat_loop(digest_bits, digest_len, hash, &mut w, progress)?,
    }
    Ok(w.finish()?)
}

/// Writes `KAT_Loop` for a `digest_bits` instance to `out` from the last digest of its chain,
/// worked out elsewhere (the trial worker's `--chain`, from [`loop_first_message`]).
pub(crate) fn generate_loop_from(
    digest_bits: u32,
    last: &[u8],
    out: impl Write,
) -> Result<Written, GenerateError> {
    let mut w = KatWriter::new(out);
    files::loop_text(digest_bits, &files::loop_first_message(), last, &mut w)?;
    Ok(w.finish()?)
}

pub(crate) use files::loop_first_message;

#[cfg(test)]
mod tests;
