//! A worker holds no privilege: in the forked child, before `exec` (so before valgrind, the
//! `no_std` companion or `cyclescope worker` run a single instruction of their own), every
//! capability is dropped — bounding set, ambient, permitted, effective and inheritable — the
//! securebits that would give root's capabilities back at `exec` are set and locked, and
//! `no_new_privs` is set. A worker started by root is not even root by uid (`identity`): it cannot
//! `chown`, `chmod` another's file, raise a hard limit, set the host name or the clock, read
//! the kernel log or open system-wide perf events.
//!
//! What the kernel offers is asked before the fork ([`Plan::for_this_process`], through the
//! `caps` crate, which allocates); [`Plan::apply`] runs after the fork in a child of a
//! multi-threaded parent, so it makes raw system calls only, allocates nothing and takes no
//! lock. A worker of root also becomes an unprivileged user there (`identity`), after the
//! bounding set is emptied and before the other sets are. Nothing the worker does for itself
//! afterwards (lowering rlimits, pinning itself, Landlock, seccomp, `PR_SET_PDEATHSIG`) needs a
//! capability.

use std::io;

use caps::{CapSet, Capability};

use super::identity::Identity;

/// Securebits set in every worker: root's uid grants no capability at `exec`, changing uids
/// keeps or gives none, no ambient capability can be raised, each locked so the candidate
/// cannot clear it.
const SECUREBITS: libc::c_int = libc::SECBIT_NOROOT
    | libc::SECBIT_NOROOT_LOCKED
    | libc::SECBIT_NO_SETUID_FIXUP
    | libc::SECBIT_NO_SETUID_FIXUP_LOCKED
    | libc::SECBIT_KEEP_CAPS_LOCKED
    | libc::SECBIT_NO_CAP_AMBIENT_RAISE
    | libc::SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;

/// `_LINUX_CAPABILITY_VERSION_3`: 64-bit sets, in two 32-bit words.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// Capability numbers fit in this many slots (the kernel has 41 today).
const MAX_CAPS: usize = 64;

/// `struct __user_cap_header_struct` (libc does not define it).
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

/// `struct __user_cap_data_struct`.
#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// What the child drops, decided before the fork.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan {
    /// The capabilities this kernel knows, by number (the bounding set to empty).
    bounding: [u8; MAX_CAPS],
    known: usize,
    /// Whether this process may change its bounding set and securebits (`CAP_SETPCAP`); a
    /// process without it holds nothing to drop there, and `no_new_privs` keeps it so.
    setpcap: bool,
    /// The unprivileged user to become (root's workers only, `identity`).
    identity: Option<Identity>,
}

impl Plan {
    /// Asks the kernel (before the fork: this allocates) what a worker of this process drops.
    pub(crate) fn for_this_process() -> Self {
        let mut bounding = [0u8; MAX_CAPS];
        let mut known = 0;
        for cap in caps::runtime::thread_all_supported() {
            if known < MAX_CAPS {
                bounding[known] = cap.index();
                known += 1;
            }
        }
        let setpcap =
            caps::has_cap(None, CapSet::Effective, Capability::CAP_SETPCAP).unwrap_or(false);
        Self {
            bounding,
            known,
            setpcap,
            identity: None,
        }
    }

    /// [`Plan::for_this_process`] for a worker: it also becomes an unprivileged user when
    /// this process is root ([`Identity::for_workers`]).
    pub(crate) fn for_workers() -> Self {
        Self {
            identity: Identity::for_workers(),
            ..Self::for_this_process()
        }
    }

    /// The plan for a child that first makes a user namespace of its own (`namespaces`):
    /// there it holds `CAP_SETPCAP`, so it empties its bounding set and locks its securebits
    /// too.
    pub(crate) fn in_own_user_namespace(self, own: bool) -> Self {
        Self {
            setpcap: self.setpcap || own,
            ..self
        }
    }

    /// The user the child becomes, if any.
    pub(crate) fn identity(&self) -> Option<Identity> {
        self.identity
    }

