//! The namespaces a worker gets of its own: a network namespace (no interface but a loopback
//! that is down: no network at all), an IPC namespace (no System V object or POSIX message
//! queue of anyone else) and a UTS namespace (its host name is its own). Made in the forked
//! child before `exec`, while it still holds `CAP_SYS_ADMIN`, so they hold for valgrind too.
//!
//! Only a process with `CAP_SYS_ADMIN` (root) makes them: decided before the fork
//! ([`Namespaces::for_workers`]); the child makes one `unshare` call. Without the capability
//! the worker runs in the engine's namespaces, and records say so (`observed`: the namespaces
//! read from outside). Left out: a mount namespace with a private `/tmp` (the jobs hand their
//! workers paths under `/tmp`: valgrind's scratch folder, the message of `hash`), a user
//! namespace for workers of other users, and a PID namespace (it takes a second fork, and
//! the engine watches its worker by its pid from outside).

use std::io;

/// What the worker unshares.
const FLAGS: libc::c_int = libc::CLONE_NEWNET | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS;

/// The namespaces a worker of this process gets, decided before the fork.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Namespaces {
    flags: libc::c_int,
}

impl Namespaces {
    /// New network, IPC and UTS namespaces where this process may make them (it holds
    /// `CAP_SYS_ADMIN`), none otherwise.
    pub(crate) fn for_workers() -> Self {
        let admin = caps::has_cap(
            None,
            caps::CapSet::Effective,
            caps::Capability::CAP_SYS_ADMIN,
        )
        .unwrap_or(false);
        Self {
            flags: if admin { FLAGS } else { 0 },
        }
    }

    /// Moves the calling process into its new namespaces. Runs in the forked child: one
    /// system call, no allocation.
    pub(crate) fn apply(&self) -> io::Result<()> {
        // SAFETY: unshare takes flags only.
        if self.flags != 0 && unsafe { libc::unshare(self.flags) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_gives_its_workers_network_ipc_and_uts_namespaces() {
        let ns = Namespaces::for_workers();
        if nix::unistd::geteuid().is_root() {
            assert_eq!(ns.flags, FLAGS);
        }
    }
}
