//! The compiler's jail. A submission's sources steer the compiler (`#include "/etc/shadow"`,
//! `.incbin`, a macro that expands without end), so every compiler run is confined, in the
//! forked child before `exec` (it holds for `cc1`, `as` and `ld` alike): a control group of
//! its own (`jail::cgroup`) whose memory and process limits bound the whole compiler run from
//! outside, a network namespace of its own where the kernel allows one, an address-space
//! limit (RLIMIT_AS) and a CPU-time limit (RLIMIT_CPU), every capability dropped and
//! `no_new_privs` (`jail::privileges`), and a Landlock ruleset: read and run beneath the
//! toolchain and the submission's folders only, write beneath the output folder and a
//! private temporary folder only. When cyclescope runs as root, the compiler is not root
//! either: it becomes the workers' unprivileged user ([`Identity::for_workers`]), and reads
//! a private copy of the submission's files (`stage`) rather than the operator's folders,
//! which that user may not even pass.
//!
//! The rlimits are the process's own and are not enough alone: a fresh CI machine was seen
//! running the jailed compiler with RLIMIT_AS unlimited although the hook had set it (the
//! CPU limit set next to it held), so the memory bound that counts is the group's, which no
//! process inside can change.
//!
//! What the kernel offers is found out once ([`Jail::for_this_process`]); its gaps are said
//! once per build ([`Jail::gaps`]), never silently skipped. The ruleset is created before the
//! fork (the `landlock` crate allocates); the child only makes raw system calls on numbers
//! and descriptors made before, allocating nothing and taking no lock.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use report::{CompilerUser, JailGap};

use crate::jail::cgroup::{self, Cgroup, CgroupLimits};
use crate::jail::identity::Identity;
use crate::jail::limits;
use crate::jail::namespaces::{ChildMade, Kept, Namespaces};
use crate::jail::privileges::Plan;

mod report;

/// The compiler's address-space limit when neither `--max-compiler-memory` nor the config
/// sets one: a normal build of a hash function takes a few hundred MiB at most.
pub const DEFAULT_MEMORY_MIB: u64 = 2048;

/// Folders and files of the system a compiler reads and runs from (those that exist are
/// used): its install prefix on Debian (`/usr`, with `/bin` and `/lib` linked into it), the
/// loader's cache, and the devices it opens.
const SYSTEM_READABLE: [&str; 8] = [
    "/usr",
    "/bin",
    "/lib",
    "/lib32",
    "/lib64",
    "/etc/ld.so.cache",
    "/dev/urandom",
    "/dev/zero",
];

/// Processes one compiler run may have at once (driver, cc1, as, collect2, ld and a few).
const COMPILER_PIDS: u64 = 64;

/// How every compiler run of one build is confined.
#[derive(Debug, Clone)]
pub(crate) struct Jail {
    plan: Plan,
    memory_bytes: u64,
    cpu_seconds: u64,
    new_network: bool,
    landlock: bool,
    cgroup: bool,
    gaps: Vec<JailGap>,
    /// Where the compiler itself lives (its install prefix), readable beside the system's.
    prefix: Option<PathBuf>,
}

impl Jail {
    /// Asks the kernel what it offers this process; `memory_mib` per compiler process, CPU
    /// time up to `limit`, the compiler `cc` (its install prefix stays readable).
    pub(crate) fn for_this_process(cc: &str, memory_mib: u64, limit: Duration) -> Self {
        // Root makes the namespaces itself; another user in a user namespace of the
        // compiler's own, where the kernel allows one (`jail::namespaces`).
        let new_network = caps::has_cap(
            None,
            caps::CapSet::Effective,
            caps::Capability::CAP_SYS_ADMIN,
        )
        .unwrap_or(false)
            || crate::jail::namespaces::user_namespaces_allowed();
        let mut gaps = Vec::new();
        if !new_network {
            gaps.push(JailGap::NoNetworkNamespace);
        }
        let plan = Plan::for_workers();
        let uid = runs_as(&plan).uid();
        let landlock = match crate::jail::landlock::compiler_ruleset(&[], &[]) {
            Ok(Some(_)) => true,
            Ok(None) => {
                gaps.push(JailGap::NoLandlock {
                    why: "this kernel does not offer it".into(),
                    uid,
                });
                false
            }
            Err(e) => {
                gaps.push(JailGap::NoLandlock {
                    why: e.to_string(),
                    uid,
                });
                false
            }
        };
        let memory_bytes = memory_mib.saturating_mul(1 << 20);
        let cgroup = match Cgroup::create("cc-probe", group_limits(memory_bytes)) {
            Ok(_) => true,
            Err(e) => {
                gaps.push(JailGap::NoCgroup(e.to_string()));
                false
            }
        };
        Self {
            plan,
            memory_bytes,
            cpu_seconds: limit.as_secs().max(1),
            new_network,
            landlock,
            cgroup,
            gaps,
            prefix: install_prefix(cc),
        }
    }

    /// What this jail cannot enforce here.
    pub(crate) fn gaps(&self) -> &[JailGap] {
        &self.gaps
    }

    /// The user every compiler run of this jail runs as.
    pub(crate) fn runs_as(&self) -> CompilerUser {
        runs_as(&self.plan)
    }

    /// The unprivileged user the compiler becomes (root only): what it reads must be its own.
    pub(crate) fn identity(&self) -> Option<Identity> {
        self.plan.identity()
    }

    /// The address-space limit, in MiB.
    pub(crate) fn memory_mib(&self) -> u64 {
        self.memory_bytes >> 20
    }

