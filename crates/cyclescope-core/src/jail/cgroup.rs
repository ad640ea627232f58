//! A control group of its own for one confined process and everything it starts: a memory
//! limit and a process-count limit that nothing inside can lift (an rlimit is the process's
//! own, a cgroup's file is not even in its mount namespace's reach once Landlock is on), its
//! peak memory read afterwards, and every process left in it killed at the end.
//!
//! Where the machine has cgroup v2 with the `memory` and `pids` controllers delegated to this
//! process's group, the group is made there; otherwise in the v1 `memory` and `pids`
//! hierarchies (this VM has only those), and in the v1 `cpuacct` one where it is mounted and
//! ours to write. The group is a child of this process's own group in each hierarchy, so
//! whatever bounds the engine bounds it too.
//!
//! The group's CPU time ([`Cgroup::cpu_time`]) is every process's and thread's that ever ran
//! in it, those that forked away from the worker or died before it included: v2's
//! `cpu.stat`, or v1's `cpuacct.usage`. Without either, a record says so and keeps the
//! kernel's per-process account from `/proc`.
//!
//! The confined process joins in the forked child before `exec`: it writes `0` (itself) to
//! each hierarchy's join file, through descriptors opened before the fork. In v1 that file is
//! `tasks`, which moves the calling thread alone: the forked child has no other, so the whole
//! process moves, and the kernel skips the lock that holds every thread group still while a
//! whole process moves (taking that lock waits for an RCU grace period: 12-16 ms a worker on
//! this VM, see bench/worker_startup.py). v2 moves a process through `cgroup.procs` only.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// What the group bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CgroupLimits {
    /// Memory of all its processes together, bytes (swap included where the kernel counts it);
    /// None: unbounded (counted all the same).
    pub memory_bytes: Option<u64>,
    /// How many processes and threads may live in it at once.
    pub pids: u64,
}

/// Which cgroup interface a group was made with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V1,
    V2,
}

/// One group in one hierarchy (v2: the only one; v1: `memory` or `pids`).
#[derive(Debug)]
struct Dir {
    path: PathBuf,
    /// Where a process writes `0` to join: `tasks` in v1, `cgroup.procs` in v2.
    join: File,
}

/// A control group made for one confined process; dropped, it kills what is left in it and
/// removes itself.
#[derive(Debug)]
pub struct Cgroup {
    version: Version,
    /// v2: one folder; v1: the memory folder, then the pids folder, then the cpuacct one
    /// where there is one.
    dirs: Vec<Dir>,
}

/// Names each group made by this process apart.
static NEXT: AtomicU64 = AtomicU64::new(0);

impl Cgroup {
    /// Makes a group for one process under this process's own groups, named after `purpose`,
    /// with `limits`; the error says why none could be made (no cgroup file system, not
    /// writable by this user, a controller missing).
    pub fn create(purpose: &str, limits: CgroupLimits) -> io::Result<Self> {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo")?;
        let membership = std::fs::read_to_string("/proc/self/cgroup")?;
        let name = format!(
            "cyclescope-{}-{purpose}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        match own_group(&mountinfo, &membership, Hierarchy::V2) {
            Some(parent) if v2_delegated(&parent) => Self::create_v2(&parent.join(&name), limits),
            _ => Self::create_v1(&mountinfo, &membership, &name, limits),
        }
    }

    fn create_v2(path: &Path, limits: CgroupLimits) -> io::Result<Self> {
        std::fs::create_dir(path)?;
        let group = Self {
            version: Version::V2,
            dirs: vec![Dir {
                path: path.to_path_buf(),
                join: open_join(path, Version::V2)?,
            }],
        };
        if let Some(bytes) = limits.memory_bytes {
            write(path, "memory.max", bytes)?;
        }
        // Swap is memory the limit above would not see.
        let _ = write(path, "memory.swap.max", 0);
        write(path, "pids.max", limits.pids)?;
        Ok(group)
    }

