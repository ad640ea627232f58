//! Many messages of the engine's choosing hashed in one job of the trial worker (`--table`):
//! the program, job kind and descriptors of every timed call, each message in a buffer of
//! exactly its length inside guard bytes, the digests back in order. The worker reports a
//! broken guard, a changed message or a non-zero return as the trial worker reports any, after
//! the digests of every message before it; the caller judges the digests (SUPERCOP's
//! checksums fold them, and hold a second call's and an in-place call's against the first).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::measure::job::meta;
use crate::measure::one_call;
use crate::measure::trial::{TrialMessage, TrialSpec};
use crate::plugin::Abi;
use crate::plugin::sealed::{SealedLibrary, name_originals};
use crate::worker::one_shot::{OneShotError, no_answer};
use crate::worker::{Exit, Tampering};

/// What each message of a table is hashed as, and how its worker runs.
#[derive(Debug, Clone)]
pub struct TableJob {
    pub digest_bits: u32,
    pub abi: Abi,
    /// Each message is hashed a second time, both digests kept.
    pub twice: bool,
    /// Each message is also hashed in place (`crypto_hash` only), the digest over the message.
    pub in_place: bool,
    /// A message is not held to what it was after its call (the KAT generator's way).
    pub unchecked_input: bool,
    pub timeout: Duration,
    /// Set to stop the job at once.
    pub cancel: Option<Arc<AtomicBool>>,
    /// The CPU the worker is pinned to (one the caller locked).
    pub cpu: Option<usize>,
    /// The worker's limits, where not the environment's (`Limits::from_env`).
    pub limits: Option<crate::worker::Limits>,
    /// `digest_bits` is a width the instance does not have (`TrialSpec::any_width`).
    pub any_width: bool,
}

impl TableJob {
    /// One digest a message, its input checked, wherever the worker runs.
    pub fn plain(digest_bits: u32, abi: Abi, timeout: Duration) -> Self {
        Self {
            digest_bits,
            abi,
            twice: false,
            in_place: false,
            unchecked_input: false,
            timeout,
            cancel: None,
            cpu: None,
            limits: None,
            any_width: false,
        }
    }
}

/// A table's digests, and what the worker's control group saw of it.
#[derive(Debug, Clone, Default)]
pub struct TableAnswer {
    /// For each message, its digests one after another.
    pub digests: Vec<Vec<u8>>,
    pub peak_memory_bytes: Option<u64>,
    pub cpu_time: Option<Duration>,
}

/// What the control groups of several trial workers saw, together: the most memory any of
/// them held, and their CPU time summed (every thread and process each started).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Account {
    pub peak_memory_bytes: Option<u64>,
    pub cpu_time: Option<Duration>,
}

impl Account {
    /// Adds one worker's account.
    pub fn add(&mut self, peak_memory_bytes: Option<u64>, cpu_time: Option<Duration>) {
        self.peak_memory_bytes = self.peak_memory_bytes.max(peak_memory_bytes);
        self.cpu_time = match (self.cpu_time, cpu_time) {
            (Some(x), Some(y)) => Some(x + y),
            (x, y) => x.or(y),
        };
    }

    /// Adds a finished table's account.
    pub fn add_answer(&mut self, a: &TableAnswer) {
        self.add(a.peak_memory_bytes, a.cpu_time);
    }
}

impl TableJob {
    /// Digests each message gets back: its own, a second call's, an in-place call's.
    pub fn per_message(&self) -> usize {
        1 + usize::from(self.twice) + usize::from(self.in_place)
    }

    fn digest_len(&self) -> usize {
        (self.digest_bits as usize).div_ceil(8)
    }
}

/// What the candidate did to one message that ended the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// It wrote outside its message or digest buffer (which, where the worker said).
    Overflow(Option<&'static str>),
    /// It wrote into its const message, first at this byte.
    InputChanged(u64),
    /// It returned non-zero.
    Returned(i32),
}

/// Why a table gave no digests for every message.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TableError {
    #[error("message {index}: {fault:?}")]
    Fault {
        index: usize,
        fault: Fault,
        /// The digests of every message before it.
        before: Vec<Vec<u8>>,
    },
    /// The library did not load, or the worker could not run the table.
    #[error("{0}")]
    Worker(String),
    /// The worker could not allocate its buffers (under its address-space limit).
    #[error("{0}")]
    Memory(String),
    #[error(transparent)]
    OneShot(#[from] OneShotError),
    /// The cancel flag stopped it.
    #[error("cancelled")]
    Cancelled,
    /// The worker ended without its answer (a crash, a stop, a timeout, a line it does not
    /// write), as its outcome says.
    #[error("{}", no_answer(library, outcome))]
    Ended {
        library: std::path::PathBuf,
        outcome: Box<crate::worker::Outcome>,
        /// The digests of the messages answered before it ended.
        before: Vec<Vec<u8>>,
    },
}