    /// Makes `cmd` run jailed: it may read beneath `readable` and the toolchain, write
    /// beneath `writable` only (its temporary folder, `TMPDIR`, is the caller's to set). The
    /// returned group (where cgroups are offered) must outlive the process: dropped, it
    /// kills whatever the compiler left running. Where this process is not root, the forked
    /// child makes the compiler's PID namespace and forks the compiler into it: `cmd` must
    /// then be spawned with the returned [`Confined::pid_namespace`] (`run_bounded` does).
    pub(crate) fn confine(
        &self,
        cmd: &mut std::process::Command,
        readable: &[PathBuf],
        writable: &[PathBuf],
    ) -> io::Result<Confined> {
        use std::os::unix::process::CommandExt;
        let mut read: Vec<PathBuf> = SYSTEM_READABLE.iter().map(PathBuf::from).collect();
        read.extend(self.prefix.iter().cloned());
        read.extend(readable.iter().cloned());
        let mut write: Vec<PathBuf> = vec![PathBuf::from("/dev/null")];
        write.extend(writable.iter().cloned());
        let fd = if self.landlock {
            match crate::jail::landlock::compiler_ruleset(&read, &write) {
                Ok(Some(fd)) => Some(fd),
                Ok(None) => None,
                Err(e) => return Err(io::Error::other(e.to_string())),
            }
        } else {
            None
        };
        let group = if self.cgroup {
            Some(Cgroup::create("cc", group_limits(self.memory_bytes))?)
        } else {
            None
        };
        let joins = group.as_ref().map(Cgroup::join_fds).unwrap_or_default();
        // No network, IPC or host name of its own, and a `/tmp` of its own that lets through
        // only the folders it reads and writes there.
        let namespaces = match self.new_network {
            true => {
                let named: Vec<String> = read
                    .iter()
                    .chain(&write)
                    .map(|p| p.display().to_string())
                    .collect();
                let mut owners = vec![nix::unistd::geteuid().as_raw()];
                owners.extend(self.plan.identity().map(|id| id.uid));
                // Root's compiler gets a PID namespace from its spawn (`Group::spawn`); another
                // user's from the forked child, which forks the compiler into it.
                Namespaces::for_workers(Kept::for_job(named.iter().map(String::as_str), &owners))
            }
            false => Namespaces::none(),
        };
        let plan = self
            .plan
            .in_own_user_namespace(namespaces.makes_user_namespace());
        let made = match namespaces.makes_pid_namespace() {
            true => Some(ChildMade::new()?),
            false => None,
        };
        let splitter = made.as_ref().map(ChildMade::splitter);
        let memory = self.memory_bytes as libc::rlim_t;
        let cpu = self.cpu_seconds as libc::rlim_t;
        // SAFETY: the hook runs in the forked child before exec, where only async-signal-safe
        // calls are allowed: write (joining the group through descriptors the returned
        // `Cgroup` keeps open), the unshare, open/write and mount calls of
        // `Namespaces::apply` on what was made before the fork, the raw clone, kill, write and
        // _exit of `Splitter::split`, setpgid, setrlimit, the raw prctl/capset calls of
        // `Plan::apply` and landlock_restrict_self on a descriptor opened before the fork
        // (kept alive by the closure; close-on-exec, so the compiler does not inherit it).
        // Nothing allocates.
        unsafe {
            cmd.pre_exec(move || {
                cgroup::join(&joins)?;
                namespaces.apply()?;
                if let Some(splitter) = &splitter {
                    // From here on this is the compiler, in its new PID namespace, leading a
                    // process group of its own again (the child that made it led the first).
                    splitter.split()?;
                    let own = nix::unistd::Pid::from_raw(0);
                    nix::unistd::setpgid(own, own).map_err(io::Error::from)?;
                }
                limits::lower(libc::RLIMIT_AS, memory, memory)?;
                limits::lower(libc::RLIMIT_CPU, cpu, cpu)?;
                plan.apply()?;
                if let Some(fd) = &fd {
                    crate::jail::landlock::enforce(fd)?;
                }
                Ok(())
            });
        }
        Ok(Confined {
            cgroup: group,
            pid_namespace: made,
        })
    }
}

/// What a confined command needs beside it: its control group (where cgroups are offered),
/// which must outlive it, and the PID namespace its forked child makes (not root), which its
/// spawn finishes.
#[derive(Debug)]
pub(crate) struct Confined {
    pub(crate) cgroup: Option<Cgroup>,
    pub(crate) pid_namespace: Option<ChildMade>,
}

fn runs_as(plan: &Plan) -> CompilerUser {
    match plan.identity() {
        Some(id) => CompilerUser::Unprivileged {
            uid: id.uid,
            gid: id.gid,
        },
        None => CompilerUser::ThisUser {
            uid: nix::unistd::geteuid().as_raw(),
        },
    }
}

/// The group's bounds for one compiler run of `memory_bytes`.
fn group_limits(memory_bytes: u64) -> CgroupLimits {
    CgroupLimits {
        memory_bytes: Some(memory_bytes),
        pids: COMPILER_PIDS,
    }
}

/// The install prefix of compiler `cc` (`/opt/clang` for `/opt/clang/bin/clang`): found on
/// `PATH` unless it names a path, links resolved.
fn install_prefix(cc: &str) -> Option<PathBuf> {
    let given = Path::new(cc);
    let found = if given.components().count() > 1 {
        Some(given.to_path_buf())
    } else {
        std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join(cc))
                .find(|p| p.is_file())
        })
    }?;
    let real = std::fs::canonicalize(found).ok()?;
    let bin = real.parent()?;
    // A compiler directly under `/` has no prefix of its own: opening `/` would allow all.
    bin.parent()
        .filter(|p| p.parent().is_some())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests;