    fn create_v1(
        mountinfo: &str,
        membership: &str,
        name: &str,
        limits: CgroupLimits,
    ) -> io::Result<Self> {
        let missing = |c: &str| io::Error::other(format!("no cgroup v1 {c} hierarchy is mounted"));
        let memory = own_group(mountinfo, membership, Hierarchy::V1("memory"))
            .ok_or_else(|| missing("memory"))?;
        let pids = own_group(mountinfo, membership, Hierarchy::V1("pids"))
            .ok_or_else(|| missing("pids"))?;
        let mut group = Self {
            version: Version::V1,
            dirs: Vec::new(),
        };
        // CPU time is counted where the hierarchy is there and ours to write; it bounds
        // nothing, so its absence only leaves the account to `/proc`.
        let cpuacct = own_group(mountinfo, membership, Hierarchy::V1("cpuacct"))
            .filter(|p| nix::unistd::access(p, nix::unistd::AccessFlags::W_OK).is_ok());
        for parent in [memory, pids].into_iter().chain(cpuacct) {
            let path = parent.join(name);
            std::fs::create_dir(&path)?;
            let join = match open_join(&path, Version::V1) {
                Ok(f) => f,
                Err(e) => {
                    let _ = std::fs::remove_dir(&path);
                    return Err(e);
                }
            };
            group.dirs.push(Dir { path, join });
        }
        let memory = &group.dirs[0].path;
        if let Some(bytes) = limits.memory_bytes {
            write(memory, "memory.limit_in_bytes", bytes)?;
            // Present only where swap accounting is on; it must not be below the limit above.
            if memory.join("memory.memsw.limit_in_bytes").exists() {
                write(memory, "memory.memsw.limit_in_bytes", bytes)?;
            }
        }
        write(&group.dirs[1].path, "pids.max", limits.pids)?;
        Ok(group)
    }

    /// The interface the group was made with.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The descriptors of each hierarchy's join file, for [`join`] in the forked child.
    pub fn join_fds(&self) -> Vec<i32> {
        self.dirs.iter().map(|d| d.join.as_raw_fd()).collect()
    }

    /// The group's folders (v1: memory, then pids).
    pub fn paths(&self) -> Vec<&Path> {
        self.dirs.iter().map(|d| d.path.as_path()).collect()
    }

    /// The group's name, which its folder has in every hierarchy.
    pub fn name(&self) -> Option<String> {
        let dir = self.dirs.first()?;
        Some(dir.path.file_name()?.to_string_lossy().into_owned())
    }

    /// The memory limit in force, bytes, as the kernel reads it back.
    pub fn memory_limit(&self) -> Option<u64> {
        let file = match self.version {
            Version::V1 => "memory.limit_in_bytes",
            Version::V2 => "memory.max",
        };
        read_number(&self.dirs[0].path.join(file))
    }

    /// The most memory the group's processes held at once, bytes.
    pub fn peak_memory(&self) -> Option<u64> {
        let file = match self.version {
            Version::V1 => "memory.max_usage_in_bytes",
            Version::V2 => "memory.peak",
        };
        read_number(&self.dirs[0].path.join(file))
    }

    /// The CPU time every process and thread of the group used, those gone included (v2's
    /// `cpu.stat`, v1's `cpuacct.usage`); None where the group has no CPU account.
    pub fn cpu_time(&self) -> Option<std::time::Duration> {
        match self.version {
            Version::V2 => {
                let text = std::fs::read_to_string(self.dirs[0].path.join("cpu.stat")).ok()?;
                let usec = text
                    .lines()
                    .find_map(|l| l.strip_prefix("usage_usec ")?.trim().parse().ok())?;
                Some(std::time::Duration::from_micros(usec))
            }
            Version::V1 => {
                let dir = self.dirs.get(2)?;
                read_number(&dir.path.join("cpuacct.usage")).map(std::time::Duration::from_nanos)
            }
        }
    }

    /// Whether the kernel killed a process of the group for going over its memory limit.
    pub fn out_of_memory(&self) -> bool {
        let file = match self.version {
            Version::V1 => "memory.oom_control",
            Version::V2 => "memory.events",
        };
        std::fs::read_to_string(self.dirs[0].path.join(file))
            .ok()
            .and_then(|text| {
                text.lines()
                    .find_map(|l| l.strip_prefix("oom_kill ")?.trim().parse::<u64>().ok())
            })
            .is_some_and(|n| n > 0)
    }

