//! Files and folders cyclescope writes must be this user's own. cyclescope often runs as root,
//! and folders such as `/tmp` let any user plant a name first: a symbolic link there would
//! make root truncate and rewrite whatever it points to, and a folder another user owns can be
//! changed under cyclescope at any moment. This module opens lock files without following a
//! link and refuses any that is not a regular file of this user's with one link, makes the
//! private lock folder 0700 and refuses it when it is not, and refuses a run folder that is a
//! link or another user's. Each refusal names the path and what is wrong with it. It never
//! deletes or repairs what it refuses: that is the user's call.

use std::fs::File;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Why a file or folder cyclescope would write is refused.
#[derive(Debug, thiserror::Error)]
pub enum OwnedError {
    #[error(
        "{} is a symbolic link; cyclescope does not write through links here (remove it, or \
         give the folder it points to)",
        .path.display()
    )]
    Symlink { path: PathBuf },
    #[error(
        "{} is {kind}, not a regular file: it is no file cyclescope made (remove it)",
        .path.display()
    )]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error("{} is not a directory", .path.display())]
    NotADirectory { path: PathBuf },
    #[error(
        "{} belongs to uid {owner}, not to this user (uid {me}): another user could change it \
         under cyclescope (remove it, or choose a folder of your own)",
        .path.display()
    )]
    OtherOwner { path: PathBuf, owner: u32, me: u32 },
    #[error(
        "{} is open to other users (mode {mode:04o}); it must be private (chmod 700 it, or \
         remove it)",
        .path.display()
    )]
    OpenToOthers { path: PathBuf, mode: u32 },
    #[error(
        "{} has {links} hard links; a file cyclescope writes has one, or another name could \
         make it write elsewhere (remove it)",
        .path.display()
    )]
    HardLinked { path: PathBuf, links: u64 },
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> OwnedError {
    let path = path.to_path_buf();
    move |source| {
        // O_NOFOLLOW on a link fails with ELOOP (or EACCES, in a sticky folder whose link is
        // another user's): say what it is.
        let is_link = || std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
        if source.raw_os_error() == Some(libc::ELOOP) || is_link() {
            OwnedError::Symlink { path }
        } else {
            OwnedError::Io { path, source }
        }
    }
}

fn me() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// Opens (creating it 0644 if missing) the lock file at `path` for reading and writing, never
/// through a link and never truncated here: the caller truncates only once this returned, so
/// only a regular file of this user's with one name is ever rewritten.
pub(crate) fn open_lock_file(path: &Path) -> Result<File, OwnedError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        // O_NONBLOCK: a planted FIFO or device must not hold the open; it is refused below.
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)
        .map_err(io(path))?;
    let meta = file.metadata().map_err(io(path))?;
    check_own_file(path, &meta)?;
    Ok(file)
}

/// Opens a lock file only to read it (a holder's note), never through a link: None when it
/// is missing, a link or not a regular file.
pub(crate) fn open_to_read(path: &Path) -> Option<File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    file.metadata().ok()?.is_file().then_some(file)
}

fn check_own_file(path: &Path, meta: &std::fs::Metadata) -> Result<(), OwnedError> {
    let ft = meta.file_type();
    if !ft.is_file() {
        let kind = if ft.is_dir() {
            "a directory"
        } else {
            "a FIFO, socket or device"
        };
        return Err(OwnedError::NotRegular {
            path: path.to_path_buf(),
            kind,
        });
    }
    if meta.uid() != me() {
        return Err(OwnedError::OtherOwner {
            path: path.to_path_buf(),
            owner: meta.uid(),
            me: me(),
        });
    }
    if meta.nlink() != 1 {
        return Err(OwnedError::HardLinked {
            path: path.to_path_buf(),
            links: meta.nlink(),
        });
    }
    Ok(())
}

/// Creates the folder `dir` (and missing parents) 0700 if it is missing, then checks it is a
/// real folder of this user's that nobody else can enter: the per-user lock folder that sits
/// in the shared temporary folder, where another user may have made the name first.
pub(crate) fn private_folder(dir: &Path) -> Result<(), OwnedError> {
    create_folder(dir, true)?;
    check_own_folder(dir, true)
}

/// Creates `dir` (and missing parents) when missing, 0700 when `private`, else as the umask
/// says; an existing one is left as it is.
pub(crate) fn create_folder(dir: &Path, private: bool) -> Result<(), OwnedError> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(if private { 0o700 } else { 0o777 })
        .create(dir)
        .map_err(|e| {
            // A dangling link there fails as "exists": say what it is.
            match std::fs::symlink_metadata(dir) {
                Ok(m) if m.file_type().is_symlink() => OwnedError::Symlink {
                    path: dir.to_path_buf(),
                },
                _ => io(dir)(e),
            }
        })
}

