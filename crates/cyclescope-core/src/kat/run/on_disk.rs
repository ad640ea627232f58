//! The parent's own reading of a generated KAT file: the verdict rests on what is on disk,
//! not on the digests a worker reports (a library can write to the protocol channel). The
//! file is opened without following links, must be a regular file, and is read no further
//! than one byte past the size the worker reported. Never writes.

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::kat::generate::{KatWriter, Written};

/// Byte count and canonical digests of the file at `path`, read up to `reported + 1` bytes;
/// with `keep`, also the bytes read (the very text the digests are of: the known answers the
/// parent takes from it are then of the text it verified, not of a later rewrite).
pub(super) fn digest(
    path: &Path,
    reported: u64,
    keep: Option<&mut Vec<u8>>,
) -> Result<Written, String> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| format!("cannot open it: {e}"))?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.file_type().is_file() {
        return Err("it is not a regular file".into());
    }
    let mut w = KatWriter::new(std::io::sink());
    copy(file.take(reported.saturating_add(1)), &mut w, keep).map_err(|e| e.to_string())?;
    w.finish().map_err(|e| e.to_string())
}

fn copy(
    mut r: impl Read,
    w: &mut impl Write,
    mut keep: Option<&mut Vec<u8>>,
) -> std::io::Result<()> {
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match r.read(&mut buf)? {
            0 => return Ok(()),
            n => {
                w.write_all(&buf[..n])?;
                if let Some(k) = keep.as_deref_mut() {
                    k.extend_from_slice(&buf[..n]);
                }
            }
        }
    }
}

/// Why a reported file and the one on disk differ, if they do.
pub(super) fn difference(reported: &Written, on_disk: &Written) -> Option<String> {
    if reported == on_disk {
        return None;
    }
    Some(if reported.bytes != on_disk.bytes {
        format!(
            "it holds {} bytes on disk, the worker reported {}",
            on_disk.bytes, reported.bytes
        )
    } else {
        "its content on disk differs from the digest the worker reported".into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kat::manifest::{CanonicalMode, canonical_sha256};

    #[test]
    fn a_file_is_digested_like_the_generator_does() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("k.txt");
        let text = b"Len = 0\nMsg = 00\nMD = ab\n";
        std::fs::write(&p, text).unwrap();
        let mut kept = Vec::new();
        let w = digest(&p, text.len() as u64, Some(&mut kept)).unwrap();
        assert_eq!(kept, text, "the bytes kept are the bytes digested");
        assert_eq!(w.bytes, text.len() as u64);
        assert_eq!(
            w.sha256(CanonicalMode::Strict),
            canonical_sha256(text, CanonicalMode::Strict)
        );
        assert_eq!(difference(&w, &w), None);
        let empty = digest(&dir.path().join("k.txt"), 0, None).unwrap();
        assert_eq!(empty.bytes, 1, "read stops one byte past the reported size");
    }

    #[test]
    fn links_and_non_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("l.txt");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        assert!(digest(&link, 10, None).is_err());
        assert!(digest(dir.path(), 10, None).is_err());
        assert!(digest(&dir.path().join("missing"), 10, None).is_err());
    }
}
