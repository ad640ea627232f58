//! The trial worker's buffers: a message or digest framed by guard bytes that a write outside
//! it breaks, laid out the guide's way (right after the guards at the start of its own
//! allocation) or at a chosen offset past a 64-byte boundary (`measure::layout`); and a fenced
//! region between two inaccessible pages (`fenced`). Nothing here calls the candidate.

use super::sys;

/// Guard bytes on each side of a buffer, and their value (`plugin::GuardedBuffer`).
const GUARD_LEN: usize = 64;
const GUARD_BYTE: u8 = 0xA5;

/// Whole pages of zeros, at least `len` bytes, between two pages the process may neither read
/// nor write: a message laid flush against either end faults on a read past it. None when the
/// mapping fails.
pub(crate) fn fenced(len: usize) -> Option<&'static mut [u8]> {
    const PROT_NONE: core::ffi::c_int = 0;
    const PROT_READ_WRITE: core::ffi::c_int = 1 | 2;
    const MAP_PRIVATE_ANONYMOUS: core::ffi::c_int = 0x02 | 0x20;
    let page = usize::try_from(sys::page_size()).ok()?;
    let inner = len.max(1).checked_next_multiple_of(page)?;
    let whole = inner.checked_add(2 * page)?;
    // SAFETY: a fresh private anonymous mapping the kernel places; nothing else refers to it.
    let map = unsafe {
        sys::mmap(
            core::ptr::null_mut(),
            whole,
            PROT_READ_WRITE,
            MAP_PRIVATE_ANONYMOUS,
            -1,
            0,
        )
    };
    if map as isize == -1 || map.is_null() {
        return None;
    }
    let base = map.cast::<u8>();
    // SAFETY: the first and last pages of the mapping made above, which nothing refers to yet.
    let fenced = unsafe {
        sys::mprotect(map, page, PROT_NONE) == 0
            && sys::mprotect(base.add(page + inner).cast(), page, PROT_NONE) == 0
    };
    if !fenced {
        // SAFETY: the whole mapping made above, referred to by nothing.
        unsafe { sys::munmap(map, whole) };
        return None;
    }
    // SAFETY: the `inner` readable, writable, zeroed bytes between the two fences, owned by
    // nobody else and never unmapped (the trial process lives as long as its buffers).
    Some(unsafe { core::slice::from_raw_parts_mut(base.add(page), inner) })
}

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
