//! A framed table (`--table --framed`): each record of the engine's descriptor is its length in
//! bits (8 bytes, little-endian), the message's and the digest's offsets past a 64-byte
//! boundary (one byte each, below 64; for the message, `FLUSH_END` or `FLUSH_START` instead lays
//! it against an inaccessible page, with nothing around it), the 64 bytes to lay before and the
//! 64 to lay after both buffers, then the message. Each message is hashed once where its record
//! places it, between the bytes the engine chose (the conformance checks: the same message
//! between other bytes, at other offsets). After each call the worker compares both buffers'
//! surroundings and the message with what the record holds (after a refusal, the digest's own
//! bytes too); the first change to the message side and the first to the digest side are each
//! sent once (`wrote`), and the job goes on. A non-zero return ends it. The digests go back one
//! record a line, so the engine knows the record a crash ended. The worker judges nothing.

use core::ffi::c_int;

use super::table::{Fault, Out, head, records};
use super::{Call, EXIT_DONE, error};
use crate::args::Invocation;
use crate::json::Channel;
use crate::library::Entry;
use crate::proof::{message_differs_at, read_message_at};
use crate::sys;

/// Bytes laid on each side of both buffers.
const AROUND: usize = 64;
/// A record's bytes between its length and its message: two offsets, then both surroundings.
const FRAME: usize = 2 + 2 * AROUND;
/// The message offsets that lay a message ending flush against an inaccessible page, or
/// starting right after one (`measure::table::FLUSH_END`, `FLUSH_START`): a read past it faults.
const FLUSH_END: u8 = 64;
const FLUSH_START: u8 = 65;

/// One buffer and its surroundings in an allocation of its own.
struct Placed {
    bytes: &'static mut [u8],
    /// Where the buffer starts in `bytes`, and its length.
    at: usize,
    len: usize,
}

impl Placed {
    /// Room for a buffer of up to `longest` bytes at any offset below 64.
    fn new(longest: usize) -> Option<Self> {
        let bytes = sys::alloc_filled(longest.checked_add(2 * AROUND + 2 * 64)?, 0)?;
        Some(Self {
            bytes,
            at: AROUND,
            len: 0,
        })
    }

    /// Lays a buffer of `len` bytes `offset` past a 64-byte boundary between `before` and
    /// `after`; its own bytes are left for the caller.
    fn place(&mut self, len: usize, offset: usize, before: &[u8], after: &[u8]) {
        let start = self.bytes.as_ptr() as usize + AROUND;
        self.at = start.next_multiple_of(64) - start + AROUND + offset;
        self.len = len;
        self.bytes[self.at - AROUND..self.at].copy_from_slice(before);
        self.bytes[self.at + len..self.at + len + AROUND].copy_from_slice(after);
    }

    fn data_mut(&mut self) -> &mut [u8] {
        &mut self.bytes[self.at..self.at + self.len]
    }

    fn data(&self) -> &[u8] {
        &self.bytes[self.at..self.at + self.len]
    }

    fn ptr(&mut self) -> *mut u8 {
        self.data_mut().as_mut_ptr()
    }

    /// The first byte of the surroundings that is not what was laid: its offset from the
    /// buffer's start, what was laid there and what is there now.
    fn around_changed(&self, before: &[u8], after: &[u8]) -> Option<(i64, u8, u8)> {
        let seen_before = &self.bytes[self.at - AROUND..self.at];
        let seen_after = &self.bytes[self.at + self.len..self.at + self.len + AROUND];
        let first = |laid: &[u8], seen: &[u8], base: i64| {
            laid.iter()
                .zip(seen)
                .position(|(a, b)| a != b)
                .map(|i| (base + i as i64, laid[i], seen[i]))
        };
        first(before, seen_before, -(AROUND as i64))
            .or_else(|| first(after, seen_after, self.len as i64))
    }
}

/// A change seen after a call: the byte's offset from its buffer's start, what was laid there
/// and what is there now.
pub(super) type Change = (i64, u8, u8);

/// The framed table at the message descriptor and what hashing it needs.
pub(super) struct Table {
    pub(super) fd: c_int,
    pub(super) entry: Entry,
    pub(super) digest_bits: c_int,
    pub(super) digest_len: usize,
    pub(super) longest: usize,
    pub(super) count: u64,
}