    /// Kills every process still in the group (those that left their process group too).
    pub fn kill_all(&self) {
        if self.version == Version::V2 && write(&self.dirs[0].path, "cgroup.kill", 1).is_ok() {
            return;
        }
        // v1 has no cgroup.kill: a process forked between the read and the kill is found on
        // the next round; pids.max bounds how many there can be.
        for _ in 0..100 {
            let pids = self.members();
            if pids.is_empty() {
                return;
            }
            for pid in pids {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// The processes in the group now.
    pub fn members(&self) -> Vec<i32> {
        let mut pids = Vec::new();
        for d in &self.dirs {
            if let Ok(text) = std::fs::read_to_string(d.path.join("cgroup.procs")) {
                pids.extend(text.lines().filter_map(|l| l.trim().parse::<i32>().ok()));
            }
        }
        pids.sort_unstable();
        pids.dedup();
        pids
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        self.kill_all();
        for d in &self.dirs {
            // A killed process leaves the group only once the kernel has reaped it.
            for _ in 0..200 {
                if std::fs::remove_dir(&d.path).is_ok() || !d.path.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
    }
}

impl Cgroup {
    /// Makes the child of `cmd` join the group before `exec`, before any hook registered
    /// after this call (one that moves descriptors to fixed numbers could otherwise put
    /// another file where the join file was). The group must outlive the spawn.
    pub fn join_at_exec(&self, cmd: &mut std::process::Command) {
        use std::os::unix::process::CommandExt;
        let fds = self.join_fds();
        // SAFETY: the hook runs in the forked child before exec; `join` makes one `write` per
        // descriptor (opened before the fork, kept open by `self`) and allocates nothing.
        unsafe {
            cmd.pre_exec(move || join(&fds));
        }
    }
}

/// Moves the calling process into the groups whose join files are `fds` ([`Cgroup::join_fds`]).
/// Runs in a forked child before `exec`, while it has one thread (in v1 only the calling
/// thread moves): one `write` per descriptor, nothing allocated.
pub fn join(fds: &[i32]) -> io::Result<()> {
    for &fd in fds {
        // SAFETY: writes one byte from a static buffer to a descriptor opened before the fork
        // and kept open by the caller's `Cgroup`; "0" names the writing process itself.
        if unsafe { libc::write(fd, c"0".as_ptr().cast(), 1) } != 1 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The file a process joins `dir` through: v1's `tasks` takes `0` as the writing thread, with
/// no wait for a grace period; `cgroup.procs` would move its whole thread group.
fn open_join(dir: &Path, version: Version) -> io::Result<File> {
    let file = match version {
        Version::V1 => "tasks",
        Version::V2 => "cgroup.procs",
    };
    OpenOptions::new().write(true).open(dir.join(file))
}

fn write(dir: &Path, file: &str, value: u64) -> io::Result<()> {
    std::fs::write(dir.join(file), value.to_string())
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.join(file).display())))
}

fn read_number(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// A hierarchy to look this process up in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hierarchy {
    V2,
    V1(&'static str),
}

/// This process's own group folder in `hierarchy`, from `/proc/self/mountinfo` and
/// `/proc/self/cgroup`: the mount point, plus the group's path below the mount's root.
fn own_group(mountinfo: &str, membership: &str, hierarchy: Hierarchy) -> Option<PathBuf> {
    let path = membership.lines().find_map(|line| {
        let mut f = line.splitn(3, ':');
        let (id, controllers, path) = (f.next()?, f.next()?, f.next()?);
        let ours = match hierarchy {
            Hierarchy::V2 => id == "0" && controllers.is_empty(),
            Hierarchy::V1(c) => controllers.split(',').any(|x| x == c),
        };
        ours.then_some(path)
    })?;
    let mount = mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let l: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        let (root, point) = (*l.get(3)?, *l.get(4)?);
        let (fstype, options) = (*r.first()?, *r.get(2)?);
        let ours = match hierarchy {
            Hierarchy::V2 => fstype == "cgroup2",
            Hierarchy::V1(c) => fstype == "cgroup" && options.split(',').any(|x| x == c),
        };
        ours.then_some((root, point))
    })?;
    let (root, point) = mount;
    let below = Path::new(path).strip_prefix(root).ok()?;
    Some(Path::new(&unescape(point)).join(below))
}

/// A mountinfo field with its octal escapes (`\040` for a space) read back.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && let Some(oct) = field.get(i + 1..i + 4)
            && let Ok(b) = u8::from_str_radix(oct, 8)
        {
            out.push(b);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether a v2 group's children can be given memory and pids limits: both controllers are
/// enabled for them (`cgroup.subtree_control`) and the folder is writable.
fn v2_delegated(group: &Path) -> bool {
    let enabled = std::fs::read_to_string(group.join("cgroup.subtree_control")).unwrap_or_default();
    let has = |c: &str| enabled.split_whitespace().any(|x| x == c);
    has("memory")
        && has("pids")
        && nix::unistd::access(group, nix::unistd::AccessFlags::W_OK).is_ok()
}

#[cfg(test)]
mod tests;
