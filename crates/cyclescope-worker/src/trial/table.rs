//! A table job (`--table`): the engine's descriptor holds `--iters` messages, each an 8-byte
//! little-endian length in bits and then its bytes, and each is hashed in turn in a buffer of
//! exactly its length inside guard bytes, as every other call of this program is made. The
//! digests go back in order (`digests` lines, whole records each): for each message its
//! digest, then with `--twice` a second call's, then with `--in-place` the digest of a call
//! whose output is written over its own message (`--unchecked-input`: a message is not held
//! to the descriptor after its calls, as the KAT generator does not). A broken guard, a changed message or a
//! non-zero return ends the job with the digests of every message before it sent, so the
//! engine knows which message it was; the engine judges everything else (two digests that
//! differ, a checksum, an answer it holds).

use core::ffi::c_int;

use super::messages::{send_cryptofail, send_input_changed, send_overflow_of};
use super::{Call, EXIT_DONE, EXIT_FAULT, error};
use crate::args::Invocation;
use crate::guarded::Guarded;
use crate::json::Channel;
use crate::library::Entry;
use crate::proof::{message_differs_at, read_message_at};
use crate::sys;

/// Bytes of digests a `digests` line carries at most (the engine takes lines of up to 1 MiB,
/// and hex doubles them).
const LINE_BYTES: usize = 128 << 10;

/// The longest message of the table of `table_len` bytes at descriptor `fd`, and how many it
/// holds; None where it is not `count` well-formed records that end where the table ends (or a
/// length does not suit the ABI). Each record's message comes `frame` bytes after its length.
pub(super) fn records(
    fd: c_int,
    table_len: u64,
    count: u64,
    supercop: bool,
    frame: u64,
) -> Option<(usize, u64)> {
    let (mut at, mut seen, mut longest) = (0u64, 0u64, 0usize);
    while at < table_len {
        let (bits, len) = head(fd, at)?;
        if supercop && !bits.is_multiple_of(8) {
            return None;
        }
        longest = longest.max(len);
        at = at.checked_add(8 + frame)?.checked_add(len as u64)?;
        seen += 1;
    }
    (seen == count && at == table_len).then_some((longest, seen))
}

/// The head of the record at `at`: its length in bits, and in bytes.
pub(super) fn head(fd: c_int, at: u64) -> Option<(u64, usize)> {
    let mut bytes = [0u8; 8];
    read_message_at(fd, &mut bytes, at).then_some(())?;
    let bits = u64::from_le_bytes(bytes);
    Some((bits, usize::try_from(bits.div_ceil(8)).ok()?))
}

/// The digests of finished records, sent in whole records.
pub(super) struct Out<'a> {
    pub(super) ch: &'a Channel,
    pub(super) buf: &'static mut [u8],
    pub(super) filled: usize,
    pub(super) record: usize,
}

impl<'a> Out<'a> {
    /// Nothing pending yet; records of `record` bytes go out in lines of `buf`.
    pub(super) fn new(ch: &'a Channel, buf: &'static mut [u8], record: usize) -> Self {
        Self {
            ch,
            buf,
            filled: 0,
            record,
        }
    }

    pub(super) fn push(&mut self, digest: &[u8]) {
        self.buf[self.filled..self.filled + digest.len()].copy_from_slice(digest);
        self.filled += digest.len();
    }

    /// Sends what is pending once another record would not fit (or always, with `all`).
    pub(super) fn flush(&mut self, all: bool) {
        if self.filled > 0 && (all || self.filled + self.record > self.buf.len()) {
            self.ch
                .message("digests")
                .hex("hex", &self.buf[..self.filled])
                .send();
            self.filled = 0;
        }
    }
}