/// Why a record could not be hashed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unread {
    /// The descriptor no longer held what it did when the table was read.
    Changed,
    /// A record's offsets are not below 64.
    Malformed,
}

/// What one record's call showed: its return, and the first change on each side that was
/// watched for.
pub(super) struct Hashed {
    pub(super) rc: c_int,
    pub(super) message: Option<Change>,
    pub(super) digest: Option<Change>,
}

/// One thread's buffers: where its messages and digests are placed.
pub(super) struct Lane {
    msg: Placed,
    digest: Placed,
    /// Room for a message flush against an inaccessible page (`guarded::fenced`).
    fence: &'static mut [u8],
    frame: [u8; FRAME],
}

impl Lane {
    pub(super) fn new(t: &Table) -> Option<Self> {
        Some(Self {
            msg: Placed::new(t.longest)?,
            digest: Placed::new(t.digest_len)?,
            fence: crate::guarded::fenced(t.longest)?,
            frame: [0; FRAME],
        })
    }

    /// Hashes the record at `at` where it places its buffers, and compares what it laid
    /// afterwards on each side `watch` names (message, digest); with the next record's start.
    pub(super) fn hash(
        &mut self,
        t: &Table,
        at: u64,
        watch: (bool, bool),
    ) -> Result<(Hashed, u64), Unread> {
        let (bits, len) = head(t.fd, at).ok_or(Unread::Changed)?;
        if !read_message_at(t.fd, &mut self.frame, at + 8) {
            return Err(Unread::Changed);
        }
        let start = at + 8 + FRAME as u64;
        let (offsets, around) = self.frame.split_at(2);
        let (before, after) = around.split_at(AROUND);
        if !matches!(offsets[0], 0..64 | FLUSH_END | FLUSH_START) || offsets[1] >= 64 {
            return Err(Unread::Malformed);
        }
        let fenced = offsets[0] >= 64;
        let (placed, digest) = (&mut self.msg, &mut self.digest);
        let msg: &mut [u8] = match offsets[0] {
            FLUSH_END => {
                let at = self.fence.len() - len;
                &mut self.fence[at..]
            }
            FLUSH_START => &mut self.fence[..len],
            offset => {
                placed.place(len, usize::from(offset), before, after);
                placed.data_mut()
            }
        };
        digest.place(t.digest_len, usize::from(offsets[1]), before, after);
        // The digest's own bytes are laid too, from the bytes after it, for a refusal that
        // writes them to show (zeros would hide a library that clears them).
        let laid = |i: usize| after[i % AROUND];
        for (i, b) in digest.data_mut().iter_mut().enumerate() {
            *b = laid(i);
        }
        if !read_message_at(t.fd, msg, start) {
            return Err(Unread::Changed);
        }
        let call = Call {
            entry: t.entry,
            digest_bits: t.digest_bits,
            msg: msg.as_mut_ptr(),
            msg_bits: bits,
            digest: digest.ptr(),
        };
        let rc = call.call_n(1);
        let inside = watch.0.then(|| {
            message_differs_at(t.fd, msg, start).map(|i| {
                let mut laid = [0u8];
                let _ = read_message_at(t.fd, &mut laid, start + i as u64);
                (i as i64, laid[0], msg[i])
            })
        });
        // A fenced message has nothing laid around it.
        let around = (watch.0 && !fenced).then(|| placed.around_changed(before, after));
        let message = around.flatten().or(inside.flatten());
        // After a refusal the digest's own bytes are watched too: a change there is a write
        // the call did not own up to.
        let digest_change = watch.1.then(|| {
            let own = (rc != 0).then(|| {
                let d = digest.data();
                (0..d.len())
                    .find(|&i| d[i] != laid(i))
                    .map(|i| (i as i64, laid(i), d[i]))
            });
            digest.around_changed(before, after).or(own.flatten())
        });
        let hashed = Hashed {
            rc,
            message,
            digest: digest_change.flatten(),
        };
        Ok((hashed, start + len as u64))
    }

    /// The digest of the last record hashed.
    pub(super) fn digest(&self) -> &[u8] {
        self.digest.data()
    }
}

