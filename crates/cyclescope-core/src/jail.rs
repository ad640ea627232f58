//! What confines a process that runs code cyclescope does not trust (a candidate library's
//! worker, valgrind around it, a compiler reading a submission's sources), in one place, used
//! by the workers (`worker`) and the build (`build::jail`) alike:
//! - `cgroup` bounds a process and everything it starts together, from outside;
//! - `identity` is the unprivileged user root's workers and compilers become;
//! - `privileges` drops every capability and sets `no_new_privs` and the securebits;
//! - `namespaces` gives a process no network, IPC and host name of its own, and a `/tmp` of
//!   its own (in a user namespace when the engine is not root);
//! - `landlock` is the workers' one Landlock ruleset, and what a record says of it;
//! - `reads` is what a worker may read (Landlock);
//! - `syscalls` is the one list of system calls a worker may make, and valgrind's.

pub mod cgroup;
pub mod identity;
pub mod landlock;
pub(crate) mod namespaces;
pub mod privileges;
pub mod reads;
pub mod syscalls;

use std::ffi::CStr;
use std::io::Write;
use std::os::fd::OwnedFd;

use nix::fcntl::{FcntlArg, SealFlag, fcntl};
use nix::sys::memfd::{MFdFlags, memfd_create};

/// `bytes` in a memfd named `name` (close-on-exec), sealed: no process holding it, a worker
/// included, can change, grow or shrink it, or lift the seals.
pub fn sealed_memfd(name: &CStr, bytes: &[u8]) -> std::io::Result<OwnedFd> {
    let fd = memfd_create(name, MFdFlags::MFD_CLOEXEC | MFdFlags::MFD_ALLOW_SEALING)?;
    let mut file = std::fs::File::from(fd);
    file.write_all(bytes)?;
    let seals = SealFlag::F_SEAL_WRITE
        | SealFlag::F_SEAL_SHRINK
        | SealFlag::F_SEAL_GROW
        | SealFlag::F_SEAL_SEAL;
    fcntl(&file, FcntlArg::F_ADD_SEALS(seals))?;
    Ok(OwnedFd::from(file))
}
