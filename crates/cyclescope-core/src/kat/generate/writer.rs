//! The sink of a generator: passes the text through to the real writer, counts bytes and
//! digests the canonical form in both manifest modes as it goes, so the verdict never needs
//! the file read back.

use std::io::Write;

use crate::kat::manifest::{CanonicalDigest, CanonicalMode};

/// What a generator wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    pub(crate) bytes: u64,
    /// SHA-256 of the canonical form, `strict` mode.
    pub(crate) sha256_strict: [u8; 32],
    /// SHA-256 of the canonical form, `nolen` mode.
    pub(crate) sha256_nolen: [u8; 32],
}

impl Written {
    pub(crate) fn sha256(&self, mode: CanonicalMode) -> [u8; 32] {
        match mode {
            CanonicalMode::Strict => self.sha256_strict,
            CanonicalMode::NoLen => self.sha256_nolen,
        }
    }
}

/// A counting, digesting pass-through writer.
pub struct KatWriter<W> {
    inner: W,
    bytes: u64,
    strict: CanonicalDigest,
    nolen: CanonicalDigest,
}

impl<W: Write> KatWriter<W> {
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            bytes: 0,
            strict: CanonicalDigest::new(CanonicalMode::Strict),
            nolen: CanonicalDigest::new(CanonicalMode::NoLen),
        }
    }

    /// Flushes the inner writer and returns the totals.
    pub(crate) fn finish(mut self) -> std::io::Result<Written> {
        self.inner.flush()?;
        Ok(Written {
            bytes: self.bytes,
            sha256_strict: self.strict.finalize(),
            sha256_nolen: self.nolen.finalize(),
        })
    }
}

impl<W: Write> Write for KatWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        self.strict.update(&buf[..n]);
        self.nolen.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