/// Where the record after the one at `at` starts (a record another thread hashes).
pub(super) fn next(fd: c_int, at: u64) -> Option<u64> {
    let (_, len) = head(fd, at)?;
    Some(at + 8 + FRAME as u64 + len as u64)
}

/// Runs the framed table of descriptor `fd` (`--bytes` long), after `ready`; with
/// `--two-threads`, in two threads at once (`together`).
pub(super) fn run(inv: &Invocation<'_>, ch: &Channel, entry: Entry, fd: c_int) -> c_int {
    let Some((longest, count)) = records(
        fd,
        inv.input_bytes,
        inv.iterations,
        inv.supercop,
        FRAME as u64,
    ) else {
        return unread(ch, Unread::Malformed);
    };
    let t = Table {
        fd,
        entry,
        digest_bits: c_int::try_from(inv.digest_bits).unwrap_or(c_int::MAX),
        digest_len: (inv.digest_bits as usize).div_ceil(8),
        longest,
        count,
    };
    let Some(buf) = sys::alloc_filled(t.digest_len, 0) else {
        return no_memory(ch);
    };
    let mut out = Out::new(ch, buf, t.digest_len);
    // Two threads make buffers of their own.
    if inv.two_threads {
        return super::together::run(&t, &mut out);
    }
    let Some(mut lane) = Lane::new(&t) else {
        return no_memory(ch);
    };
    let (mut message_seen, mut digest_seen) = (false, false);
    let mut at = 0u64;
    for record in 0..count {
        let (hashed, next) = match lane.hash(&t, at, (!message_seen, !digest_seen)) {
            Ok(h) => h,
            Err(why) => return unread(ch, why),
        };
        at = next;
        if let Some(change) = hashed.message {
            message_seen = true;
            send_wrote(ch, record, "message", change);
        }
        if let Some(change) = hashed.digest {
            digest_seen = true;
            send_wrote(ch, record, "digest", change);
        }
        if hashed.rc != 0 {
            return Fault::Returned(hashed.rc).send(&mut out);
        }
        out.push(lane.digest());
        out.flush(true);
    }
    done(ch)
}

/// The end of a job whose every record was hashed.
pub(super) fn done(ch: &Channel) -> c_int {
    ch.message("done")
        .number("peak_rss_bytes", crate::procfs::peak_resident_bytes())
        .send();
    EXIT_DONE
}

/// The end of a job that could not read a record.
pub(super) fn unread(ch: &Channel, why: Unread) -> c_int {
    match why {
        Unread::Changed => error(ch, "table", b"the table changed while it was read"),
        Unread::Malformed => error(
            ch,
            "table",
            b"the table is not --iters well-formed framed records",
        ),
    }
}

/// The end of a job that could not allocate its buffers.
pub(super) fn no_memory(ch: &Channel) -> c_int {
    error(ch, "memory", b"cannot allocate the table's buffers")
}

/// The first change seen on one side: the record, the buffer, the byte's offset from the
/// buffer's start, what was laid there and what is there now.
pub(super) fn send_wrote(
    ch: &Channel,
    record: u64,
    buffer: &str,
    (offset, laid, seen): (i64, u8, u8),
) {
    ch.message("wrote")
        .number("record", record)
        .name("buffer", buffer)
        .number("offset", offset)
        .number("expected", laid)
        .number("found", seen)
        .send();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_is_laid_at_its_offset_past_a_boundary_and_a_change_around_it_is_placed() {
        let mut p = Placed::new(100).unwrap();
        let before = [1u8; AROUND];
        let after = [2u8; AROUND];
        for offset in [0, 1, 17, 63] {
            p.place(100, offset, &before, &after);
            assert_eq!(p.ptr() as usize % 64, offset);
            assert_eq!(p.around_changed(&before, &after), None);
        }
        p.bytes[p.at - 3] = 9;
        assert_eq!(p.around_changed(&before, &after), Some((-3, 1, 9)));
        p.place(100, 5, &before, &after);
        p.bytes[p.at + 100] = 0;
        assert_eq!(p.around_changed(&before, &after), Some((100, 2, 0)));
        // The buffer's own bytes are the caller's.
        p.place(100, 5, &before, &after);
        p.data_mut().fill(7);
        assert_eq!(p.around_changed(&before, &after), None);
    }
}