    /// Drops every privilege of the calling process. Runs in the forked child: raw system
    /// calls only, no allocation, no lock.
    pub(crate) fn apply(&self) -> io::Result<()> {
        if self.setpcap {
            // Securebits and the bounding set first: both need CAP_SETPCAP, dropped below.
            prctl(libc::PR_SET_SECUREBITS, SECUREBITS as libc::c_ulong, 0)?;
            for &cap in &self.bounding[..self.known] {
                prctl(libc::PR_CAPBSET_DROP, cap.into(), 0)?;
            }
        }
        // While CAP_SETUID and CAP_SETGID are still effective; `NO_SETUID_FIXUP` keeps the
        // sets as they are across the switch, and capset below empties them.
        if let Some(identity) = &self.identity {
            identity.apply()?;
        }
        match prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
        ) {
            // A kernel older than 4.3 has no ambient set to clear.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {}
            other => other?,
        }
        let header = CapHeader {
            version: CAPABILITY_VERSION_3,
            pid: 0,
        };
        let empty = [CapData {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        // SAFETY: capset reads one header and two data structs of the kernel's layout
        // (version 3), both alive for the call; lowering one's own sets needs no privilege.
        if unsafe { libc::syscall(libc::SYS_capset, &header, empty.as_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        nix::sys::prctl::set_no_new_privs().map_err(io::Error::from)
    }
}

/// This process's securebits (`PR_GET_SECUREBITS`), None where the kernel does not say.
pub fn securebits() -> Option<libc::c_int> {
    // SAFETY: PR_GET_SECUREBITS takes no pointer; it returns the bits or -1.
    let bits = unsafe { libc::prctl(libc::PR_GET_SECUREBITS, 0 as libc::c_ulong) };
    (bits >= 0).then_some(bits)
}

/// One `prctl(option, arg2, arg3, 0, 0)`.
fn prctl(option: libc::c_int, arg2: libc::c_ulong, arg3: libc::c_ulong) -> io::Result<()> {
    // SAFETY: the options used here take integer arguments only and touch no memory of ours.
    if unsafe { libc::prctl(option, arg2, arg3, 0 as libc::c_ulong, 0 as libc::c_ulong) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The privileges of a process from its `/proc/<pid>/status` and its securebits: one line for
/// `check`, "no capabilities" only when every set is empty and `no_new_privs` is on.
pub fn describe(status: &str, securebits: Option<libc::c_int>) -> String {
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .map(str::trim)
    };
    let sets = ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"];
    let held: Vec<String> = sets
        .iter()
        .filter_map(|s| {
            let v = field(s)?;
            (u64::from_str_radix(v, 16).ok()? != 0).then(|| format!("{s}={v}"))
        })
        .collect();
    let nnp = field("NoNewPrivs") == Some("1");
    let locked = securebits.is_some_and(|b| b & SECUREBITS == SECUREBITS);
    // The effective uid: root's workers run as an unprivileged user (`identity`).
    let uid = match field("Uid").and_then(|u| u.split_whitespace().nth(1)) {
        Some("0") => ", uid 0 (root's files are open to it)".to_string(),
        Some(uid) => format!(", uid {uid}"),
        None => String::new(),
    };
    match (held.is_empty(), nnp) {
        (true, true) => format!(
            "no capabilities (bounding, permitted, effective, inheritable and ambient sets \
             empty), no_new_privs{}{uid}",
            if locked { ", securebits locked" } else { "" }
        ),
        _ => format!(
            "capabilities NOT dropped ({}{})",
            held.join(" "),
            if nnp { "" } else { " no_new_privs off" }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_capabilities_are_named() {
        let status = "CapInh:\t0000000000000000\nCapEff:\t000001ffffffffff\nNoNewPrivs:\t0\n";
        assert_eq!(
            describe(status, None),
            "capabilities NOT dropped (CapEff=000001ffffffffff no_new_privs off)"
        );
    }
}