/// Checks that `dir` itself (not what a link there points to) is a folder owned by this user,
/// and with `private`, closed to group and others.
pub(crate) fn check_own_folder(dir: &Path, private: bool) -> Result<(), OwnedError> {
    let meta = std::fs::symlink_metadata(dir).map_err(io(dir))?;
    if meta.file_type().is_symlink() {
        return Err(OwnedError::Symlink {
            path: dir.to_path_buf(),
        });
    }
    if !meta.is_dir() {
        return Err(OwnedError::NotADirectory {
            path: dir.to_path_buf(),
        });
    }
    if meta.uid() != me() {
        return Err(OwnedError::OtherOwner {
            path: dir.to_path_buf(),
            owner: meta.uid(),
            me: me(),
        });
    }
    let mode = meta.mode() & 0o7777;
    if private && mode & 0o077 != 0 {
        return Err(OwnedError::OpenToOthers {
            path: dir.to_path_buf(),
            mode,
        });
    }
    Ok(())
}

/// Checks a folder cyclescope is about to write into (a run folder, a pages or export
/// folder): when it exists it must be a real folder of this user's, not a link; the folder
/// holding it must not be a link or a folder of another user's (root's are fine: `/tmp`), or
/// that user could swap the run folder for a link at any time. A missing folder passes: it is
/// created as this user's.
pub fn check_run_folder(dir: &Path) -> Result<(), OwnedError> {
    match std::fs::symlink_metadata(dir) {
        Ok(_) => check_own_folder(dir, false)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(dir)(e)),
    }
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => return Ok(()),
    };
    let owned_by_other = |uid: u32| uid != me() && uid != 0;
    if let Ok(m) = std::fs::symlink_metadata(parent)
        && m.file_type().is_symlink()
        && owned_by_other(m.uid())
    {
        return Err(OwnedError::Symlink {
            path: parent.to_path_buf(),
        });
    }
    if let Ok(m) = std::fs::metadata(parent)
        && owned_by_other(m.uid())
    {
        return Err(OwnedError::OtherOwner {
            path: parent.to_path_buf(),
            owner: m.uid(),
            me: me(),
        });
    }
    Ok(())
}

/// Refuses `dir` when it, or a folder on the way to it, is a symbolic link another user owns
/// (root's and this user's own are followed): through one, that user chooses where root
/// writes (a journal or cache folder of theirs pointing at a folder of root's was written
/// into). Relative paths are judged from the current folder.
fn no_link_of_others(dir: &Path) -> Result<(), OwnedError> {
    let mut here = PathBuf::new();
    for part in dir.components() {
        here.push(part);
        match std::fs::symlink_metadata(&here) {
            Ok(m) if m.file_type().is_symlink() && m.uid() != me() && m.uid() != 0 => {
                return Err(OwnedError::Symlink { path: here });
            }
            Ok(_) => {}
            // What is missing from here on is created by this user.
            Err(_) => return Ok(()),
        }
    }
    Ok(())
}

/// Creates (when missing) and checks a cache or data folder of this user's (the build cache,
/// the tuning journal's folder, the host cache): it may be reached through the user's own
/// link, but the folder itself must be this user's and writable by nobody else, or another
/// user could place a library root would load, or a file root would rewrite.
pub fn own_cache_folder(dir: &Path) -> Result<(), OwnedError> {
    no_link_of_others(dir)?;
    create_folder(dir, false)?;
    let meta = std::fs::metadata(dir).map_err(io(dir))?;
    if !meta.is_dir() {
        return Err(OwnedError::NotADirectory {
            path: dir.to_path_buf(),
        });
    }
    if meta.uid() != me() {
        return Err(OwnedError::OtherOwner {
            path: dir.to_path_buf(),
            owner: meta.uid(),
            me: me(),
        });
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(OwnedError::OpenToOthers {
            path: dir.to_path_buf(),
            mode,
        });
    }
    Ok(())
}

/// Creates the run (or pages, or export) folder `dir` as this user's, refusing a link or
/// another user's folder before and after: a link made between the check and the creation is
/// still caught before anything is written into it.
pub fn create_run_folder(dir: &Path) -> Result<(), OwnedError> {
    check_run_folder(dir)?;
    create_folder(dir, false)?;
    check_run_folder(dir)
}

/// Writes `bytes` to the file `path` in a folder of this user's (an export, a report page):
/// never through a link, and an existing file is replaced only when it is a regular file of
/// this user's with one name.
pub fn write_own_file(path: &Path, bytes: &[u8]) -> Result<(), OwnedError> {
    use std::io::Write;
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_run_folder(dir)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)
        .map_err(io(path))?;
    check_own_file(path, &file.metadata().map_err(io(path))?)?;
    file.set_len(0).map_err(io(path))?;
    file.write_all(bytes).map_err(io(path))
}

#[cfg(test)]
mod tests;
