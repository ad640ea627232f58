//! The namespaces a worker gets of its own: a network namespace (no interface but a loopback
//! that is down: no network at all), an IPC namespace (no System V object or POSIX message
//! queue of anyone else), a UTS namespace (its host name is its own), and a mount namespace
//! with a fresh `/tmp` of its own (nothing it leaves there is seen outside, nothing of others'
//! is seen inside). The entries of the engine's `/tmp` that the job names (a `hash` job's
//! message, valgrind's scratch folder, a KAT job's output folder: [`tmp::Kept`]) are bound
//! into it at the same path, and nothing else. Made in the forked child before `exec`, so
//! they hold for valgrind too.
//!
//! Root makes them directly (it holds `CAP_SYS_ADMIN`). A process that is not root makes
//! them inside a user namespace of its own, where the kernel allows unprivileged ones
//! (found out once, [`user_namespaces_allowed`]): the worker is mapped to its own uid and
//! gid, so it is the same user inside as outside, and the capabilities the new namespace
//! gives it are dropped before `exec` (`privileges`). Without either, the worker runs in the
//! engine's namespaces, and records say so (`observed`: the namespaces read from outside).
//!
//! A PID namespace of its own, where the worker must be the second process made in it, not the
//! first: root's comes from the spawning side ([`PidRoom`]); a process that is not root has
//! the forked child make it with the user namespace, and fork the worker into it
//! ([`ChildMade`]).

mod pid;
mod tmp;

use std::ffi::CString;
use std::io;
use std::sync::{Arc, OnceLock};

pub(crate) use pid::{ChildMade, PidRoom};
pub(crate) use tmp::Kept;

/// What every worker unshares.
const FLAGS: libc::c_int =
    libc::CLONE_NEWNET | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS | libc::CLONE_NEWNS;

/// The namespaces a worker of this process gets, decided before the fork.
#[derive(Debug, Clone)]
pub(crate) struct Namespaces {
    flags: libc::c_int,
    /// Not root: the uid and gid maps written after the user namespace is made.
    maps: Option<Arc<Maps>>,
    /// What the private `/tmp` lets through.
    kept: Arc<Kept>,
}

/// The lines a process writes into its own new user namespace's maps, made before the fork.
#[derive(Debug)]
struct Maps {
    uid: CString,
    gid: CString,
}

impl Namespaces {
    /// What this process can give its workers: new network, IPC, UTS and mount namespaces,
    /// inside a user namespace when it is not root; none where neither can be made. `kept`:
    /// the entries of `/tmp` the job names.
    pub(crate) fn for_workers(kept: Kept) -> Self {
        let admin = caps::has_cap(
            None,
            caps::CapSet::Effective,
            caps::Capability::CAP_SYS_ADMIN,
        )
        .unwrap_or(false);
        let flags = match kept.is_private() {
            true => FLAGS,
            false => FLAGS & !libc::CLONE_NEWNS,
        };
        if admin {
            return Self {
                flags,
                maps: None,
                kept: Arc::new(kept),
            };
        }
        if !user_namespaces_allowed() {
            return Self::none();
        }
        let line = |id: u32| CString::new(format!("{id} {id} 1")).expect("digits only");
        Self {
            flags: flags | libc::CLONE_NEWUSER | libc::CLONE_NEWPID,
            maps: Some(Arc::new(Maps {
                uid: line(nix::unistd::geteuid().as_raw()),
                gid: line(nix::unistd::getegid().as_raw()),
            })),
            kept: Arc::new(kept),
        }
    }

    /// No namespace of its own: the engine's.
    pub(crate) fn none() -> Self {
        Self {
            flags: 0,
            maps: None,
            kept: Arc::new(Kept::Shared),
        }
    }

    /// Whether the worker gets a user namespace of its own (and so holds, until `privileges`
    /// drops them, every capability inside it).
    pub(crate) fn makes_user_namespace(&self) -> bool {
        self.flags & libc::CLONE_NEWUSER != 0
    }

    /// Whether the forked child makes the worker's PID namespace itself (inside its user
    /// namespace), and so must fork the worker into it ([`ChildMade`]).
    pub(crate) fn makes_pid_namespace(&self) -> bool {
        self.flags & libc::CLONE_NEWPID != 0
    }

    /// Moves the calling process into its new namespaces. Runs in the forked child: raw
    /// system calls on what was made before the fork, no allocation.
    pub(crate) fn apply(&self) -> io::Result<()> {
        if self.flags == 0 {
            return Ok(());
        }
        // SAFETY: unshare takes flags only.
        if unsafe { libc::unshare(self.flags) } != 0 {
            return Err(io::Error::last_os_error());
        }
        if let Some(maps) = &self.maps {
            // The engine is not dumpable, and neither is this copy of it: its `/proc/self`
            // files then belong to root, and the maps could not be opened. Dumpable for the
            // three writes only (`exec` makes the worker dumpable in any case).
            set_dumpable(true)?;
            let written = write_file(c"/proc/self/setgroups", c"deny")
                .and_then(|()| write_file(c"/proc/self/uid_map", &maps.uid))
                .and_then(|()| write_file(c"/proc/self/gid_map", &maps.gid));
            set_dumpable(false)?;
            written?;
        }
        self.kept.private_tmp()
    }
}

/// `PR_SET_DUMPABLE`: in the forked child.
fn set_dumpable(on: bool) -> io::Result<()> {
    // SAFETY: PR_SET_DUMPABLE takes an integer and touches no memory of ours.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, libc::c_ulong::from(on), 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Writes `text` into the file at `path` (one `open`, `write`, `close`): in the forked child.
fn write_file(path: &std::ffi::CStr, text: &std::ffi::CStr) -> io::Result<()> {
    let bytes = text.to_bytes();
    // SAFETY: open reads the C string given; write reads `bytes.len()` bytes of a live
    // string; close takes the descriptor just opened.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let error = io::Error::last_os_error();
        libc::close(fd);
        if written != bytes.len() as isize {
            return Err(error);
        }
    }
    Ok(())
}

/// Whether a process of this user may make a user namespace with the others in it (kernels
/// and distributions may forbid unprivileged ones): [`user_namespace_refusal`] is None.
pub(crate) fn user_namespaces_allowed() -> bool {
    user_namespace_refusal().is_none()
}

/// Why a process of this user may not make a user namespace with the others in it, as the
/// `errno` of a forked child's try (once per process); None where it may. `EINVAL` is what a
/// process with more than one thread gets: under qemu-user every process has the emulator's
/// threads, so no worker there gets a user namespace.
pub(crate) fn user_namespace_refusal() -> Option<i32> {
    static REFUSAL: OnceLock<Option<i32>> = OnceLock::new();
    *REFUSAL.get_or_init(|| {
        // SAFETY: the child makes one system call, reads errno and exits without running any
        // destructor or touching a lock (async-signal-safe only), as a child of a threaded
        // process must.
        match unsafe { nix::unistd::fork() } {
            Ok(nix::unistd::ForkResult::Child) => unsafe {
                let code = match libc::unshare(FLAGS | libc::CLONE_NEWUSER) {
                    0 => 0,
                    _ => *libc::__errno_location(),
                };
                libc::_exit(code.clamp(0, 255))
            },
            Ok(nix::unistd::ForkResult::Parent { child }) => {
                match nix::sys::wait::waitpid(child, None) {
                    Ok(nix::sys::wait::WaitStatus::Exited(_, 0)) => None,
                    Ok(nix::sys::wait::WaitStatus::Exited(_, code)) => Some(code),
                    _ => Some(libc::ECHILD),
                }
            }
            Err(e) => Some(e as i32),
        }
    })
}
