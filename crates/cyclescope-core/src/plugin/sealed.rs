//! One library for the whole run: a candidate's file is read once into a sealed memfd (no
//! write, no resize, no further seals: nobody, the candidate included, can change it after),
//! its SHA-256 is taken from those same bytes, and every worker loads the memfd rather than
//! the path, handed over as a descriptor at a fixed number (`WORKER_LIBRARY_FD`). The path can
//! then be replaced or overwritten mid-run without effect on what is measured, and the hash a
//! record carries is the hash of what ran. A run holds its libraries (`RunLibraries`) for its
//! whole length; a job outside a run seals its library for itself. This module never runs
//! the library; it names it, to people, only by its original path.

use std::collections::HashMap;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use sha2::Digest;

/// The descriptor numbers a worker finds its libraries at: the candidate first, then the
/// conformance oracle. The workers' setup keeps them open (`worker::child`, the companion's
/// `setup.rs`, which repeats the numbers).
pub const WORKER_LIBRARY_FDS: [RawFd; 2] = [9, 10];

/// The path a worker loads its `index`-th library from.
pub fn worker_path(index: usize) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}", WORKER_LIBRARY_FDS[index]))
}

/// A library's bytes as read once, sealed, and their hash.
#[derive(Debug)]
pub struct SealedLibrary {
    fd: OwnedFd,
    sha256: String,
    original: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum SealError {
    #[error("cannot read library {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "cannot keep a private sealed copy of library {path} ({what}: {source}); \
         cyclescope needs memfd_create with sealing (Linux 3.17 or later)"
    )]
    Memfd {
        path: PathBuf,
        what: &'static str,
        source: std::io::Error,
    },
}

impl SealedLibrary {
    /// Reads `path` once into a sealed memfd and hashes the bytes read.
    pub fn seal(path: &Path) -> Result<Self, SealError> {
        let bytes = std::fs::read(path).map_err(|source| SealError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        // The name shows in `/proc/<pid>/maps` and valgrind's output as `/memfd:<name>`.
        Self::sealed(&memfd_name(path), &bytes, path.to_path_buf()).map_err(|source| {
            SealError::Memfd {
                path: path.to_path_buf(),
                what: "memfd_create, write and seal",
                source,
            }
        })
    }

    /// `bytes` in a sealed memfd named `name`, hashed, known to people as `original`.
    fn sealed(name: &std::ffi::CStr, bytes: &[u8], original: PathBuf) -> std::io::Result<Self> {
        Ok(Self {
            fd: crate::jail::sealed_memfd(name, bytes)?,
            sha256: hex::encode(sha2::Sha256::digest(bytes)),
            original,
        })
    }

    /// `bytes` sealed the same way, named `name` (a message a worker hashes,
    /// `measure::proof::reference`: handed over in the second slot, read, never loaded).
    pub(crate) fn of_bytes(name: &str, bytes: &[u8]) -> std::io::Result<Self> {
        let c_name = std::ffi::CString::new(name.replace('\0', "")).unwrap_or_default();
        Self::sealed(&c_name, bytes, PathBuf::from(name))
    }

    /// `parts` one after another sealed the same way, named `name`, unhashed (a table of
    /// messages, `measure::table`, up to gigabytes: never loaded, so no library hash).
    pub(crate) fn of_parts(name: &str, parts: &[&[u8]]) -> std::io::Result<Self> {
        let c_name = std::ffi::CString::new(name.replace('\0', "")).unwrap_or_default();
        Ok(Self {
            fd: crate::jail::sealed_memfd_of(&c_name, parts)?,
            sha256: String::new(),
            original: PathBuf::from(name),
        })
    }

    /// The SHA-256 (hex) of the sealed bytes: what every worker of the run loads.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// The path the library was read from, as the operator named it.
    pub fn original(&self) -> &Path {
        &self.original
    }

    /// A path to the sealed bytes in this process (for the engine's own reads: ELF checks,
    /// the client-request scan, symbolisation). Never shown to people.
    pub fn here(&self) -> PathBuf {
        PathBuf::from(format!("/proc/self/fd/{}", self.fd.as_raw_fd()))
    }

    /// `text` (an error about [`SealedLibrary::here`]) naming the original path instead.
    pub(crate) fn name_here(&self, text: &str) -> String {
        text.replace(
            &self.here().display().to_string(),
            &self.original.display().to_string(),
        )
    }

    /// A read-only copy of the sealed bytes, under the original file name, in `dir` (a
    /// private scratch folder of one valgrind job): valgrind reads a library's symbols by the
    /// name it was mapped from, which a memfd's is not. Only that one job loads it.
    pub(crate) fn copy_into(&self, dir: &Path) -> std::io::Result<PathBuf> {
        use std::os::unix::fs::OpenOptionsExt;
        let to = dir.join(memfd_name(&self.original).to_string_lossy().as_ref());
        let bytes = std::fs::read(self.here())?;
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o400)
            .open(&to)?
            .write_all(&bytes)?;
        Ok(to)
    }

