//! The namespaces a worker gets of its own: a network namespace (no interface but a loopback
//! that is down: no network at all), an IPC namespace (no System V object or POSIX message
//! queue of anyone else), a UTS namespace (its host name is its own), and, for a worker the
//! engine hands no path under `/tmp`, a mount namespace with a fresh, empty `/tmp` of its own
//! (nothing it leaves there is seen outside, nothing of others' is seen inside). Made in the
//! forked child before `exec`, while it still holds `CAP_SYS_ADMIN`, so they hold for
//! valgrind too.
//!
//! Only a process with `CAP_SYS_ADMIN` (root) makes them: decided before the fork
//! ([`Namespaces::for_workers`]); the child makes one `unshare` call and, for `/tmp`, two
//! `mount` calls on static strings. Without the capability the worker runs in the engine's
//! namespaces, and records say so (`observed`: the namespaces read from outside). Left out:
//! a private `/tmp` for the workers handed paths there (valgrind's scratch folder, the
//! message of `hash`), a user namespace for workers of other users, and a PID namespace (it
//! takes a second fork, and the engine watches its worker by its pid from outside).

use std::io;

/// What the worker unshares.
const FLAGS: libc::c_int = libc::CLONE_NEWNET | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS;

/// The private `/tmp`: a small tmpfs anyone may write to (sticky), nothing in it runnable.
const TMP: &std::ffi::CStr = c"/tmp";
const TMP_OPTIONS: &std::ffi::CStr = c"mode=1777,size=16m";

/// The namespaces a worker of this process gets, decided before the fork.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Namespaces {
    flags: libc::c_int,
}

impl Namespaces {
    /// New network, IPC and UTS namespaces where this process may make them (it holds
    /// `CAP_SYS_ADMIN`), none otherwise; with `private_tmp` (the worker is handed no path
    /// under `/tmp`) a mount namespace with a `/tmp` of its own too.
    pub(crate) fn for_workers(private_tmp: bool) -> Self {
        let admin = caps::has_cap(
            None,
            caps::CapSet::Effective,
            caps::Capability::CAP_SYS_ADMIN,
        )
        .unwrap_or(false);
        let tmp = private_tmp && std::path::Path::new("/tmp").is_dir();
        Self {
            flags: match (admin, tmp) {
                (false, _) => 0,
                (true, false) => FLAGS,
                (true, true) => FLAGS | libc::CLONE_NEWNS,
            },
        }
    }

    /// Moves the calling process into its new namespaces. Runs in the forked child: one
    /// system call, no allocation.
    pub(crate) fn apply(&self) -> io::Result<()> {
        // SAFETY: unshare takes flags only.
        if self.flags != 0 && unsafe { libc::unshare(self.flags) } != 0 {
            return Err(io::Error::last_os_error());
        }
        if self.flags & libc::CLONE_NEWNS == 0 {
            return Ok(());
        }
        let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
        // SAFETY: mount reads the static C strings given (null where unused); the first call
        // keeps the new namespace's mounts from propagating back to the engine's, the second
        // covers `/tmp` in this namespace only (the working folder, if under it, stays open).
        unsafe {
            let none = std::ptr::null();
            if libc::mount(
                none,
                c"/".as_ptr(),
                none,
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) != 0
                || libc::mount(
                    c"tmpfs".as_ptr(),
                    TMP.as_ptr(),
                    c"tmpfs".as_ptr(),
                    flags,
                    TMP_OPTIONS.as_ptr().cast(),
                ) != 0
            {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// Whether `cmd`'s worker may have a `/tmp` of its own: nothing it is handed lies under a
/// temporary folder (valgrind, which is handed its scratch folder there, never has).
pub(super) fn private_tmp(cmd: &super::WorkerCommand) -> bool {
    let temp = std::env::temp_dir().display().to_string();
    cmd.launcher.is_none()
        && !cmd
            .args
            .iter()
            .any(|a| a.contains("/tmp") || a.contains(temp.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_gives_its_workers_network_ipc_and_uts_namespaces() {
        if nix::unistd::geteuid().is_root() {
            assert_eq!(Namespaces::for_workers(false).flags, FLAGS);
            let with_tmp = Namespaces::for_workers(true).flags;
            assert_eq!(with_tmp, FLAGS | libc::CLONE_NEWNS);
        }
    }
}
