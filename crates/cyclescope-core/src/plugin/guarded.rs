//! Buffers framed by guard bytes (64 × 0xA5 on each side, as the harness's KAT checker uses),
//! so a candidate that writes outside its message or digest is caught after the call.

/// Guard bytes on each side.
pub(crate) const GUARD_LEN: usize = 64;
/// The guard pattern.
pub(crate) const GUARD_BYTE: u8 = 0xA5;

/// A buffer of `len` usable bytes with guards on both sides.
#[derive(Debug, Clone)]
pub struct GuardedBuffer {
    bytes: Vec<u8>,
    len: usize,
}

impl GuardedBuffer {
    /// A zeroed buffer of `len` bytes between two guards.
    pub fn new(len: usize) -> Self {
        let mut bytes = vec![0u8; len + 2 * GUARD_LEN];
        bytes[..GUARD_LEN].fill(GUARD_BYTE);
        bytes[GUARD_LEN + len..].fill(GUARD_BYTE);
        Self { bytes, len }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub fn data(&self) -> &[u8] {
        &self.bytes[GUARD_LEN..GUARD_LEN + self.len]
    }

    pub fn data_mut(&mut self) -> &mut [u8] {
        &mut self.bytes[GUARD_LEN..GUARD_LEN + self.len]
    }

    /// True when no byte of either guard changed.
    pub fn guards_intact(&self) -> bool {
        self.bytes[..GUARD_LEN].iter().all(|&b| b == GUARD_BYTE)
            && self.bytes[GUARD_LEN + self.len..]
                .iter()
                .all(|&b| b == GUARD_BYTE)
    }

    /// Pointer to the first usable byte; the guards belong to the same allocation.
    pub(super) fn as_ptr(&self) -> *const u8 {
        // Derived from the whole allocation so that a write into either guard stays inside it.
        self.bytes.as_ptr().wrapping_add(GUARD_LEN)
    }

    pub(super) fn as_mut_ptr(&mut self) -> *mut u8 {
        self.bytes.as_mut_ptr().wrapping_add(GUARD_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_buffer_has_intact_guards_and_zeroed_data() {
        let b = GuardedBuffer::new(5);
        assert!(b.guards_intact());
        assert_eq!(b.data(), &[0; 5]);
    }

    #[test]
    fn a_write_past_the_end_breaks_the_guard() {
        let mut b = GuardedBuffer::new(5);
        b.bytes[GUARD_LEN + 5] = 0;
        assert!(!b.guards_intact());
        let mut b = GuardedBuffer::new(0);
        b.bytes[GUARD_LEN - 1] = 1;
        assert!(!b.guards_intact());
    }
}
