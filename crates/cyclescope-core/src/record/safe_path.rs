//! Paths inside a run directory. Every file cyclescope writes or reads there is named by a
//! path relative to the run directory; this module makes sure such a path stays inside it (no
//! absolute part, no `..`, no symbolic link on the way, whatever a name or a planted link
//! says), and that the run directory is still the one the run opened (a run whose folder was
//! deleted or replaced must fail, not recreate it and report success). It never creates,
//! writes or deletes anything itself.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// Why a path inside a run directory cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    #[error("{rel} would lead outside the run directory {root}")]
    Escapes { root: PathBuf, rel: PathBuf },
    #[error("{path} is a symbolic link; links in a run directory are not followed")]
    Symlink { path: PathBuf },
    #[error("{path} is not a regular file")]
    NotRegular { path: PathBuf },
    #[error("{path} is not a directory")]
    NotADirectory { path: PathBuf },
    #[error("{path} is larger than {limit} bytes, more than any file of a run directory")]
    TooLarge { path: PathBuf, limit: u64 },
    #[error("{path} does not exist")]
    Missing { path: PathBuf },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the run directory {root} was deleted or replaced while this run was writing it; \
         nothing more is written there"
    )]
    Vanished { root: PathBuf },
}

impl PathError {
    pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> PathError {
        let path = path.to_path_buf();
        move |source| {
            if source.kind() == std::io::ErrorKind::NotFound {
                PathError::Missing { path }
            } else {
                PathError::Io { path, source }
            }
        }
    }
}

/// `root/rel` (`root` itself for an empty `rel`), after checking that `rel` is a plain relative path and that no part of it that
/// exists already is a symbolic link (the last part may be missing: it is about to be
/// written, or the caller reports it missing). Directories still to be created are created by
/// the writer as real directories.
pub(crate) fn inside(root: &Path, rel: &Path) -> Result<PathBuf, PathError> {
    let plain = rel.components().all(|c| matches!(c, Component::Normal(_)));
    if !plain {
        return Err(PathError::Escapes {
            root: root.to_path_buf(),
            rel: rel.to_path_buf(),
        });
    }
    let mut path = root.to_path_buf();
    let parts: Vec<Component> = rel.components().collect();
    for (i, part) in parts.iter().enumerate() {
        path.push(part);
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => return Err(PathError::Symlink { path }),
            Ok(m) if i + 1 < parts.len() && !m.is_dir() => {
                return Err(PathError::NotADirectory { path });
            }
            Ok(_) => {}
            // Nothing below a missing part can be a link.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
            Err(e) => return Err(PathError::Io { path, source: e }),
        }
    }
    Ok(root.join(rel))
}

/// Checks that `root/<lock_name>` is still the file `lock` has open: if the run directory was
/// deleted (or deleted and made again) since the run locked it, it is not. Called before
/// every write of a record, the campaign or build.json.
pub(crate) fn still_locked(root: &Path, lock_name: &str, lock: &File) -> Result<(), PathError> {
    let vanished = || PathError::Vanished {
        root: root.to_path_buf(),
    };
    let held = lock.metadata().map_err(|_| vanished())?;
    let on_disk = std::fs::symlink_metadata(root.join(lock_name)).map_err(|_| vanished())?;
    if held.nlink() == 0 || (held.dev(), held.ino()) != (on_disk.dev(), on_disk.ino()) {
        return Err(vanished());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_leave_the_root_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for rel in ["../x", "/etc/passwd", "records/../../x", "./x"] {
            let err = inside(dir.path(), Path::new(rel)).unwrap_err();
            assert!(matches!(err, PathError::Escapes { .. }), "{rel}: {err}");
        }
        let ok = inside(dir.path(), Path::new("records/c/l__hash_32.json")).unwrap();
        assert_eq!(ok, dir.path().join("records/c/l__hash_32.json"));
    }

    #[test]
    fn a_planted_link_on_the_way_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("records")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("records/c")).unwrap();
        let err = inside(dir.path(), Path::new("records/c/x.json")).unwrap_err();
        assert!(matches!(err, PathError::Symlink { .. }), "{err}");
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("records/y.json")).unwrap();
        let err = inside(dir.path(), Path::new("records/y.json")).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
    }

    #[test]
    fn a_deleted_or_replaced_run_directory_is_noticed() {
        let parent = tempfile::tempdir().unwrap();
        let root = parent.path().join("run");
        std::fs::create_dir(&root).unwrap();
        let lock = File::create(root.join(".lock")).unwrap();
        still_locked(&root, ".lock", &lock).unwrap();
        std::fs::remove_dir_all(&root).unwrap();
        let err = still_locked(&root, ".lock", &lock).unwrap_err();
        assert!(matches!(err, PathError::Vanished { .. }), "{err}");
        std::fs::create_dir(&root).unwrap();
        File::create(root.join(".lock")).unwrap();
        assert!(still_locked(&root, ".lock", &lock).is_err());
    }
}
