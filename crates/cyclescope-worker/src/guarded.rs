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
    /// no change) where `len` does not fit the allocation.
    pub(crate) fn refit(&mut self, len: usize) -> bool {
        if len
            .checked_add(2 * GUARD_LEN)
            .is_none_or(|framed| framed > self.bytes.len())
        {
            return false;
        }
        self.len = len;
        self.bytes[GUARD_LEN + len..].fill(GUARD_BYTE);
        true
    }

    pub(crate) fn data_mut(&mut self) -> &mut [u8] {
        &mut self.bytes[GUARD_LEN..GUARD_LEN + self.len]
    }

    pub(crate) fn data(&self) -> &[u8] {
        &self.bytes[GUARD_LEN..GUARD_LEN + self.len]
    }

    pub(crate) fn intact(&self) -> bool {
        self.bytes[..GUARD_LEN].iter().all(|&b| b == GUARD_BYTE)
            && self.bytes[GUARD_LEN + self.len..]
                .iter()
                .all(|&b| b == GUARD_BYTE)
    }

    pub(crate) fn ptr(&mut self) -> *mut u8 {
        self.bytes.as_mut_ptr().wrapping_add(GUARD_LEN)
    }
}