/// The digests of `messages` (each its bytes and its length in bits) by `library`: for each
/// message, `job.per_message()` digests one after another, `job.digest_bits` wide.
pub fn hash_table(
    library: &Path,
    job: &TableJob,
    messages: &[(&[u8], u64)],
) -> Result<TableAnswer, TableError> {
    if job.digest_len() == 0 {
        return Err(TableError::Worker("a table of digests 0 bits wide".into()));
    }
    let heads: Vec<[u8; 8]> = messages
        .iter()
        .map(|&(_, bits)| bits.to_le_bytes())
        .collect();
    let mut parts: Vec<&[u8]> = Vec::with_capacity(2 * messages.len());
    for (&(bytes, bits), head) in messages.iter().zip(&heads) {
        let len = usize::try_from(bits.div_ceil(8))
            .ok()
            .filter(|&n| n <= bytes.len())
            .ok_or_else(|| {
                TableError::Worker(format!("{bits} bits asked of {} bytes", bytes.len()))
            })?;
        parts.extend([head.as_slice(), &bytes[..len]]);
    }
    let mut extra = vec!["--table".to_string()];
    extra.extend(job.twice.then(|| "--twice".to_string()));
    extra.extend(job.in_place.then(|| "--in-place".to_string()));
    extra.extend(job.unchecked_input.then(|| "--unchecked-input".to_string()));
    let per_record = job.per_message() * job.digest_len();
    let records = Records {
        iters: messages.len() as u64,
        count: messages.len(),
        per_record,
    };
    run_job(library, job, &parts, &extra, records, None)
}

/// The last digest of the `KAT_Loop` file's chain on `first` (hashed whole): one call on it,
/// then `calls` more, each on the last message rotated left by the digest's length with the
/// last digest XORed into its front (the trial worker's `--chain`, return codes ignored as
/// the official generator ignores them). Only `job`'s width, ABI and deadline are used.
pub fn hash_chain(
    library: &Path,
    job: &TableJob,
    first: &[u8],
    calls: u64,
) -> Result<TableAnswer, TableError> {
    if job.digest_len() == 0 {
        return Err(TableError::Worker("a chain of digests 0 bits wide".into()));
    }
    let extra = ["--chain".to_string()];
    let records = Records {
        iters: calls,
        count: 1,
        per_record: job.digest_len(),
    };
    run_job(library, job, &[first], &extra, records, None)
}

/// What a job's descriptor holds: `--iters`, and the records of `per_record` digest bytes it
/// answers with.
pub(super) struct Records {
    pub(super) iters: u64,
    pub(super) count: usize,
    pub(super) per_record: usize,
}

/// Runs one trial-worker job on `parts` (sealed, at the message descriptor) with `extra` words
/// after `--message-fd`, and reads its records; the changes a framed table reports go to
/// `wrote`.
pub(super) fn run_job(
    library: &Path,
    job: &TableJob,
    parts: &[&[u8]],
    extra: &[String],
    records: Records,
    wrote: Option<&mut Vec<framed::Wrote>>,
) -> Result<TableAnswer, TableError> {
    let Records {
        iters,
        count: records,
        per_record,
    } = records;
    let sealed = SealedLibrary::of_parts("table", parts)
        .map_err(|e| TableError::Worker(format!("cannot seal the table for the worker: {e}")))?;
    let lib =
        crate::plugin::sealed::for_path(library).map_err(|e| OneShotError::Start(e.to_string()))?;
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let spec = TrialSpec {
        any_width: job.any_width,
        ..one_call::spec(job.digest_bits, job.abi, total as u64, iters)
    };
    let words: Vec<String> = std::iter::once("--message-fd".to_string())
        .chain(extra.iter().cloned())
        .collect();
    let limits = match job.limits {
        Some(l) => l,
        None => crate::worker::Limits::from_env().map_err(OneShotError::Start)?,
    };
    let mut cmd = one_call::command_with(
        &spec,
        lib,
        Some(Arc::new(sealed)),
        &words,
        job.timeout,
        limits,
    )?;
    cmd.cancel = job.cancel.clone();
    cmd.pinned_cpu = job.cpu;
    let framed = wrote.is_some();
    let mut got = Got {
        ready: false,
        digests: Vec::new(),
        end: None,
        wrote: Vec::new(),
    };
    let outcome = crate::worker::run(&cmd, |m: TrialMessage| {
        got.take(m, &spec, per_record, records, framed)
    })
    .map_err(|e| OneShotError::Start(e.to_string()))?;
    let index = got.digests.len() / per_record.max(1);
    if let Some(w) = wrote {
        w.append(&mut got.wrote);
    }
    let before = || {
        got.digests
            .chunks(per_record.max(1))
            .map(<[u8]>::to_vec)
            .collect()
    };
    match (&got.end, &outcome.exit) {
        (_, Exit::Cancelled) => Err(TableError::Cancelled),
        (_, Exit::Tampered(_) | Exit::Moved(_)) | (None, _) => Err(TableError::Ended {
            library: library.to_path_buf(),
            before: before(),
            outcome: Box::new(outcome),
        }),
        (Some(End::Fault(fault)), _) => Err(TableError::Fault {
            index,
            fault: *fault,
            before: before(),
        }),
        (Some(End::Error(why)), _) => Err(TableError::Worker(name_originals(why, &cmd.libraries))),
        (Some(End::Memory(why)), _) => Err(TableError::Memory(why.clone())),
        (Some(End::Done), _) => Ok(TableAnswer {
            digests: before(),
            peak_memory_bytes: outcome.peak_memory_bytes,
            cpu_time: outcome.group_cpu,
        }),
    }
}

