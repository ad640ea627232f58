//! A worker's `/tmp` of its own, and the entries of the engine's `/tmp` its job lets through.
//! The engine names some of a job's files by paths under `/tmp` (the message a `hash` job
//! reads, valgrind's scratch folder, a KAT job's output folder when the operator put it
//! there). Each such path's first component below `/tmp` is looked at before the fork (not
//! following a symbolic link, and only when this process or the workers' user owns it). The
//! child opens it again in its new mount namespace (a bind's source must lie in the caller's
//! namespace), checks it is the same file, and binds it into the fresh `/tmp` at the same
//! path. A job that names `/tmp`
//! itself, or an entry that fails those checks, keeps the engine's `/tmp` ([`Kept::Shared`]),
//! as before the private one existed: its paths still work, and the record's `observed`
//! namespaces show no mount namespace of its own.

use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The private `/tmp`: a small tmpfs anyone may write to (sticky), nothing in it runnable.
const TMP: &CStr = c"/tmp";
const TMP_OPTIONS: &CStr = c"mode=1777,size=16m";

/// What a worker's `/tmp` is.
#[derive(Debug, Default)]
pub(crate) enum Kept {
    /// The engine's own.
    #[default]
    Shared,
    /// One of its own, with these entries of the engine's bound into it.
    Private(Vec<Entry>),
}

/// One entry of the engine's `/tmp`, as seen before the fork.
#[derive(Debug)]
pub(crate) struct Entry {
    /// Its path: opened as the bind's source, then the bind's target in the new `/tmp`.
    path: CString,
    /// Its device and inode: the child binds only the file that was looked at.
    dev: u64,
    ino: u64,
    dir: bool,
}

/// At most this many entries are let through (a job names one or two).
const MAX_ENTRIES: usize = 8;

