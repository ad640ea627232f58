//! Reading evidence from disk: records, `campaign.json`, `build.json`, KAT logs and the journal
//! of a run directory or dataset someone else may have prepared. Every read goes through
//! [`read_inside`]: the path stays inside the directory, links are not followed, only regular
//! files are read (a FIFO or `/dev/zero` behind a name cannot hang or flood us), and the size
//! is bounded. Scans name every file they could not use instead of dropping it. Never writes.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::safe_path::{PathError, inside};
use super::schema::TimingRecord;

/// The largest record, campaign.json or build.json read (the largest published record is
/// well under 1 MiB; a record with a full histogram a few hundred KiB).
pub const JSON_LIMIT: u64 = 16 << 20;
/// The largest KAT log read (a log is a few dozen lines).
pub const LOG_LIMIT: u64 = 16 << 20;
/// The most of a journal read in one go (hours of live histograms stay far below this).
pub const JOURNAL_LIMIT: u64 = 256 << 20;

/// Opens `root/rel` for reading: inside the root, not through a link, a regular file.
pub(crate) fn open_inside(root: &Path, rel: &Path) -> Result<File, PathError> {
    let path = inside(root, rel)?;
    // O_NOFOLLOW refuses a link in the last part (checked above too, but the check and the
    // open are two steps); O_NONBLOCK keeps a FIFO from blocking the open.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => PathError::Symlink { path: path.clone() },
            _ => PathError::io(&path)(e),
        })?;
    let meta = file.metadata().map_err(PathError::io(&path))?;
    if !meta.is_file() {
        return Err(PathError::NotRegular { path });
    }
    Ok(file)
}

/// The bytes of `root/rel`, at most `limit` of them (more is an error, not a truncation).
pub fn read_inside(root: &Path, rel: &Path, limit: u64) -> Result<Vec<u8>, PathError> {
    let file = open_inside(root, rel)?;
    let path = root.join(rel);
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(PathError::io(&path))?;
    if bytes.len() as u64 > limit {
        return Err(PathError::TooLarge { path, limit });
    }
    Ok(bytes)
}

/// A file of the run that could not be used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// Relative to the run directory.
    pub path: PathBuf,
    pub reason: String,
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.reason)
    }
}

/// The records of a run directory, and the files under `records/` that are not records.
#[derive(Debug, Default)]
pub struct RecordScan {
    pub records: Vec<(PathBuf, TimingRecord)>,
    pub unreadable: Vec<Unreadable>,
}

/// Every `records/<candidate>/*.json`, parsed. A file that is a link, not a regular file, too
/// large, not JSON or not a record is listed in `unreadable` with the reason. Leftover `.tmp`
/// files of an interrupted write are not records and are skipped silently.
pub fn scan_records(root: &Path) -> RecordScan {
    let (files, mut unreadable) = record_files(root);
    let mut records = Vec::new();
    for (rel, bytes) in files {
        match serde_json::from_slice::<TimingRecord>(&bytes) {
            Ok(r) => records.push((rel, r)),
            Err(e) => unreadable.push(Unreadable {
                path: rel,
                reason: format!("not a timing record: {e}"),
            }),
        }
    }
    RecordScan {
        records,
        unreadable,
    }
}

/// The bytes of every `records/<candidate>/*.json` (sorted by path), and the entries under
/// `records/` that cannot be read, with the reason.
pub(crate) fn record_files(root: &Path) -> (Vec<(PathBuf, Vec<u8>)>, Vec<Unreadable>) {
    let mut unreadable = Vec::new();
    let mut bad = |path: PathBuf, reason: String| {
        unreadable.push(Unreadable { path, reason });
    };
    let records = Path::new("records");
    let cands = match list_dir(root, records) {
        Ok(c) => c,
        Err(PathError::Missing { .. }) => return (Vec::new(), unreadable),
        Err(e) => {
            bad(records.to_path_buf(), reason_of(&e));
            return (Vec::new(), unreadable);
        }
    };
    let mut found = Vec::new();
    for (name, kind) in cands {
        let rel = records.join(&name);
        match kind {
            EntryKind::Dir => match list_dir(root, &rel) {
                Ok(files) => {
                    for (f, kind) in files {
                        let rel = rel.join(&f);
                        if rel.extension().is_some_and(|e| e == "json") {
                            found.push(rel);
                        } else if kind == EntryKind::Link {
                            bad(
                                rel,
                                reason_of(&PathError::Symlink {
                                    path: PathBuf::new(),
                                }),
                            );
                        }
                    }
                }
                Err(e) => bad(rel, reason_of(&e)),
            },
            EntryKind::Link => bad(
                rel,
                reason_of(&PathError::Symlink {
                    path: PathBuf::new(),
                }),
            ),
            EntryKind::Other if rel.extension().is_some_and(|e| e == "json") => {
                bad(rel, "a record outside any candidate folder".into())
            }
            EntryKind::Other => {}
        }
    }
    found.sort();
    let mut files = Vec::new();
    for rel in found {
        match read_inside(root, &rel, JSON_LIMIT) {
            Ok(bytes) => files.push((rel, bytes)),
            Err(e) => bad(rel, reason_of(&e)),
        }
    }
    (files, unreadable)
}