/// How the worker ended its table.
enum End {
    Done,
    Fault(Fault),
    Error(String),
    Memory(String),
}

/// The worker's lines, in the order a table's come: `ready`, `digests` of whole messages
/// (never more than the table holds), then `done` once every message has its digests, or a
/// fault or an error. Anything else is not the worker's.
struct Got {
    ready: bool,
    digests: Vec<u8>,
    end: Option<End>,
    /// A framed table's `wrote` lines (`framed`).
    wrote: Vec<framed::Wrote>,
}

impl Got {
    fn take(
        &mut self,
        m: TrialMessage,
        spec: &crate::measure::trial::TrialSpec,
        per_record: usize,
        count: usize,
        framed: bool,
    ) -> Result<(), Tampering> {
        let out_of_order = || Tampering("a line out of a table job's order".into());
        if self.end.is_some() {
            return Err(out_of_order());
        }
        let end = match m {
            TrialMessage::Ready {
                meta_block,
                build_flags,
                ..
            } if !self.ready => {
                self.ready = true;
                match meta::worker_meta(spec, meta_block, build_flags) {
                    Ok(_) => return Ok(()),
                    Err(e) => End::Error(e.to_string()),
                }
            }
            TrialMessage::Error {
                stage: crate::measure::trial::LoadStage::Memory,
                detail,
            } => End::Memory(detail),
            TrialMessage::Error { stage, detail } => {
                End::Error(meta::load_error(spec, stage, detail))
            }
            _ if !self.ready => return Err(out_of_order()),
            TrialMessage::Digests { hex } => {
                let bytes = hex::decode(hex)
                    .map_err(|_| Tampering("a table's digests that are not hex".into()))?;
                let whole = per_record > 0 && bytes.len().is_multiple_of(per_record);
                if !whole || self.digests.len() + bytes.len() > count * per_record {
                    return Err(Tampering(
                        "digests of messages the table does not hold".into(),
                    ));
                }
                self.digests.extend_from_slice(&bytes);
                return Ok(());
            }
            TrialMessage::Done { .. } if self.digests.len() == count * per_record => End::Done,
            // One for each side of the buffers at most, about a record the table holds.
            TrialMessage::Wrote {
                record,
                buffer,
                offset,
                expected,
                found,
            } if framed => {
                let w = framed::Wrote::of(record, &buffer, offset, expected, found)
                    .filter(|w| w.record < count && !self.wrote.iter().any(|o| o.side == w.side))
                    .ok_or_else(|| Tampering("a `wrote` line a framed table cannot send".into()))?;
                self.wrote.push(w);
                return Ok(());
            }
            TrialMessage::Overflow { buffer } => {
                End::Fault(Fault::Overflow(match buffer.as_deref() {
                    Some("message") => Some("message"),
                    Some("digest") => Some("digest"),
                    _ => None,
                }))
            }
            TrialMessage::InputChanged { offset } => End::Fault(Fault::InputChanged(offset)),
            TrialMessage::Cryptofail { rc } => End::Fault(Fault::Returned(rc)),
            _ => return Err(out_of_order()),
        };
        self.end = Some(end);
        Ok(())
    }
}

mod framed;

pub use framed::{AROUND, FLUSH_END, FLUSH_START, Framed, FramedRun, Side, Wrote, hash_framed};

#[cfg(test)]
mod tests;
