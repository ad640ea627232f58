//! The session token that marks a worker's own protocol lines. The parent draws 128 random
//! bits per worker and hands them over on the worker's stdin, which the worker reads to the
//! end and replaces by `/dev/null` before any candidate code is loaded: the token is in no
//! argument, environment variable or open file the candidate could read, so a line a library
//! writes to the protocol descriptor does not carry it. (Code in the same address space can
//! still search memory for it; what the parent observes from outside backs this up.)

use std::io::Read;

/// 16 random bytes, shown as 32 lowercase hex digits at the start of every protocol line.
#[derive(Clone, PartialEq, Eq)]
pub struct SessionToken(String);

impl std::fmt::Debug for SessionToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionToken(…)")
    }
}

impl SessionToken {
    /// A fresh token from the kernel's random source.
    pub(crate) fn generate() -> std::io::Result<Self> {
        let mut bytes = [0u8; 16];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
        Ok(Self(hex::encode(bytes)))
    }

    /// Reads the token the parent wrote to `r`: its line of 32 hex digits and a newline,
    /// exactly, so that the job after it (`job_block`) stays unread.
    pub(crate) fn read_from(mut r: impl Read) -> Option<Self> {
        let mut line = [0u8; 33];
        r.read_exact(&mut line).ok()?;
        let (t, end) = line.split_at(32);
        (end == b"\n" && t.iter().all(u8::is_ascii_hexdigit))
            .then(|| Self(String::from_utf8_lossy(t).into_owned()))
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }

    /// The rest of `line` when it starts with this token and a space.
    pub(crate) fn strip<'a>(&self, line: &'a [u8]) -> Option<&'a [u8]> {
        line.strip_prefix(self.0.as_bytes())?.strip_prefix(b" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_fresh_and_mark_lines() {
        let a = SessionToken::generate().unwrap();
        let b = SessionToken::generate().unwrap();
        assert_ne!(a, b);
        let line = format!("{} {{\"t\":\"done\"}}", a.as_str());
        assert_eq!(a.strip(line.as_bytes()), Some(&b"{\"t\":\"done\"}"[..]));
        assert_eq!(b.strip(line.as_bytes()), None);
        assert_eq!(a.strip(b"{\"t\":\"done\"}"), None);
        let read = SessionToken::read_from(format!("{}\n", a.as_str()).as_bytes());
        assert_eq!(read, Some(a));
        assert_eq!(SessionToken::read_from(&b"not a token\n"[..]), None);
    }
}
