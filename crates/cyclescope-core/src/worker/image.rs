//! The programs workers run, held open by descriptor: `cyclescope` itself (opened from
//! `/proc/self/exe` at start, so it is the image this process runs) and the bundled trial
//! worker (opened on first use, right after it is written into the cache). A worker is
//! started from `/proc/self/fd/N`, the descriptor kept open across `exec`, so a rebuild,
//! `cargo install` or a cleaned cache that replaces or deletes the file on disk mid-run does
//! not fail the jobs after it. Records keep naming the program by its path (`argv[0]` too);
//! `/proc/self/fd/N` is never shown. A program root's workers may not run from its file (one
//! only its owner may run) is held as a sealed copy in memory instead.
//!
//! It never opens a program for writing, and never gives a worker a descriptor but the one
//! it is started from (the worker closes it with every other inherited one).

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// The lowest number a program's descriptor is kept at.
const IMAGE_FD_FLOOR: RawFd = 200;

/// Every program opened so far, by the path workers know it by (held for the process's life).
static IMAGES: OnceLock<Mutex<HashMap<PathBuf, File>>> = OnceLock::new();

/// Opens this program's own image now, under the name [`super::default_exe`] gives it: done
/// at start, before anything could have replaced the file.
pub fn keep_own() {
    // Unopenable (no /proc): workers are started by path, as before.
    let _ = descriptor(&super::default_exe());
}

/// `file` as root's workers (an unprivileged user, `identity`) can run it: itself when
/// others may run it, else its bytes in a sealed memfd (which anyone may run and no one can
/// change): the bundled trial worker in the cache is its owner's alone (`0700`).
fn runnable_by_workers(file: File) -> io::Result<File> {
    use std::os::unix::fs::PermissionsExt;
    let others_run = file.metadata()?.permissions().mode() & 0o001 != 0;
    if others_run || crate::jail::identity::Identity::for_workers().is_none() {
        return Ok(file);
    }
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut &file, &mut bytes)?;
    crate::jail::sealed_memfd(c"cyclescope-worker-image", &bytes).map(File::from)
}

/// The descriptor of `exe`'s image, opened the first time it is asked for.
fn descriptor(exe: &Path) -> io::Result<RawFd> {
    let images = IMAGES.get_or_init(Default::default);
    let mut images = images.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(f) = images.get(exe) {
        return Ok(f.as_raw_fd());
    }
    // This program is opened through the kernel's link to what it runs, not the path, which
    // may already name another file.
    let source = if super::is_own_exe(exe) {
        Path::new("/proc/self/exe")
    } else {
        exe
    };
    // Opened close-on-exec (std's default): only the worker started from it inherits it. Moved
    // above the numbers a worker's own descriptors are placed at (`pass_fds`: the libraries at
    // 9 and 10, parked from 64), which would otherwise overwrite it before the exec.
    let opened = runnable_by_workers(File::open(source)?)?;
    let moved = nix::fcntl::fcntl(
        &opened,
        nix::fcntl::FcntlArg::F_DUPFD_CLOEXEC(IMAGE_FD_FLOOR),
    )
    .map_err(io::Error::from)?;
    // SAFETY: `fcntl(F_DUPFD_CLOEXEC)` just returned this new descriptor, owned by nothing else.
    let file = unsafe { <File as std::os::fd::FromRawFd>::from_raw_fd(moved) };
    let fd = file.as_raw_fd();
    images.insert(exe.to_path_buf(), file);
    Ok(fd)
}

/// A command that runs `exe`'s image: `/proc/self/fd/N`, with `exe` as `argv[0]` and the
/// descriptor kept open across `exec`. Where it cannot be opened (no `/proc`, the file is
/// gone before first use), the path itself, as before.
pub(crate) fn command(exe: &Path) -> Command {
    let Ok(fd) = descriptor(exe) else {
        return Command::new(exe);
    };
    let mut c = Command::new(format!("/proc/self/fd/{fd}"));
    use std::os::unix::process::CommandExt;
    c.arg0(exe);
    // SAFETY: runs in the forked child before exec: one fcntl on a descriptor number taken
    // before the fork, which only changes the child's own descriptor table; no allocation.
    unsafe {
        c.pre_exec(move || {
            if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `/bin/echo` copied to `exe`. Another test of this binary that forks while the copy is
    /// open for writing leaves its child holding it until that child's exec: an exec of the
    /// copy meanwhile fails with ETXTBSY, so the tests wait that out (`started`).
    fn copy_of_echo(exe: &Path) {
        std::fs::copy("/bin/echo", exe).unwrap();
    }

    /// `f` until it no longer fails with ETXTBSY (a few seconds at most).
    fn started<T>(mut f: impl FnMut() -> io::Result<T>) -> T {
        for _ in 0..200 {
            match f() {
                Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                    std::thread::sleep(std::time::Duration::from_millis(10))
                }
                r => return r.unwrap(),
            }
        }
        panic!("the copy stayed busy")
    }

    #[test]
    fn a_program_deleted_after_its_first_use_still_starts() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("prog");
        copy_of_echo(&exe);
        let run = |exe: &Path| {
            let out = started(|| command(exe).arg("hello").output());
            assert!(out.status.success(), "{out:?}");
            String::from_utf8(out.stdout).unwrap()
        };
        assert_eq!(run(&exe), "hello\n");
        std::fs::remove_file(&exe).unwrap();
        assert_eq!(run(&exe), "hello\n");
    }

    #[test]
    fn a_program_only_its_owner_may_run_still_starts_as_roots_worker() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("owners-only");
        copy_of_echo(&exe);
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o700)).unwrap();
        let mut g = started(|| {
            let mut cmd = command(&exe);
            cmd.arg("hello").stdout(std::process::Stdio::piped());
            super::super::group::Group::spawn_worker(
                &mut cmd,
                None,
                Default::default(),
                Default::default(),
            )
        });
        let mut out = String::new();
        io::Read::read_to_string(&mut g.child_mut().stdout.take().unwrap(), &mut out).unwrap();
        g.finish();
        assert_eq!(out, "hello\n");
    }
}
