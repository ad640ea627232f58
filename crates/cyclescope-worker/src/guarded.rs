//! The trial worker's buffers: a message or digest framed by guard bytes that a write outside
//! it breaks, laid out the guide's way (right after the guards at the start of its own
//! allocation) or at a chosen offset past a 64-byte boundary (`measure::layout`). Nothing here
//! calls the candidate.

use super::sys;

/// Guard bytes on each side of a buffer, and their value (`plugin::GuardedBuffer`).
const GUARD_LEN: usize = 64;
const GUARD_BYTE: u8 = 0xA5;

/// A buffer framed by guard bytes that a write outside it breaks.
pub(crate) struct Guarded {
    bytes: &'static mut [u8],
    len: usize,
}

impl Guarded {
    /// The guide's layout: the data right after the guard bytes at the start of its own
    /// allocation (so wherever malloc puts it).
    pub(crate) fn new(len: usize) -> Option<Self> {
        Self::framed(sys::alloc_filled(len.checked_add(2 * GUARD_LEN)?, 0)?, len)
    }

    /// A layout of its own: the data `offset` (< 64) bytes past a 64-byte boundary.
    pub(crate) fn at_offset(len: usize, offset: usize) -> Option<Self> {
        let framed = len.checked_add(2 * GUARD_LEN)?;
        let bytes = sys::alloc_filled(framed.checked_add(2 * 64)?, 0)?;
        let data = bytes.as_ptr() as usize + GUARD_LEN;
        let skip = data.next_multiple_of(64) - data + offset;
        Self::framed(&mut bytes[skip..skip + framed], len)
    }

    fn framed(bytes: &'static mut [u8], len: usize) -> Option<Self> {
        bytes[..GUARD_LEN].fill(GUARD_BYTE);
        bytes[GUARD_LEN + len..].fill(GUARD_BYTE);
        Some(Self { bytes, len })
    }

    /// Refits the buffer to `len` bytes, the guard bytes right after them again; false (and
    /// no change) where `len` does not fit the allocation. Only what was data and is no
    /// longer is filled again: every byte past the old data holds the guard value already or
    /// what a call wrote there, which `intact` still finds (a long allocation refitted to a
    /// short message costs the message, not the allocation).
    pub(crate) fn refit(&mut self, len: usize) -> bool {
        if len
            .checked_add(2 * GUARD_LEN)
            .is_none_or(|framed| framed > self.bytes.len())
        {
            return false;
        }
        if len < self.len {
            self.bytes[GUARD_LEN + len..GUARD_LEN + self.len].fill(GUARD_BYTE);
        }
        self.len = len;
        true
    }

    pub(crate) fn data_mut(&mut self) -> &mut [u8] {
        &mut self.bytes[GUARD_LEN..GUARD_LEN + self.len]
    }

    pub(crate) fn data(&self) -> &[u8] {
        &self.bytes[GUARD_LEN..GUARD_LEN + self.len]
    }

    /// Whether every byte outside the data, to both ends of the allocation, still holds the
    /// guard value (compared a block at a time: the allocation may be a megabyte long).
    pub(crate) fn intact(&self) -> bool {
        const PATTERN: [u8; 4096] = [GUARD_BYTE; 4096];
        let outside = [
            &self.bytes[..GUARD_LEN],
            &self.bytes[GUARD_LEN + self.len..],
        ];
        outside
            .iter()
            .all(|side| side.chunks(PATTERN.len()).all(|c| c == &PATTERN[..c.len()]))
    }

    pub(crate) fn ptr(&mut self) -> *mut u8 {
        self.bytes.as_mut_ptr().wrapping_add(GUARD_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// After a refit, a write anywhere outside the data is found, at the far end of a long
    /// allocation too, and what was data before the refit is not taken for a write.
    #[test]
    fn after_a_refit_a_write_anywhere_outside_is_found() {
        let mut g = Guarded::new(1 << 20).expect("buffer");
        assert!(g.intact());
        for (from, to) in [(1 << 20, 33), (33, 1 << 19), (1 << 19, 12)] {
            assert!(g.refit(from));
            g.data_mut().fill(7);
            assert!(g.refit(to) && g.intact(), "{from} B of data, then {to} B");
            let last = g.bytes.len() - 1;
            for at in [
                GUARD_LEN + to,
                GUARD_LEN + to + 4096 + 5,
                last,
                0,
                GUARD_LEN - 1,
            ] {
                let was = g.bytes[at];
                g.bytes[at] ^= 1;
                assert!(!g.intact(), "a write at {at} past {to} B went unseen");
                g.bytes[at] = was;
            }
            assert!(g.intact());
        }
        assert!(!g.refit((1 << 20) + 1), "longer than the allocation");
        assert_eq!(g.data().len(), 12);
    }
}
