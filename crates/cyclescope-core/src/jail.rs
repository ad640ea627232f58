//! What confines a process that runs code cyclescope does not trust (a candidate library's
//! worker, valgrind around it, a compiler reading a submission's sources), in one place, used
//! by the workers (`worker`) and the build (`build::jail`) alike:
//! - `cgroup` bounds a process and everything it starts together, from outside;
//! - `identity` is the unprivileged user root's workers and compilers become;
//! - `privileges` drops every capability and sets `no_new_privs` and the securebits;
//! - `namespaces` gives a process no network, IPC and host name of its own, and a `/tmp` of
//!   its own (in a user namespace when the engine is not root);
//! - `limits` lowers a process's resource limits, never to be raised again;
//! - `landlock` is the workers' one Landlock ruleset, and what a record says of it;
//! - `reads` is what a worker may read (Landlock);
//! - `syscalls` is the one list of system calls a worker may make, and valgrind's.

pub mod cgroup;
pub mod identity;
pub mod landlock;
pub(crate) mod limits;
pub(crate) mod namespaces;
pub mod privileges;
pub mod reads;
pub mod syscalls;

use std::ffi::CStr;
use std::io::Write;
use std::os::fd::OwnedFd;

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, SealFlag, fcntl};
use nix::sys::memfd::{MFdFlags, memfd_create};

/// `bytes` in a memfd named `name` (close-on-exec), sealed: no process holding it, a worker
/// included, can change, grow or shrink it, or lift the seals.
pub fn sealed_memfd(name: &CStr, bytes: &[u8]) -> std::io::Result<OwnedFd> {
    sealed_memfd_of(name, &[bytes])
}

/// [`sealed_memfd`] of `parts` one after another (no copy of them joined).
pub fn sealed_memfd_of(name: &CStr, parts: &[&[u8]]) -> std::io::Result<OwnedFd> {
    let fd = memfd_create(name, MFdFlags::MFD_CLOEXEC | MFdFlags::MFD_ALLOW_SEALING)?;
    // Buffered: a table is thousands of small parts (a record's head, then its message), each
    // a system call of its own otherwise.
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::from(fd));
    let said = |e: std::io::Error| std::io::Error::new(e.kind(), format!("writing: {e}"));
    for part in parts {
        out.write_all(part).map_err(said)?;
    }
    let file = out.into_inner().map_err(|e| said(e.into_error()))?;
    seal(&file)?;
    Ok(OwnedFd::from(file))
}

/// How often [`seal`] asks again, and how long it waits before each.
const SEAL_TRIES: u32 = 40;
const SEAL_PAUSE: std::time::Duration = std::time::Duration::from_millis(50);

