//! A framed table (`--table --framed`): each message placed where the engine says, at an offset
//! past a 64-byte boundary, between bytes the engine chose, and its digest likewise. The
//! conformance checks' calls are these (the same message between other bytes, at other
//! offsets, after thousands of calls). The worker reports the first change on each side of the
//! buffers (`Wrote`) and goes on; a non-zero return ends the table as in any table job.

use std::path::Path;

use super::{Records, TableAnswer, TableError, TableJob, run_job};

/// Bytes laid before and after each buffer.
pub const AROUND: usize = 64;

/// In place of a message offset: the message ends flush against a page the worker may not
/// read, or starts right after one, with nothing laid around it (`over_read`).
pub const FLUSH_END: u8 = 64;
pub const FLUSH_START: u8 = 65;

/// One call of a framed table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Framed<'a> {
    pub msg: &'a [u8],
    pub bits: u64,
    /// The message's and the digest's offsets past a 64-byte boundary (below 64; for the
    /// message, `FLUSH_END` or `FLUSH_START` instead).
    pub msg_offset: u8,
    pub out_offset: u8,
    /// What lies before and after both buffers.
    pub before: [u8; AROUND],
    pub after: [u8; AROUND],
}

/// Which buffer a change was seen around (or, for the message, in).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Message,
    Digest,
}

impl Side {
    pub fn name(self) -> &'static str {
        match self {
            Side::Message => "message",
            Side::Digest => "digest",
        }
    }
}

/// The first change the worker saw on one side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wrote {
    /// The record whose call it followed.
    pub record: usize,
    pub side: Side,
    /// The byte's offset from the buffer's start (negative: before it).
    pub offset: i64,
    pub expected: u8,
    pub found: u8,
}

impl Wrote {
    /// A `wrote` line's fields, None where they cannot be one.
    pub(super) fn of(
        record: u64,
        buffer: &str,
        offset: i64,
        expected: u8,
        found: u8,
    ) -> Option<Self> {
        let side = match buffer {
            "message" => Side::Message,
            "digest" => Side::Digest,
            _ => return None,
        };
        (expected != found && offset >= -(AROUND as i64)).then_some(Self {
            record: usize::try_from(record).ok()?,
            side,
            offset,
            expected,
            found,
        })
    }
}

/// A framed table's digests (one a record) and the changes the worker saw.
#[derive(Debug, Clone)]
pub struct FramedRun {
    pub answer: Result<TableAnswer, TableError>,
    pub wrote: Vec<Wrote>,
}

/// Hashes `records` by `library` in one framed table job (`job`'s width, ABI and deadline).
pub fn hash_framed(
    library: &Path,
    job: &TableJob,
    records: &[Framed<'_>],
    two_threads: bool,
) -> FramedRun {
    let mut heads = Vec::with_capacity(records.len());
    for r in records {
        let mut head = Vec::with_capacity(8 + 2 + 2 * AROUND);
        head.extend_from_slice(&r.bits.to_le_bytes());
        head.extend([r.msg_offset, r.out_offset]);
        head.extend_from_slice(&r.before);
        head.extend_from_slice(&r.after);
        heads.push(head);
    }
    let mut parts: Vec<&[u8]> = Vec::with_capacity(2 * records.len());
    for (r, head) in records.iter().zip(&heads) {
        let len = usize::try_from(r.bits.div_ceil(8)).unwrap_or(usize::MAX);
        let msg_at = matches!(r.msg_offset, 0..64 | FLUSH_END | FLUSH_START);
        if len > r.msg.len() || !msg_at || r.out_offset >= 64 {
            let why = format!(
                "a framed record of {} bits asked of {} bytes",
                r.bits,
                r.msg.len()
            );
            return FramedRun {
                answer: Err(TableError::Worker(why)),
                wrote: Vec::new(),
            };
        }
        parts.extend([head.as_slice(), &r.msg[..len]]);
    }
    let job = TableJob {
        twice: false,
        in_place: false,
        unchecked_input: false,
        ..job.clone()
    };
    let mut extra = vec!["--table".to_string(), "--framed".to_string()];
    extra.extend(two_threads.then(|| "--two-threads".to_string()));
    let counts = Records {
        iters: records.len() as u64,
        count: records.len(),
        per_record: (job.digest_bits as usize).div_ceil(8),
    };
    let mut wrote = Vec::new();
    // A width of 0 bits is asked only as one the instance does not have (`digest_length`).
    let answer = if counts.per_record == 0 && !job.any_width {
        Err(TableError::Worker("a table of digests 0 bits wide".into()))
    } else {
        run_job(library, &job, &parts, &extra, counts, Some(&mut wrote))
    };
    FramedRun { answer, wrote }
}