/// Runs the table of descriptor `fd` (`--bytes` long), after `ready`, reading each message
/// straight into its buffer.
pub(super) fn run(inv: &Invocation<'_>, ch: &Channel, entry: Entry, fd: c_int) -> c_int {
    let Some((longest, count)) = records(fd, inv.input_bytes, inv.iterations, inv.supercop, 0)
    else {
        return error(
            ch,
            "table",
            b"the table is not --iters well-formed messages",
        );
    };
    let digest_len = (inv.digest_bits as usize).div_ceil(8);
    let per_record = digest_len * (1 + usize::from(inv.twice) + usize::from(inv.in_place));
    let buffers = (
        Guarded::new(longest),
        Guarded::new(digest_len),
        Guarded::new(longest.max(digest_len)),
        sys::alloc_filled(LINE_BYTES.max(per_record), 0),
    );
    let (Some(mut msg), Some(mut digest), Some(mut both), Some(buf)) = buffers else {
        return error(ch, "memory", b"cannot allocate the table's buffers");
    };
    let mut out = Out::new(ch, buf, per_record);
    let digest_bits = c_int::try_from(inv.digest_bits).unwrap_or(c_int::MAX);
    let mut at = 0u64;
    for _ in 0..count {
        let changed = || error(ch, "table", b"the table changed while it was read");
        let Some((bits, len)) = head(fd, at) else {
            return changed();
        };
        let start = at + 8;
        at = start + len as u64;
        out.flush(false);
        if !(msg.refit(len) && read_message_at(fd, msg.data_mut(), start)) {
            return changed();
        }
        for _ in 0..1 + usize::from(inv.twice) {
            digest.data_mut().fill(0);
            let call = Call {
                entry,
                digest_bits,
                msg: msg.ptr(),
                msg_bits: bits,
                digest: digest.ptr(),
            };
            let rc = call.call_n(1);
            let fault = if !digest.intact() {
                Some(Fault::Overflow("digest"))
            } else if !msg.intact() {
                Some(Fault::Overflow("message"))
            } else if let Some(i) = (!inv.unchecked_input)
                .then(|| message_differs_at(fd, msg.data(), start))
                .flatten()
            {
                Some(Fault::InputChanged(i as u64))
            } else {
                (rc != 0).then_some(Fault::Returned(rc))
            };
            if let Some(fault) = fault {
                return fault.send(&mut out);
            }
            out.push(digest.data());
        }
        if inv.in_place {
            both.refit(len.max(digest_len));
            both.data_mut()[..len].copy_from_slice(msg.data());
            let call = Call {
                entry,
                digest_bits,
                msg: both.ptr(),
                msg_bits: bits,
                digest: both.ptr(),
            };
            let rc = call.call_n(1);
            let fault = match (both.intact(), rc) {
                (false, _) => Some(Fault::Overflow("digest")),
                (true, 0) => None,
                (true, rc) => Some(Fault::Returned(rc)),
            };
            if let Some(fault) = fault {
                return fault.send(&mut out);
            }
            out.push(&both.data()[..digest_len]);
        }
    }
    out.flush(true);
    ch.message("done")
        .number("peak_rss_bytes", crate::procfs::peak_resident_bytes())
        .send();
    EXIT_DONE
}

/// What ended a table early.
pub(super) enum Fault {
    /// Which buffer's guard broke.
    Overflow(&'static str),
    InputChanged(u64),
    Returned(c_int),
}

impl Fault {
    /// The digests of every message before, then the fault.
    pub(super) fn send(self, out: &mut Out<'_>) -> c_int {
        // A width of 0 bits has records of no bytes.
        let partial = out.filled % out.record.max(1);
        out.filled -= partial;
        out.flush(true);
        match self {
            Fault::Overflow(buffer) => send_overflow_of(out.ch, buffer),
            Fault::InputChanged(offset) => send_input_changed(out.ch, offset),
            Fault::Returned(rc) => send_cryptofail(out.ch, rc),
        }
        EXIT_FAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    /// A table in a file of its own, as the engine hands one over.
    fn table(lengths: &[u64]) -> std::fs::File {
        let mut t = Vec::new();
        for &bits in lengths {
            t.extend_from_slice(&bits.to_le_bytes());
            t.extend((0..bits.div_ceil(8)).map(|i| i as u8));
        }
        file(&t)
    }

    fn file(bytes: &[u8]) -> std::fs::File {
        use std::io::Write;
        let mut f = tempfile_in_tmp();
        f.write_all(bytes).unwrap();
        f
    }

    fn tempfile_in_tmp() -> std::fs::File {
        let path = std::env::temp_dir().join(format!(
            "cyclescope-table-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        std::fs::remove_file(&path).unwrap();
        f
    }

    fn len(f: &std::fs::File) -> u64 {
        f.metadata().unwrap().len()
    }

    #[test]
    fn a_table_is_its_records_to_the_last_byte_and_nothing_else() {
        let t = table(&[0, 7, 8, 4096]);
        let fd = t.as_raw_fd();
        assert_eq!(records(fd, len(&t), 4, false, 0), Some((512, 4)));
        assert_eq!(records(fd, len(&t), 3, false, 0), None);
        // crypto_hash takes whole bytes only.
        assert_eq!(records(fd, len(&t), 4, true, 0), None);
        let whole = table(&[8, 16]);
        assert_eq!(
            records(whole.as_raw_fd(), len(&whole), 2, true, 0),
            Some((2, 2))
        );
        // A record cut short, or bytes after the last one.
        assert_eq!(records(fd, len(&t) - 1, 4, false, 0), None);
        assert_eq!(records(fd, len(&t) + 1, 4, false, 0), None);
        let huge = file(&u64::MAX.to_le_bytes());
        assert_eq!(records(huge.as_raw_fd(), 8, 1, false, 0), None);
        assert_eq!(records(fd, 0, 0, false, 0), Some((0, 0)));
        // What the descriptor holds is compared from the record's own offset.
        assert_eq!(
            message_differs_at(fd, &[0, 1, 2], 8 + 8 + 1 + 8 + 1 + 8),
            None
        );
        assert_eq!(
            message_differs_at(fd, &[0, 9, 2], 8 + 8 + 1 + 8 + 1 + 8),
            Some(1)
        );
    }
}