/// The reason part of a path error (the path is named separately).
pub(crate) fn reason_of(e: &PathError) -> String {
    match e {
        PathError::Symlink { .. } => "a symbolic link (links are not followed)".into(),
        PathError::NotRegular { .. } => "not a regular file".into(),
        PathError::TooLarge { limit, .. } => format!("larger than {limit} bytes"),
        PathError::Missing { .. } => "missing".into(),
        PathError::Io { source, .. } => source.to_string(),
        other => other.to_string(),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum EntryKind {
    Dir,
    Link,
    Other,
}

/// The entries of `root/rel` (which must be a real directory), by name, with their kind as
/// the directory says (links not followed).
pub(crate) fn list_dir(root: &Path, rel: &Path) -> Result<Vec<(PathBuf, EntryKind)>, PathError> {
    let dir = inside(root, rel)?;
    let meta = std::fs::symlink_metadata(&dir).map_err(PathError::io(&dir))?;
    if !meta.is_dir() {
        return Err(PathError::NotADirectory { path: dir });
    }
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).map_err(PathError::io(&dir))? {
        let entry = entry.map_err(PathError::io(&dir))?;
        let kind = match entry.file_type() {
            Ok(t) if t.is_symlink() => EntryKind::Link,
            Ok(t) if t.is_dir() => EntryKind::Dir,
            _ => EntryKind::Other,
        };
        out.push((PathBuf::from(entry.file_name()), kind));
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_devices_and_oversized_files_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::os::unix::fs::symlink("/dev/zero", root.join("zero.json")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("passwd.json")).unwrap();
        nix::unistd::mkfifo(&root.join("fifo.json"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        std::fs::write(root.join("big.json"), vec![b' '; 2000]).unwrap();
        for (name, needle) in [
            ("zero.json", "symbolic link"),
            ("passwd.json", "symbolic link"),
            ("fifo.json", "not a regular file"),
            ("missing.json", "does not exist"),
        ] {
            let err = read_inside(root, Path::new(name), JSON_LIMIT).unwrap_err();
            assert!(err.to_string().contains(needle), "{name}: {err}");
        }
        let err = read_inside(root, Path::new("big.json"), 1000).unwrap_err();
        assert!(err.to_string().contains("larger than 1000 bytes"), "{err}");
        assert_eq!(
            read_inside(root, Path::new("big.json"), 2000)
                .unwrap()
                .len(),
            2000
        );
    }

    #[test]
    fn a_scan_names_every_file_it_cannot_use() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let cand = root.join("records/c");
        std::fs::create_dir_all(&cand).unwrap();
        std::fs::write(
            cand.join("truncated__hash_32.json"),
            b"{\"schema\": 2, \"sta",
        )
        .unwrap();
        std::fs::write(cand.join("other__hash_32.json"), b"{\"a\": 1}").unwrap();
        std::fs::write(cand.join("x__hash_32.json.tmp"), b"partial").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", cand.join("link__hash_32.json")).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("records/d")).unwrap();
        let scan = scan_records(root);
        assert!(scan.records.is_empty());
        let named: Vec<String> = scan.unreadable.iter().map(ToString::to_string).collect();
        assert_eq!(named.len(), 4, "{named:#?}");
        for needle in [
            "records/c/truncated__hash_32.json: not a timing record",
            "records/c/other__hash_32.json: not a timing record",
            "records/c/link__hash_32.json: a symbolic link",
            "records/d: a symbolic link",
        ] {
            assert!(
                named.iter().any(|n| n.starts_with(needle)),
                "{needle}: {named:#?}"
            );
        }
        assert!(
            !named.iter().any(|n| n.contains("root:")),
            "nothing of /etc/passwd quoted"
        );
    }
}
