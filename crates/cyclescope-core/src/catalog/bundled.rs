//! The bundled ICCS baselines travel inside the binary: the cdylibs `build.rs` compiled from
//! `plugins/` and the KAT manifest `kat/iccs/kat.sha256`, as bytes. Before anything loads or
//! reads one, it is written once into a content-addressed cache
//! (`<cache>/bundled/<sha256 prefix>/<file>`), so a copied or installed `cyclescope` measures a real
//! shared library through dlopen, exactly like a candidate, and every record names a file
//! whose SHA-256 is the one it reports. Also the built-in catalog of those baselines, and the
//! trial worker program (`crates/cyclescope-worker`), which is placed the same way and runs
//! from there.
//!
//! It never loads a library; it never trusts a cached file it did not check: a file at the
//! content path whose bytes differ (truncated, replaced) is written anew.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use sha2::Digest;

/// The catalog of the bundled baselines, added beside every user catalog (unless turned off).
pub(crate) const BASELINES_TOML: &str = include_str!("baselines.toml");

/// Environment variable naming the cache folder (beats `XDG_CACHE_HOME` and `HOME`).
pub const CACHE_ENV: &str = "CYCLESCOPE_CACHE_DIR";

/// One embedded file: the name `bundled:<name>` refers to, and its bytes.
struct Embedded {
    name: &'static str,
    file: &'static str,
    bytes: &'static [u8],
}

macro_rules! bundled_library {
    ($name:literal) => {
        Embedded {
            name: $name,
            file: concat!("lib", $name, ".so"),
            bytes: include_bytes!(concat!(env!("OUT_DIR"), "/bundled/lib", $name, ".so")),
        }
    };
}

const LIBRARIES: [Embedded; 3] = [
    bundled_library!("sm3hash"),
    bundled_library!("pseudohash"),
    bundled_library!("pseudoxof"),
];

/// The trial worker program `build.rs` compiled (empty where there is none).
const TRIAL_WORKER: Embedded = Embedded {
    name: "trial-worker",
    file: "cyclescope-worker",
    bytes: include_bytes!(concat!(env!("OUT_DIR"), "/companion/cyclescope-worker")),
};

const KAT_MANIFESTS: [Embedded; 1] = [Embedded {
    name: "iccs",
    file: "kat.sha256",
    bytes: include_bytes!("../../../../kat/iccs/kat.sha256"),
}];

#[derive(Debug, Clone, thiserror::Error)]
pub enum BundledError {
    #[error("no bundled {kind} named {name:?} (bundled: {known})")]
    Unknown {
        kind: &'static str,
        name: String,
        known: String,
    },
    #[error(
        "this cyclescope was built without a trial worker (no cycle counter for this \
         architecture), so it cannot measure"
    )]
    NoTrialWorker,
    #[error(
        "cannot write the bundled {file} into a cache folder ({tried}); set {CACHE_ENV} to a writable folder"
    )]
    NoCache { file: String, tried: String },
}

/// The cached file of the bundled library `name` (`sm3hash`, `pseudohash`, `pseudoxof`).
pub fn library(name: &str) -> Result<PathBuf, BundledError> {
    materialize(find(&LIBRARIES, "library", name)?)
}

/// The cached file of the bundled KAT manifest `name` (`iccs`).
pub fn kat_manifest(name: &str) -> Result<PathBuf, BundledError> {
    materialize(find(&KAT_MANIFESTS, "KAT manifest", name)?)
}

/// The cached trial worker program (`cyclescope-worker`), executable by its owner only.
pub fn trial_worker() -> Result<PathBuf, BundledError> {
    if TRIAL_WORKER.bytes.is_empty() {
        return Err(BundledError::NoTrialWorker);
    }
    materialize(&TRIAL_WORKER)
}

/// Whether `name` is a library this binary carries.
pub fn is_library(name: &str) -> bool {
    LIBRARIES.iter().any(|e| e.name == name)
}

fn find<'a>(
    set: &'a [Embedded],
    kind: &'static str,
    name: &str,
) -> Result<&'a Embedded, BundledError> {
    set.iter()
        .find(|e| e.name == name)
        .ok_or_else(|| BundledError::Unknown {
            kind,
            name: name.to_string(),
            known: set.iter().map(|e| e.name).collect::<Vec<_>>().join(", "),
        })
}