impl Kept {
    /// The private `/tmp` for a job that names `paths` (each a path, or an `--option=path`),
    /// whose entries under `/tmp` belong to one of `owners`; [`Kept::Shared`] where one
    /// cannot be let through.
    pub(crate) fn for_job<'a>(paths: impl IntoIterator<Item = &'a str>, owners: &[u32]) -> Self {
        let Some(mut tops) = paths
            .into_iter()
            .filter_map(top_under_tmp)
            .collect::<Option<Vec<PathBuf>>>()
        else {
            return Kept::Shared;
        };
        tops.sort();
        tops.dedup();
        if tops.len() > MAX_ENTRIES {
            return Kept::Shared;
        }
        let mut entries = Vec::with_capacity(tops.len());
        for top in tops {
            match Entry::open(&top, owners) {
                Some(e) => entries.push(e),
                None => return Kept::Shared,
            }
        }
        Kept::Private(entries)
    }

    /// Whether the worker gets a `/tmp` of its own (and so a mount namespace).
    pub(crate) fn is_private(&self) -> bool {
        matches!(self, Kept::Private(_))
    }

    /// In the forked child, in its new mount namespace: keeps its mounts from propagating
    /// back to the engine's, covers `/tmp` with a fresh tmpfs, and binds each entry back.
    /// Raw system calls on strings and descriptors made before the fork.
    pub(super) fn private_tmp(&self) -> io::Result<()> {
        let Kept::Private(entries) = self else {
            return Ok(());
        };
        let none = std::ptr::null();
        let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
        let mut opened: [libc::c_int; MAX_ENTRIES] = [-1; MAX_ENTRIES];
        // SAFETY: mount, mkdir, open, fstat and close read only the C strings given (live for
        // the calls; null where unused) and write only the stack `stat` given; they take
        // integers otherwise.
        unsafe {
            if libc::mount(
                none,
                c"/".as_ptr(),
                none,
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            for (e, fd) in entries.iter().zip(opened.iter_mut()) {
                *fd = libc::open(
                    e.path.as_ptr(),
                    libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                );
                let mut st: libc::stat = std::mem::zeroed();
                if *fd < 0 || libc::fstat(*fd, &mut st) != 0 {
                    return Err(io::Error::last_os_error());
                }
                if st.st_dev != e.dev || st.st_ino != e.ino {
                    return Err(io::Error::from_raw_os_error(libc::ESTALE));
                }
            }
            if libc::mount(
                c"tmpfs".as_ptr(),
                TMP.as_ptr(),
                c"tmpfs".as_ptr(),
                flags,
                TMP_OPTIONS.as_ptr().cast(),
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            for (e, &fd) in entries.iter().zip(opened.iter()) {
                let made = if e.dir {
                    libc::mkdir(e.path.as_ptr(), 0o700)
                } else {
                    let made = libc::open(
                        e.path.as_ptr(),
                        libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                        0o600,
                    );
                    if made >= 0 { libc::close(made) } else { made }
                };
                let mut source = FdPath::new();
                if made != 0
                    || libc::mount(
                        source.of(fd),
                        e.path.as_ptr(),
                        none,
                        libc::MS_BIND | libc::MS_REC,
                        std::ptr::null(),
                    ) != 0
                {
                    return Err(io::Error::last_os_error());
                }
                libc::close(fd);
            }
        }
        Ok(())
    }
}

/// `/proc/self/fd/<n>` as a C string, written on the stack (the child may not allocate).
struct FdPath {
    bytes: [u8; 32],
}

impl FdPath {
    const PREFIX: &[u8] = b"/proc/self/fd/";

    fn new() -> Self {
        Self { bytes: [0; 32] }
    }

    /// The path of descriptor `fd` (not negative), NUL-terminated.
    fn of(&mut self, fd: libc::c_int) -> *const libc::c_char {
        self.bytes[..Self::PREFIX.len()].copy_from_slice(Self::PREFIX);
        let mut digits = [0u8; 10];
        let (mut n, mut len) = (fd.max(0) as u32, 0);
        loop {
            digits[len] = b'0' + (n % 10) as u8;
            len += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        for (i, d) in digits[..len].iter().rev().enumerate() {
            self.bytes[Self::PREFIX.len() + i] = *d;
        }
        self.bytes[Self::PREFIX.len() + len] = 0;
        self.bytes.as_ptr().cast()
    }
}

impl Entry {
    /// `top` opened without following a link, when it is a folder or a regular file that
    /// one of `owners` owns.
    fn open(top: &Path, owners: &[u32]) -> Option<Self> {
        let meta = std::fs::symlink_metadata(top).ok()?;
        let kind = meta.file_type();
        if !(kind.is_dir() || kind.is_file()) || !owners.contains(&meta.uid()) {
            return None;
        }
        Some(Self {
            path: CString::new(top.as_os_str().as_encoded_bytes()).ok()?,
            dev: meta.dev(),
            ino: meta.ino(),
            dir: kind.is_dir(),
        })
    }
}

/// The entry of `/tmp` a path (or an `--option=path`) lies in, `/tmp/<first component>`:
/// None for one outside `/tmp`, Some(None) for `/tmp` itself, which cannot be let through.
fn top_under_tmp(arg: &str) -> Option<Option<PathBuf>> {
    let path = match arg.find("=/tmp") {
        Some(at) if arg.starts_with('-') => &arg[at + 1..],
        _ => arg,
    };
    let rest = path.strip_prefix("/tmp")?;
    if !(rest.is_empty() || rest.starts_with('/')) {
        return None;
    }
    let first = rest.split('/').find(|c| !c.is_empty() && *c != ".");
    Some(match first {
        Some("..") | None => None,
        Some(name) => Some(Path::new("/tmp").join(name)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_under_tmp_keeps_its_first_component_and_nothing_else_is_kept() {
        let top = |a| top_under_tmp(a).map(|p| p.map(|p| p.display().to_string()));
        let kept = |p: &str| Some(Some(p.to_string()));
        assert_eq!(top("/tmp/.tmpAb/kat/out"), kept("/tmp/.tmpAb"));
        assert_eq!(top("--out-dir=/tmp/x/y"), kept("/tmp/x"));
        assert_eq!(top("--file=/tmp/msg"), kept("/tmp/msg"));
        assert_eq!(top("/tmp/./msg"), kept("/tmp/msg"));
        assert_eq!(top("/tmp"), Some(None));
        assert_eq!(top("/tmp/../etc"), Some(None));
        assert_eq!(top("/tmpfoo/x"), None);
        assert_eq!(top("/var/tmp/x"), None);
        assert_eq!(top("/proc/self/fd/9"), None);
        assert_eq!(top("256"), None);
    }

    #[test]
    fn a_descriptors_path_is_written_without_allocating() {
        let mut p = FdPath::new();
        for fd in [0, 7, 64, 1234567890] {
            // SAFETY: `of` returns a pointer to its own NUL-terminated bytes.
            let s = unsafe { CStr::from_ptr(p.of(fd)) };
            assert_eq!(s.to_str().unwrap(), format!("/proc/self/fd/{fd}"));
        }
    }

    #[test]
    fn a_link_or_another_users_entry_keeps_the_engines_tmp() {
        let me = nix::unistd::geteuid().as_raw();
        let dir = tempfile::Builder::new()
            .prefix("cs-kept")
            .tempdir_in("/tmp")
            .unwrap();
        let path = dir.path().display().to_string();
        let inside = format!("{path}/out");
        assert!(Kept::for_job([inside.as_str()], &[me]).is_private());
        // Owned by neither owner given.
        assert!(!Kept::for_job([inside.as_str()], &[me + 1]).is_private());
        // A link planted in /tmp is not followed.
        let link = std::path::PathBuf::from(format!("{path}-link"));
        std::os::unix::fs::symlink(dir.path(), &link).unwrap();
        let via_link = format!("{}/out", link.display());
        let kept = Kept::for_job([via_link.as_str()], &[me]);
        std::fs::remove_file(&link).unwrap();
        assert!(!kept.is_private());
        // `/tmp` itself, and nothing under it at all.
        assert!(!Kept::for_job(["/tmp"], &[me]).is_private());
        assert!(Kept::for_job(["256", "--bits=8"], &[me]).is_private());
    }
}
