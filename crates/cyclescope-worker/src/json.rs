//! The trial worker's protocol lines: the session token, a space, one JSON object, a newline,
//! written to the protocol descriptor. Objects are written field by field into a small buffer
//! that goes out whenever it fills (a batch of samples is longer than the buffer: the parent
//! reads lines, not writes), so a trial process holds no large output buffer. Only numbers,
//! fixed names, hex and escaped strings are written; the parent parses them with the same
//! types it always had (`measure::trial::TrialMessage`).

use core::ffi::c_int;
use core::fmt::{self, Write};

use super::sys;

/// Bytes buffered before a write.
const CHUNK: usize = 2048;

/// Where protocol lines go, and the token that marks them.
pub struct Channel {
    fd: c_int,
    token: [u8; 32],
}

impl Channel {
    pub fn new(fd: c_int, token: [u8; 32]) -> Self {
        Self { fd, token }
    }

    /// Starts a message of type `t`: `TOKEN {"t":"<t>"`.
    pub fn message(&self, t: &str) -> Line {
        let mut line = Line {
            fd: self.fd,
            buf: [0; CHUNK],
            len: 0,
            fresh: false,
        };
        line.raw(&self.token);
        line.raw(b" {\"t\":\"");
        line.raw(t.as_bytes());
        line.raw(b"\"");
        line
    }
}

/// One protocol line being written.
pub struct Line {
    fd: c_int,
    buf: [u8; CHUNK],
    len: usize,
    /// Just after an opening brace: the next key takes no comma.
    fresh: bool,
}

impl Line {
    fn raw(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.len == CHUNK {
                self.flush();
            }
            let n = bytes.len().min(CHUNK - self.len);
            self.buf[self.len..self.len + n].copy_from_slice(&bytes[..n]);
            self.len += n;
            bytes = &bytes[n..];
        }
    }

    fn flush(&mut self) {
        // A parent that went away is not this process's problem: it is killed with it.
        sys::write_all(self.fd, &self.buf[..self.len]);
        self.len = 0;
    }

    fn key(&mut self, key: &str) {
        if !core::mem::take(&mut self.fresh) {
            self.raw(b",");
        }
        self.raw(b"\"");
        self.raw(key.as_bytes());
        self.raw(b"\":");
    }

    /// `,"key":<number>`.
    pub fn number(mut self, key: &str, v: impl fmt::Display) -> Self {
        self.key(key);
        let _ = write!(self, "{v}");
        self
    }

    /// `,"key":null` or the number.
    pub(crate) fn optional(self, key: &str, v: Option<u64>) -> Self {
        match v {
            Some(v) => self.number(key, v),
            None => self.null(key),
        }
    }

    pub(crate) fn null(mut self, key: &str) -> Self {
        self.key(key);
        self.raw(b"null");
        self
    }

    /// `,"key":true` or `false`.
    pub(crate) fn boolean(mut self, key: &str, v: bool) -> Self {
        self.key(key);
        self.raw(if v { b"true" } else { b"false" });
        self
    }

    /// `,"key":"<name>"` for a fixed name (no escaping needed).
    pub(crate) fn name(mut self, key: &str, name: &str) -> Self {
        self.key(key);
        self.raw(b"\"");
        self.raw(name.as_bytes());
        self.raw(b"\"");
        self
    }

    /// `,"key":"<hex of bytes>"`.
    pub(crate) fn hex(mut self, key: &str, bytes: &[u8]) -> Self {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        self.key(key);
        self.raw(b"\"");
        for &b in bytes {
            self.raw(&[DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 15)]]);
        }
        self.raw(b"\"");
        self
    }

    /// `,"key":"<text>"`, escaped for JSON; invalid UTF-8 becomes U+FFFD.
    pub(crate) fn text(mut self, key: &str, text: impl fmt::Display) -> Self {
        self.key(key);
        self.raw(b"\"");
        let _ = write!(Escaped(&mut self), "{text}");
        self.raw(b"\"");
        self
    }

    /// `,"key":{` … `}` with the fields `fields` writes.
    pub(crate) fn object(mut self, key: &str, fields: impl FnOnce(Self) -> Self) -> Self {
        self.key(key);
        self.raw(b"{");
        self.fresh = true;
        let mut line = fields(self);
        line.raw(b"}");
        line
    }

    /// `,"key":[n,n,…]`.
    pub(crate) fn numbers(mut self, key: &str, values: &[u64]) -> Self {
        self.key(key);
        self.raw(b"[");
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                self.raw(b",");
            }
            let _ = write!(self, "{v}");
        }
        self.raw(b"]");
        self
    }

    /// Closes the object and sends the rest of the line.
    pub fn send(mut self) {
        self.raw(b"}\n");
        self.flush();
    }
}

impl Write for Line {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.raw(s.as_bytes());
        Ok(())
    }
}

/// Text written through this is escaped for a JSON string.
struct Escaped<'a>(&'a mut Line);

impl Write for Escaped<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for c in s.chars() {
            match c {
                '"' => self.0.raw(b"\\\""),
                '\\' => self.0.raw(b"\\\\"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(self.0, "\\u{:04x}", c as u32);
                }
                c => {
                    let mut utf8 = [0u8; 4];
                    self.0.raw(c.encode_utf8(&mut utf8).as_bytes());
                }
            }
        }
        Ok(())
    }
}
