//! Many messages of the engine's choosing hashed in one job of the trial worker (`--table`):
//! the program, job kind and descriptors of every timed call, each message in a buffer of
//! exactly its length inside guard bytes, the digests back in order. The worker reports a
//! broken guard, a changed message or a non-zero return as the trial worker reports any, after
//! the digests of every message before it; the caller judges the digests (SUPERCOP's
//! checksums fold them, and hold a second call's and an in-place call's against the first).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::measure::job::meta;
use crate::measure::one_call;
use crate::measure::trial::TrialMessage;
use crate::plugin::Abi;
use crate::plugin::sealed::{SealedLibrary, name_originals};
use crate::worker::one_shot::{OneShotError, no_answer};
use crate::worker::{Exit, Tampering};

/// What each message of a table is hashed as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableJob {
    pub digest_bits: u32,
    pub abi: Abi,
    /// Each message is hashed a second time, both digests kept.
    pub twice: bool,
    /// Each message is also hashed in place (`crypto_hash` only), the digest over the message.
    pub in_place: bool,
    pub timeout: Duration,
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
    /// It wrote outside its message or digest buffer.
    Overflow,
    /// It wrote into its const message, first at this byte.
    InputChanged(u64),
    /// It returned non-zero.
    Returned(i32),
}

/// Why a table gave no digests for every message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    #[error("message {index}: {fault:?}")]
    Fault { index: usize, fault: Fault },
    /// The library did not load, or the worker could not run the table.
    #[error("{0}")]
    Worker(String),
    #[error(transparent)]
    OneShot(#[from] OneShotError),
}

/// The digests of `messages` (each its bytes and its length in bits) by `library`: for each
/// message, `job.per_message()` digests one after another, `job.digest_bits` wide.
pub fn hash_table(
    library: &Path,
    job: &TableJob,
    messages: &[(&[u8], u64)],
) -> Result<Vec<Vec<u8>>, TableError> {
    if job.digest_len() == 0 {
        return Err(TableError::Worker("a table of digests 0 bits wide".into()));
    }
    let mut table = Vec::new();
    for &(bytes, bits) in messages {
        let len = usize::try_from(bits.div_ceil(8))
            .ok()
            .filter(|&n| n <= bytes.len())
            .ok_or_else(|| {
                TableError::Worker(format!("{bits} bits asked of {} bytes", bytes.len()))
            })?;
        table.extend_from_slice(&bits.to_le_bytes());
        table.extend_from_slice(&bytes[..len]);
    }
    let sealed = SealedLibrary::of_bytes("table", &table)
        .map_err(|e| TableError::Worker(format!("cannot seal the table for the worker: {e}")))?;
    let lib =
        crate::plugin::sealed::for_path(library).map_err(|e| OneShotError::Start(e.to_string()))?;
    let spec = one_call::spec(
        job.digest_bits,
        job.abi,
        table.len() as u64,
        messages.len() as u64,
    );
    let mut extra = vec!["--message-fd".to_string(), "--table".to_string()];
    extra.extend(job.twice.then(|| "--twice".to_string()));
    extra.extend(job.in_place.then(|| "--in-place".to_string()));
    let cmd = one_call::command(&spec, lib, Some(Arc::new(sealed)), &extra, job.timeout)?;
    let per_record = job.per_message() * job.digest_len();
    let mut got = Got {
        ready: false,
        digests: Vec::new(),
        end: None,
    };
    let outcome = crate::worker::run(&cmd, |m: TrialMessage| {
        got.take(m, &spec, per_record, messages.len())
    })
    .map_err(|e| OneShotError::Start(e.to_string()))?;
    let index = got.digests.len() / per_record.max(1);
    match (got.end, &outcome.exit) {
        (_, Exit::Tampered(_) | Exit::Moved(_)) | (None, _) => {
            Err(no_answer(library, &outcome).into())
        }
        (Some(End::Fault(fault)), _) => Err(TableError::Fault { index, fault }),
        (Some(End::Error(why)), _) => Err(TableError::Worker(name_originals(&why, &cmd.libraries))),
        (Some(End::Done), _) => Ok(got
            .digests
            .chunks(per_record.max(1))
            .map(<[u8]>::to_vec)
            .collect()),
    }
}

/// How the worker ended its table.
enum End {
    Done,
    Fault(Fault),
    Error(String),
}

/// The worker's lines, in the order a table's come: `ready`, `digests` of whole messages
/// (never more than the table holds), then `done` once every message has its digests, or a
/// fault or an error. Anything else is not the worker's.
struct Got {
    ready: bool,
    digests: Vec<u8>,
    end: Option<End>,
}

impl Got {
    fn take(
        &mut self,
        m: TrialMessage,
        spec: &crate::measure::trial::TrialSpec,
        per_record: usize,
        count: usize,
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
            TrialMessage::Overflow => End::Fault(Fault::Overflow),
            TrialMessage::InputChanged { offset } => End::Fault(Fault::InputChanged(offset)),
            TrialMessage::Cryptofail { rc } => End::Fault(Fault::Returned(rc)),
            _ => return Err(out_of_order()),
        };
        self.end = Some(end);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counter::CycleSource;

    fn ready() -> TrialMessage {
        TrialMessage::Ready {
            meta_block: None,
            build_flags: None,
            baseline_rss_bytes: 1,
            cycle_source: CycleSource::Tsc,
            perf_unavailable: None,
            per_call_source: None,
            timer_overhead_ticks: 0,
            sandbox: None,
        }
    }

    fn digests(bytes: usize) -> TrialMessage {
        TrialMessage::Digests {
            hex: "ab".repeat(bytes),
        }
    }

    /// Three messages of 4-byte digests, hashed twice (8 bytes a message): `lines` taken in
    /// turn, and whether any was refused.
    fn take(lines: Vec<TrialMessage>) -> (Got, bool) {
        let spec = one_call::spec(32, Abi::Iccs, 0, 3);
        let mut got = Got {
            ready: false,
            digests: Vec::new(),
            end: None,
        };
        let refused = lines.into_iter().any(|m| got.take(m, &spec, 8, 3).is_err());
        (got, refused)
    }

    #[test]
    fn a_table_answers_whole_messages_in_order_and_ends_once() {
        let (got, refused) = take(vec![
            ready(),
            digests(16),
            digests(8),
            TrialMessage::Done { peak_rss_bytes: 1 },
        ]);
        assert!(!refused && matches!(got.end, Some(End::Done)));
        assert_eq!(got.digests.len(), 24);
        // A fault after two messages: the third is the one it names.
        let (got, refused) = take(vec![
            ready(),
            digests(16),
            TrialMessage::Cryptofail { rc: 7 },
        ]);
        assert!(!refused && matches!(got.end, Some(End::Fault(Fault::Returned(7)))));
        assert_eq!(got.digests.len() / 8, 2);
    }

    #[test]
    fn digests_the_table_does_not_hold_are_refused() {
        let done = || TrialMessage::Done { peak_rss_bytes: 1 };
        for lines in [
            // More messages than the table holds.
            vec![ready(), digests(24), digests(8)],
            // Half a message.
            vec![ready(), digests(12)],
            // Done before every message has its digests.
            vec![ready(), digests(16), done()],
            // Digests before ready, and a line after the end.
            vec![digests(8)],
            vec![ready(), digests(24), done(), digests(8)],
            vec![ready(), TrialMessage::Overflow, done()],
        ] {
            let shown = format!("{lines:?}");
            assert!(take(lines).1, "{shown}");
        }
    }
}
