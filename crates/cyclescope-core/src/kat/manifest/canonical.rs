//! The canonical form of KAT text that `kat.sha256` digests cover (spec §2.4): split on `\n`,
//! strip trailing `\r`, spaces and tabs, drop empty lines, end every kept line with `\n`; in
//! `nolen` mode also drop lines whose key (text before `=`) ends in `_Len`. Computed as a
//! stream so a generator can digest what it writes without keeping or re-reading it.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Which lines a manifest digest covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CanonicalMode {
    /// Every non-blank line.
    Strict,
    /// Every non-blank line except `X_Len = …` lines (references made in template mode).
    NoLen,
}

impl CanonicalMode {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CanonicalMode::Strict => "strict",
            CanonicalMode::NoLen => "nolen",
        }
    }
}

/// A line without its trailing `\r`, spaces and tabs.
pub(crate) fn trim_line_end(line: &[u8]) -> &[u8] {
    let end = line
        .iter()
        .rposition(|b| !matches!(b, b'\r' | b' ' | b'\t'))
        .map_or(0, |i| i + 1);
    &line[..end]
}

/// The key of a `key = value` line, trimmed, when the line has an `=`.
pub(crate) fn line_key(line: &[u8]) -> Option<&[u8]> {
    let eq = line.iter().position(|&b| b == b'=')?;
    Some(line[..eq].trim_ascii())
}

/// True for `X_Len = …` lines.
pub(crate) fn is_len_line(line: &[u8]) -> bool {
    line_key(line).is_some_and(|k| k.ends_with(b"_Len"))
}

/// True for a `X_Len =` line with an empty value (a reference generated in template mode).
pub(crate) fn is_blank_len_line(line: &[u8]) -> bool {
    let line = trim_line_end(line);
    is_len_line(line) && line.last() == Some(&b'=')
}

/// The canonical form of one line: `None` when it is dropped.
pub(crate) fn canonical_line(line: &[u8], mode: CanonicalMode) -> Option<&[u8]> {
    let line = trim_line_end(line);
    if line.is_empty() || (mode == CanonicalMode::NoLen && is_len_line(line)) {
        None
    } else {
        Some(line)
    }
}

/// SHA-256 of the canonical form of text fed in pieces of any size.
#[derive(Debug, Clone)]
pub struct CanonicalDigest {
    mode: CanonicalMode,
    line: Vec<u8>,
    sha: Sha256,
}

impl CanonicalDigest {
    pub fn new(mode: CanonicalMode) -> Self {
        Self {
            mode,
            line: Vec::with_capacity(256),
            sha: Sha256::new(),
        }
    }

    pub(crate) fn update(&mut self, mut bytes: &[u8]) {
        while let Some(nl) = bytes.iter().position(|&b| b == b'\n') {
            self.line.extend_from_slice(&bytes[..nl]);
            self.end_line();
            bytes = &bytes[nl + 1..];
        }
        self.line.extend_from_slice(bytes);
    }

    fn end_line(&mut self) {
        if let Some(kept) = canonical_line(&self.line, self.mode) {
            self.sha.update(kept);
            self.sha.update(b"\n");
        }
        self.line.clear();
    }

    /// The digest; an unterminated last line counts like a terminated one.
    pub(crate) fn finalize(mut self) -> [u8; 32] {
        if !self.line.is_empty() {
            self.end_line();
        }
        self.sha.finalize().into()
    }
}

/// SHA-256 of the canonical form of a whole text.
pub fn canonical_sha256(text: &[u8], mode: CanonicalMode) -> [u8; 32] {
    let mut d = CanonicalDigest::new(mode);
    d.update(text);
    d.finalize()
}

/// The canonical text itself, to show in tests what the digest covers.
#[cfg(test)]
fn canonical_text(text: &[u8], mode: CanonicalMode) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for line in text.split(|&b| b == b'\n') {
        if let Some(kept) = canonical_line(line, mode) {
            out.extend_from_slice(kept);
            out.push(b'\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLEAN: &str = "Msg_Len = 0\nMsg = \nDst_Len = 256\nDst = AB\n\nMsg_Len = 1\nMsg = 80\nDst_Len = 256\nDst = CD\n\n";
    const MESSY: &str = "Msg_Len = 0 \r\nMsg = \r\nDst_Len = 256\t\r\nDst = AB   \r\n\r\n\r\n  \nMsg_Len = 1\r\nMsg = 80\r\nDst_Len = 256\r\nDst = CD";

    #[test]
    fn crlf_trailing_blanks_and_empty_lines_do_not_change_the_digest() {
        let want = "Msg_Len = 0\nMsg =\nDst_Len = 256\nDst = AB\nMsg_Len = 1\nMsg = 80\nDst_Len = 256\nDst = CD\n";
        assert_eq!(
            canonical_text(CLEAN.as_bytes(), CanonicalMode::Strict),
            want.as_bytes()
        );
        assert_eq!(
            canonical_text(MESSY.as_bytes(), CanonicalMode::Strict),
            want.as_bytes()
        );
        let expect: [u8; 32] = Sha256::digest(want.as_bytes()).into();
        for text in [CLEAN, MESSY] {
            assert_eq!(
                canonical_sha256(text.as_bytes(), CanonicalMode::Strict),
                expect
            );
        }
    }

    #[test]
    fn streaming_in_odd_pieces_equals_the_whole() {
        for mode in [CanonicalMode::Strict, CanonicalMode::NoLen] {
            let whole = canonical_sha256(MESSY.as_bytes(), mode);
            for piece in [1, 2, 3, 7, 64] {
                let mut d = CanonicalDigest::new(mode);
                for chunk in MESSY.as_bytes().chunks(piece) {
                    d.update(chunk);
                }
                assert_eq!(d.finalize(), whole, "{mode:?} {piece}");
            }
        }
    }

    #[test]
    fn nolen_drops_len_lines_by_key() {
        let text = b"Msg_Len = 8\nMsg = 3D\nDst_Len =\nDst = 01\nMy_Length = 3\nX_Len\n";
        assert_eq!(
            canonical_text(text, CanonicalMode::NoLen),
            b"Msg = 3D\nDst = 01\nMy_Length = 3\nX_Len\n"
        );
        assert!(is_blank_len_line(b"Dst_Len = \r"));
        assert!(!is_blank_len_line(b"Dst_Len = 256"));
        assert!(!is_blank_len_line(b"Dst ="));
    }
}