    pub(crate) fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

fn memfd_name(path: &Path) -> std::ffi::CString {
    let name: Vec<u8> = path
        .file_name()
        .map(|n| n.as_encoded_bytes().to_vec())
        .unwrap_or_else(|| b"library".to_vec())
        .into_iter()
        .filter(|&b| b != 0)
        .take(200)
        .collect();
    std::ffi::CString::new(name).unwrap_or_default()
}

/// The libraries of live runs, by original path: a job of a run finds the bytes the run
/// sealed at its start.
static LIVE: Mutex<Option<HashMap<PathBuf, Weak<SealedLibrary>>>> = Mutex::new(None);

/// The sealed library for `path`: the one a live run sealed, else a fresh seal (a job outside
/// a run: `hash`, `list`, a profile).
pub fn for_path(path: &Path) -> Result<Arc<SealedLibrary>, SealError> {
    let live = LIVE
        .lock()
        .ok()
        .and_then(|m| m.as_ref()?.get(path)?.upgrade());
    match live {
        Some(s) => Ok(s),
        None => SealedLibrary::seal(path).map(Arc::new),
    }
}

/// The SHA-256 of the bytes a worker of this run loads from `path` (a fresh read outside a
/// run); None when the library cannot be read.
pub(crate) fn sha256_of(path: &Path) -> Option<String> {
    for_path(path).ok().map(|s| s.sha256.clone())
}

/// The bytes an ELF loader maps of the library at `path`, read from the sealed bytes.
pub(crate) fn elf_load_bytes_of(path: &Path) -> Option<u64> {
    super::elf_load_bytes(&for_path(path).ok()?.here()).ok()
}

/// The libraries one run sealed at its start, held until it ends.
pub struct RunLibraries {
    held: Vec<Arc<SealedLibrary>>,
}

impl RunLibraries {
    /// Seals each of `paths` once. One that cannot be read is left out: its jobs fail to load
    /// it by name, as before.
    pub fn seal<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Self {
        let mut held: Vec<Arc<SealedLibrary>> = Vec::new();
        for p in paths {
            if held.iter().any(|h| h.original == p) {
                continue;
            }
            if let Ok(s) = for_path(p) {
                held.push(s);
            }
        }
        if let Ok(mut live) = LIVE.lock() {
            let map = live.get_or_insert_with(HashMap::new);
            map.retain(|_, w| w.strong_count() > 0);
            for h in &held {
                map.insert(h.original.clone(), Arc::downgrade(h));
            }
        }
        Self { held }
    }

    /// How many libraries the run holds.
    pub fn len(&self) -> usize {
        self.held.len()
    }

    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }
}

/// `text` (a worker's words) with the descriptor paths of `libraries` put back to the paths
/// the operator named.
pub(crate) fn name_originals(text: &str, libraries: &[Arc<SealedLibrary>]) -> String {
    let mut out = text.to_string();
    for (i, lib) in libraries.iter().enumerate() {
        out = out.replace(
            &worker_path(i).display().to_string(),
            &lib.original.display().to_string(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sealed_bytes_outlive_a_replaced_file_and_cannot_be_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("libx.so");
        std::fs::write(&path, b"first bytes").unwrap();
        let sealed = SealedLibrary::seal(&path).unwrap();
        std::fs::write(&path, b"second").unwrap();
        assert_eq!(std::fs::read(sealed.here()).unwrap(), b"first bytes");
        assert_eq!(
            sealed.sha256(),
            hex::encode(sha2::Sha256::digest(b"first bytes"))
        );
        let w = std::fs::OpenOptions::new().write(true).open(sealed.here());
        let refused = match w {
            Err(_) => true,
            Ok(mut f) => f.write_all(b"x").is_err(),
        };
        assert!(refused, "a sealed library took a write");
    }

    #[test]
    fn a_live_run_hands_out_the_bytes_it_sealed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("liby.so");
        std::fs::write(&path, b"run bytes").unwrap();
        let run = RunLibraries::seal([path.as_path(), path.as_path()]);
        assert_eq!(run.len(), 1);
        std::fs::write(&path, b"swapped").unwrap();
        assert_eq!(
            std::fs::read(for_path(&path).unwrap().here()).unwrap(),
            b"run bytes"
        );
        drop(run);
        assert_eq!(
            std::fs::read(for_path(&path).unwrap().here()).unwrap(),
            b"swapped"
        );
    }

    #[test]
    fn worker_paths_are_named_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("libz.so");
        std::fs::write(&path, b"z").unwrap();
        let s = Arc::new(SealedLibrary::seal(&path).unwrap());
        let text = "cannot load /proc/self/fd/9: bad";
        let named = name_originals(text, &[s]);
        assert_eq!(named, format!("cannot load {}: bad", path.display()));
    }
}