/// Seals `file` against every change. The kernel refuses (EBUSY) while a page of the file is
/// still referenced past its own wait of about 150 ms (a page in flight on a loaded machine;
/// a writable shared mapping until it goes): asked again for up to two seconds.
fn seal(file: &std::fs::File) -> std::io::Result<()> {
    let seals = SealFlag::F_SEAL_WRITE
        | SealFlag::F_SEAL_SHRINK
        | SealFlag::F_SEAL_GROW
        | SealFlag::F_SEAL_SEAL;
    let mut tries = 1;
    loop {
        match fcntl(file, FcntlArg::F_ADD_SEALS(seals)) {
            Ok(_) => return Ok(()),
            Err(Errno::EBUSY | Errno::EINTR) if tries < SEAL_TRIES => {
                tries += 1;
                std::thread::sleep(SEAL_PAUSE);
            }
            Err(e) => {
                let e = std::io::Error::from(e);
                let text = format!("sealing (asked {tries} time(s)): {e}");
                return Err(std::io::Error::new(e.kind(), text));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What defines a confinement: a Landlock ruleset, a seccomp rule, namespaces, securebits,
    /// capabilities, identities, resource limits, the Landlock restriction itself.
    const DEFINITIONS: [&str; 14] = [
        "Ruleset::default()",
        "SeccompFilter::new",
        "SeccompRule::new",
        "SeccompCondition::new",
        "CLONE_NEW",
        "PR_SET_SECUREBITS",
        "caps::clear",
        "caps::drop",
        "caps::set",
        "unshare(",
        "PR_CAPBSET_DROP",
        "setrlimit(",
        "landlock_restrict_self",
        "setresuid",
    ];

    fn sources(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// A file the kernel will not seal yet (a writable shared mapping of it) is sealed once
    /// the mapping goes, within the pauses; one still mapped after them is an error that says
    /// so. Without asking again, the first would fail.
    #[test]
    fn sealing_waits_out_a_busy_file_and_then_says_why() {
        use nix::sys::mman::{MapFlags, ProtFlags, mmap, munmap};
        use std::num::NonZeroUsize;
        let mapped = |name: &CStr| {
            let fd = memfd_create(name, MFdFlags::MFD_CLOEXEC | MFdFlags::MFD_ALLOW_SEALING)
                .expect("memfd");
            let file = std::fs::File::from(fd);
            file.set_len(4096).expect("size");
            let len = NonZeroUsize::new(4096).expect("length");
            let rw = ProtFlags::PROT_READ | ProtFlags::PROT_WRITE;
            // SAFETY: a fresh mapping of a file this test owns, at an address the kernel picks;
            // nothing reads or writes through it, and it is unmapped once, below.
            let at = unsafe { mmap(None, len, rw, MapFlags::MAP_SHARED, &file, 0) }.expect("mmap");
            (file, at.as_ptr() as usize)
        };
        let (file, at) = mapped(c"busy-then-free");
        let unmap = move |at: usize| {
            let at = std::ptr::NonNull::new(at as *mut std::ffi::c_void).expect("address");
            // SAFETY: the mapping made above, 4096 bytes, unmapped once; nothing uses it.
            unsafe { munmap(at, 4096) }.expect("munmap");
        };
        let freed = std::thread::spawn(move || {
            std::thread::sleep(SEAL_PAUSE * 4);
            unmap(at);
        });
        seal(&file).expect("sealed once the mapping went");
        freed.join().unwrap();
        let sealed = fcntl(&file, FcntlArg::F_GET_SEALS).expect("seals");
        assert_eq!(
            sealed & SealFlag::F_SEAL_WRITE.bits(),
            SealFlag::F_SEAL_WRITE.bits()
        );

        let (file, at) = mapped(c"busy");
        let e = seal(&file).expect_err("still mapped");
        unmap(at);
        assert_eq!(e.raw_os_error(), None);
        assert!(
            e.to_string()
                .contains(&format!("asked {SEAL_TRIES} time(s)")),
            "{e}"
        );
        assert_eq!(e.kind(), std::io::ErrorKind::ResourceBusy, "{e}");
    }

    /// The jail is defined in this room alone: no other module of the engine or the binary
    /// makes a ruleset, a filter, a namespace, an identity or a limit of its own (the trial
    /// worker's crate applies what the engine hands it, and cannot link this crate).
    #[test]
    fn every_confinement_is_defined_here_and_nowhere_else() {
        let core = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let (mut files, mut found) = (Vec::new(), Vec::new());
        sources(&core.join("src"), &mut files);
        sources(&core.join("../../src"), &mut files);
        let (room, door) = (core.join("src/jail"), core.join("src/jail.rs"));
        assert!(files.len() > 100 && files.iter().any(|f| f.starts_with(&room)));
        for file in files
            .iter()
            .filter(|f| !f.starts_with(&room) && **f != door)
        {
            let text = std::fs::read_to_string(file).unwrap();
            for (n, line) in text.lines().enumerate() {
                let code = line.trim_start();
                if code.starts_with("//") {
                    continue;
                }
                for d in DEFINITIONS.iter().filter(|d| code.contains(*d)) {
                    found.push(format!("{}:{}: {d}", file.display(), n + 1));
                }
            }
        }
        assert!(found.is_empty(), "defined outside jail/: {found:#?}");
    }
}
