//! Text without an allocator: bytes shown as UTF-8 (invalid sequences replaced), and a
//! `fmt::Write` into a fixed buffer (for paths and messages built with `write!`).

use core::fmt;

/// Bytes as text, invalid UTF-8 replaced by U+FFFD.
pub(crate) struct Lossy<'a>(pub(crate) &'a [u8]);

impl fmt::Display for Lossy<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for chunk in self.0.utf8_chunks() {
            f.write_str(chunk.valid())?;
            if !chunk.invalid().is_empty() {
                f.write_str("\u{FFFD}")?;
            }
        }
        Ok(())
    }
}

/// Writes into a byte buffer; what does not fit is an error (and is not written).
pub(crate) struct ByteWriter<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> ByteWriter<'a> {
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Self { buf, len: 0 }
    }

    pub(crate) fn written(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl fmt::Write for ByteWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        let slot = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
        slot.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}