/// Writes `e` into the cache once per process and returns its path.
fn materialize(e: &'static Embedded) -> Result<PathBuf, BundledError> {
    static DONE: OnceLock<Mutex<HashMap<&'static str, PathBuf>>> = OnceLock::new();
    let done = DONE.get_or_init(Default::default);
    let mut done = done.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(p) = done.get(e.file) {
        return Ok(p.clone());
    }
    let digest = hex::encode(sha2::Sha256::digest(e.bytes));
    let mut tried = Vec::new();
    for root in cache_roots() {
        // 16 hex digits name the folder (short enough to read in a table); the whole digest is
        // checked on every use.
        let path = root.join("bundled").join(&digest[..16]).join(e.file);
        match place(&path, e.bytes, &digest).and_then(|()| allow_running(&path)) {
            Ok(()) => {
                done.insert(e.file, path.clone());
                return Ok(path);
            }
            Err(err) => tried.push(format!("{}: {err}", root.display())),
        }
    }
    Err(BundledError::NoCache {
        file: e.file.to_string(),
        tried: tried.join("; "),
    })
}

/// Where cyclescope's cache may live, best first: `$CYCLESCOPE_CACHE_DIR`,
/// `$XDG_CACHE_HOME/cyclescope`, `$HOME/.cache/cyclescope`, then a per-user folder in the
/// temporary directory (never empty). The build cache lives in the first, too.
pub(crate) fn cache_roots() -> Vec<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let mut roots = Vec::new();
    roots.extend(var(CACHE_ENV));
    roots.extend(var("XDG_CACHE_HOME").map(|d| d.join("cyclescope")));
    roots.extend(var("HOME").map(|d| d.join(".cache").join("cyclescope")));
    roots.push(std::env::temp_dir().join(format!("cyclescope-{}", nix::unistd::getuid())));
    roots
}

/// Makes `path` hold exactly `bytes`: kept when it already does, else written to a fresh
/// temporary file beside it and renamed over it (a concurrent writer of the same bytes is
/// harmless; a reader never sees a torn file).
fn place(path: &Path, bytes: &[u8], digest: &str) -> std::io::Result<()> {
    if std::fs::read(path).is_ok_and(|have| hex::encode(sha2::Sha256::digest(&have)) == digest) {
        return Ok(());
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    // Made by the check, after it refused another user's link on the way: never through one.
    check_private_owner(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Files are written owner-only (`0600`); the owner may also run them (`0700`): the trial
/// worker is executed, the libraries mapped executable by `dlopen`.
fn allow_running(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path)?.permissions().mode() & 0o777;
    if mode != 0o700 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// A cache folder must belong to this user and be writable by nobody else: a library placed
/// there by someone else would run as this user.
fn check_private_owner(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    // The folder itself must be ours: the walk below stops at the first that is not.
    crate::owned::own_cache_folder(dir).map_err(|e| std::io::Error::other(e.to_string()))?;
    let mut d = Some(dir);
    while let Some(here) = d {
        let m = std::fs::metadata(here)?;
        // Stop at the first folder that is not ours to vouch for, or that is sticky (like
        // /tmp: others may add entries there but not replace ours).
        if m.uid() != nix::unistd::getuid().as_raw() || m.mode() & 0o1000 != 0 {
            break;
        }
        if m.mode() & 0o022 != 0 {
            return Err(std::io::Error::other(format!(
                "{} is writable by other users",
                here.display()
            )));
        }
        d = here.parent();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cached_file_with_other_bytes_is_written_anew() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = b"the right bytes";
        let digest = hex::encode(sha2::Sha256::digest(bytes));
        let path = dir.path().join(&digest).join("libx.so");
        place(&path, bytes, &digest).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
        std::fs::write(&path, b"planted").unwrap();
        place(&path, bytes, &digest).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
    }

    #[test]
    fn a_folder_others_may_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = place(&open.join("d/libx.so"), b"x", "00").unwrap_err();
        assert!(err.to_string().contains("writable by other users"), "{err}");
    }

    #[test]
    fn every_bundled_name_is_known_and_others_are_not() {
        for e in &LIBRARIES {
            assert!(is_library(e.name));
            assert!(e.bytes.starts_with(b"\x7fELF"), "{} is no ELF file", e.file);
        }
        let err = library("sm4hash").unwrap_err().to_string();
        assert!(err.contains("sm3hash, pseudohash, pseudoxof"), "{err}");
    }
}
