//! Hands a worker its libraries' sealed descriptors (`plugin::sealed`) and its system-call
//! filter (`jail::syscalls`) at the fixed numbers it reads them from, and nothing else: every
//! other descriptor of the engine is close-on-exec. It runs in the forked child before exec;
//! it never opens or reads a library.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::Arc;

use crate::jail::syscalls::WORKER_FILTER_FD;
use crate::plugin::sealed::{SealedLibrary, WORKER_LIBRARY_FDS};

/// The first number a descriptor is parked at in the child while the others are placed: above
/// every fixed number, so no placing overwrites a descriptor still to be placed.
const PARKED_FROM: RawFd = 64;

/// `fd`, moved to a number at or above [`PARKED_FROM`]: a descriptor a later hook of the
/// child uses by number (a Landlock ruleset) must not sit where [`pass_descriptors`] places
/// a library or the filter, or that hook finds the library there (CI's test process, started
/// with more descriptors open, drew the ruleset at 9 and every trial worker failed to start
/// with EBADFD).
pub(super) fn above_placed(fd: OwnedFd) -> std::io::Result<OwnedFd> {
    if fd.as_raw_fd() >= PARKED_FROM {
        return Ok(fd);
    }
    nix::fcntl::fcntl(&fd, nix::fcntl::FcntlArg::F_DUPFD_CLOEXEC(PARKED_FROM))
        .map_err(std::io::Error::from)
        // SAFETY: F_DUPFD_CLOEXEC returned a new descriptor that nothing else owns.
        .map(|n| unsafe { OwnedFd::from_raw_fd(n) })
}

/// Makes the child of `cmd` find `libraries[i]` at `WORKER_LIBRARY_FDS[i]`, and `filter` (a
/// descriptor this process keeps open for its life) at `WORKER_FILTER_FD`.
pub(super) fn pass_descriptors(
    cmd: &mut Command,
    libraries: &[Arc<SealedLibrary>],
    filter: Option<RawFd>,
) {
    let mut pairs: Vec<(RawFd, RawFd)> = libraries
        .iter()
        .zip(WORKER_LIBRARY_FDS)
        .map(|(l, to)| (l.raw_fd(), to))
        .collect();
    pairs.extend(filter.map(|fd| (fd, WORKER_FILTER_FD)));
    if pairs.is_empty() {
        return;
    }
    // The hook owns the libraries: their descriptors stay open as long as the command may spawn.
    let held: Vec<Arc<SealedLibrary>> = libraries.to_vec();
    // SAFETY: the hook runs in the forked child before exec, where only async-signal-safe
    // calls are allowed; it makes only `fcntl` and `dup2` system calls on numbers taken
    // before the fork, and allocates nothing (the pairs were built in the parent).
    unsafe {
        cmd.pre_exec(move || {
            let _ = &held;
            let mut parked: [RawFd; WORKER_LIBRARY_FDS.len() + 1] =
                [-1; WORKER_LIBRARY_FDS.len() + 1];
            // Parked copies first (close-on-exec, gone after exec): a source that is also a
            // target number is read before it is overwritten.
            for (slot, &(from, _)) in parked.iter_mut().zip(&pairs) {
                let fd = libc::fcntl(from, libc::F_DUPFD_CLOEXEC, PARKED_FROM);
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                *slot = fd;
            }
            // `dup2` leaves the new number without close-on-exec: it survives exec.
            for (&fd, &(_, to)) in parked.iter().zip(&pairs) {
                if libc::dup2(fd, to) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_reads_the_sealed_bytes_at_the_fixed_number() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("liba.so");
        std::fs::write(&path, b"sealed a").unwrap();
        let a = Arc::new(SealedLibrary::seal(&path).unwrap());
        std::fs::write(&path, b"replaced").unwrap();
        let mut cmd = Command::new("head");
        cmd.args(["-c", "64"])
            .arg(crate::plugin::sealed::worker_path(0));
        pass_descriptors(&mut cmd, &[a], None);
        let out = cmd.output().unwrap();
        assert_eq!(out.stdout, b"sealed a", "{out:?}");
        // Without it, the number is not open in the child.
        let out = Command::new("head")
            .args(["-c", "64"])
            .arg(crate::plugin::sealed::worker_path(0))
            .output()
            .unwrap();
        assert!(!out.status.success());
    }
}
