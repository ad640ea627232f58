//! A framed table (`--table --framed`): each record of the engine's descriptor is its length in
//! bits (8 bytes, little-endian), the message's and the digest's offsets past a 64-byte
//! boundary (one byte each, below 64), the 64 bytes to lay before and the 64 to lay after both
//! buffers, then the message. Each message is hashed once where its record places it, between
//! the bytes the engine chose (the conformance checks: the same message between other bytes, at
//! other offsets). After each call the worker compares both buffers' surroundings and the
//! message with what the record holds; the first change to the message side and the first to
//! the digest side are each sent once (`wrote`), and the job goes on. A non-zero return ends
//! it. The digests go back one record a line, so the engine knows the record a crash ended.
//! The worker judges nothing.

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

/// Runs the framed table of descriptor `fd` (`--bytes` long), after `ready`.
pub(super) fn run(inv: &Invocation<'_>, ch: &Channel, entry: Entry, fd: c_int) -> c_int {
    let malformed = || {
        error(
            ch,
            "table",
            b"the table is not --iters well-formed framed records",
        )
    };
    let Some((longest, count)) = records(
        fd,
        inv.input_bytes,
        inv.iterations,
        inv.supercop,
        FRAME as u64,
    ) else {
        return malformed();
    };
    let digest_len = (inv.digest_bits as usize).div_ceil(8);
    let buffers = (
        Placed::new(longest),
        Placed::new(digest_len),
        sys::alloc_filled(digest_len, 0),
    );
    let (Some(mut msg), Some(mut digest), Some(buf)) = buffers else {
        return error(ch, "memory", b"cannot allocate the table's buffers");
    };
    let mut out = Out::new(ch, buf, digest_len);
    let digest_bits = c_int::try_from(inv.digest_bits).unwrap_or(c_int::MAX);
    let (mut message_seen, mut digest_seen) = (false, false);
    let mut frame = [0u8; FRAME];
    let mut at = 0u64;
    for record in 0..count {
        let changed = || error(ch, "table", b"the table changed while it was read");
        let Some((bits, len)) = head(fd, at) else {
            return changed();
        };
        if !read_message_at(fd, &mut frame, at + 8) {
            return changed();
        }
        let start = at + 8 + FRAME as u64;
        at = start + len as u64;
        let (offsets, around) = frame.split_at(2);
        let (before, after) = around.split_at(AROUND);
        if offsets[0] >= 64 || offsets[1] >= 64 {
            return malformed();
        }
        msg.place(len, usize::from(offsets[0]), before, after);
        digest.place(digest_len, usize::from(offsets[1]), before, after);
        digest.data_mut().fill(0);
        if !read_message_at(fd, msg.data_mut(), start) {
            return changed();
        }
        let call = Call {
            entry,
            digest_bits,
            msg: msg.ptr(),
            msg_bits: bits,
            digest: digest.ptr(),
        };
        let rc = call.call_n(1);
        if !message_seen {
            let inside = message_differs_at(fd, msg.data(), start).map(|i| {
                let mut laid = [0u8];
                let _ = read_message_at(fd, &mut laid, start + i as u64);
                (i as i64, laid[0], msg.data()[i])
            });
            if let Some(change) = msg.around_changed(before, after).or(inside) {
                message_seen = true;
                send_wrote(ch, record, "message", change);
            }
        }
        if !digest_seen && let Some(change) = digest.around_changed(before, after) {
            digest_seen = true;
            send_wrote(ch, record, "digest", change);
        }
        if rc != 0 {
            return Fault::Returned(rc).send(&mut out);
        }
        out.push(digest.data());
        out.flush(true);
    }
    ch.message("done")
        .number("peak_rss_bytes", crate::procfs::peak_resident_bytes())
        .send();
    EXIT_DONE
}

/// The first change seen on one side: the record, the buffer, the byte's offset from the
/// buffer's start, what was laid there and what is there now.
fn send_wrote(ch: &Channel, record: u64, buffer: &str, (offset, laid, seen): (i64, u8, u8)) {
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
