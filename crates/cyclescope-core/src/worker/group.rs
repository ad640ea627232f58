//! One worker's process group: the worker is spawned as the leader of a group of its own, so
//! whatever the candidate forks stays in it and goes with it. The group notices the leader's
//! end without reaping it (the zombie pins the group id against reuse and keeps its CPU times
//! readable), reads those times from outside, then kills the whole group and reaps the leader
//! — also when dropped early. It also notices a stopped worker (the leader, or a process it
//! started, in state `T`/`t`), which would otherwise wait out its whole deadline. It never
//! reads the worker's pipes.

use std::io;
use std::process::{Child, Command, ExitStatus};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use nix::unistd::Pid;

use crate::jail::namespaces::{ChildMade, PidRoom};

/// A spawned worker and its process group (same id: the worker leads it).
pub(crate) struct Group {
    /// The process spawned: the worker itself, or (an engine that is not root) the one that
    /// made the worker's PID namespace and forked the worker into it; it has ended then, and
    /// its pipes are the worker's.
    child: Child,
    /// The worker, the group's leader.
    pgid: Pid,
    reaped: bool,
    /// The holder of the leader's PID namespace: ended after the leader is reaped.
    room: PidRoom,
}

impl Group {
    /// Spawns `cmd` as the leader of a new process group, on `cpu` from its first
    /// instruction when one is given: every thread the process ever has (an emulator's own,
    /// under qemu-user, made before the worker's code pins itself) inherits that mask, so the
    /// parent's look at where each task may run finds none the worker did not put there.
    /// For a program the engine trusts (the compiler): it keeps this process's privileges.
    pub(crate) fn spawn(
        cmd: &mut Command,
        cpu: Option<usize>,
        made: Option<ChildMade>,
    ) -> io::Result<Self> {
        use std::os::unix::process::CommandExt;
        let set = affinity(cpu)?;
        if let Some(set) = set {
            // SAFETY: the hook runs in the forked child before exec, where only
            // async-signal-safe calls are allowed; it makes one system call
            // (sched_setaffinity) on a set built before the fork, and allocates nothing.
            unsafe {
                cmd.pre_exec(move || {
                    nix::sched::sched_setaffinity(Pid::from_raw(0), &set).map_err(io::Error::from)
                });
            }
        }
        cmd.process_group(0);
        Self::from_spawn(PidRoom::spawn_in(|| cmd.spawn()), made)
    }

    /// [`Group::spawn`] for a program that runs candidate code: it also leads a session of
    /// its own (no controlling terminal: no `TIOCSTI` into the operator's, no job-control
    /// signals from it), has namespaces of its own where this process may make them
    /// (`namespaces`) and holds no privilege (`privileges`), all before `exec`, so they hold
    /// for valgrind and whatever runs under it too.
    /// Its `/tmp` is its own, with `kept` let through, where namespaces can be made.
    /// What `before_exec` holds (a trial worker's Landlock ruleset, valgrind's filter) is
    /// enforced last, after the mounts and the privileges.
    pub(crate) fn spawn_worker(
        cmd: &mut Command,
        cpu: Option<usize>,
        kept: crate::jail::namespaces::Kept,
        before_exec: super::confine::BeforeExec,
    ) -> io::Result<Self> {
        use std::os::unix::process::CommandExt;
        let set = affinity(cpu)?;
        let namespaces = crate::jail::namespaces::Namespaces::for_workers(kept);
        let plan = crate::jail::privileges::Plan::for_workers()
            .in_own_user_namespace(namespaces.makes_user_namespace());
        let made = match namespaces.makes_pid_namespace() {
            true => Some(ChildMade::new()?),
            false => None,
        };
        let in_child = made.as_ref().map(ChildMade::splitter);
        // SAFETY: the hook runs in the forked child before exec, where only async-signal-safe
        // calls are allowed: setsid, sched_setaffinity on a set built before the fork,
        // unshare, the raw clone, kill, write and _exit of `ChildMade::split`, and the raw
        // prctl/capset/setres[ug]id calls of `Plan::apply` and the Landlock and seccomp calls
        // of `BeforeExec::enforce` (no allocation, no lock).
        unsafe {
            cmd.pre_exec(move || {
                // A new session is also a new process group led by the child: the group id is
                // its pid, as `process_group(0)` would make it (which would make setsid fail).
                nix::unistd::setsid().map_err(io::Error::from)?;
                if let Some(set) = &set {
                    nix::sched::sched_setaffinity(Pid::from_raw(0), set)
                        .map_err(io::Error::from)?;
                }
                // While CAP_SYS_ADMIN is still held (root's, or the new user namespace's).
                namespaces.apply()?;
                if let Some(made) = &in_child {
                    // From here on this is the worker, in its new PID namespace, with a
                    // session of its own again (the child that made it led the first).
                    made.split()?;
                    nix::unistd::setsid().map_err(io::Error::from)?;
                }
                plan.apply()?;
                before_exec.enforce()
            });
        }
        Self::from_spawn(PidRoom::spawn_in(|| cmd.spawn()), made)
    }

    /// The group of what `spawned` started: the spawned child itself, or where its forked child
    /// made a PID namespace (`made`), the process it forked into it.
    fn from_spawn(
        spawned: io::Result<(Child, PidRoom)>,
        made: Option<ChildMade>,
    ) -> io::Result<Self> {
        let Some(made) = made else {
            let (child, room) = spawned?;
            return Ok(Self::started(child, room, None));
        };
        let (child, room, worker) = made.finish(spawned.map(|(child, _)| child))?;
        Ok(Self::started(child, room, Some(worker)))
    }

    /// `worker`: the leader where it is not `child` itself.
    fn started(child: Child, room: PidRoom, worker: Option<Pid>) -> Self {
        let pgid = worker.unwrap_or(Pid::from_raw(child.id() as i32));
        Self {
            child,
            pgid,
            reaped: false,
            room,
        }
    }

    pub(super) fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// The leader's process id (= the group's id).
    pub(super) fn pid(&self) -> u32 {
        self.pgid.as_raw() as u32
    }

    /// Whether the leader has ended (it stays a zombie until `finish`).
    pub(crate) fn leader_ended(&self) -> bool {
        let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
        // An error here (ECHILD) means there is nothing left to wait for: ended.
        !matches!(
            waitid(Id::Pid(self.pgid), flags),
            Ok(WaitStatus::StillAlive)
        )
    }

    /// Whether the leader is stopped, and by which signal (`waitid(WSTOPPED)`, one system
    /// call: cheap enough for every poll). A stopped process never continues by itself, so
    /// the job would only wait out its deadline.
    pub(crate) fn leader_stopped(&self) -> Option<Stopped> {
        let flags = WaitPidFlag::WSTOPPED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
        match waitid(Id::Pid(self.pgid), flags) {
            Ok(WaitStatus::Stopped(_, signal)) => Some(Stopped::Worker {
                signal: signal.as_str().to_string(),
            }),
            _ => None,
        }
    }

    /// A stopped process of the group, the leader first: [`Group::leader_stopped`], then a
    /// scan of `/proc` for the group's processes (a walk over every process: done less often).
    pub(crate) fn stopped(&self) -> Option<Stopped> {
        self.leader_stopped().or_else(|| {
            // `/proc` shows the stop a moment before `waitid` reports it: asked again, the
            // leader's stop then has its signal.
            match stopped_in_group(self.pgid.as_raw())? {
                s @ Stopped::Worker { .. } => self.leader_stopped().or(Some(s)),
                s => Some(s),
            }
        })
    }

    /// The leader's user + system CPU time, read from `/proc` while it is a zombie (its own
    /// threads included; the candidate's forked children are not).
    pub(super) fn leader_cpu_time(&self) -> Option<Duration> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pgid)).ok()?;
        cpu_time_from_stat(&stat, clock_ticks_per_second()?)
    }

    /// What the leader was doing when its time ran out, for the TIMEOUT's words: its state,
    /// where in the kernel it waited, and the CPU time it had used (a stalled process and a
    /// starved one read differently).
    pub(super) fn leader_stall(&self) -> String {
        let proc = format!("/proc/{}", self.pgid);
        let stat = std::fs::read_to_string(format!("{proc}/stat")).unwrap_or_default();
        let state = stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next())
            .unwrap_or("?")
            .to_string();
        let wchan = std::fs::read_to_string(format!("{proc}/wchan")).unwrap_or_default();
        let cpu = clock_ticks_per_second()
            .and_then(|hz| cpu_time_from_stat(&stat, hz))
            .map_or_else(|| "?".into(), |d| format!("{:.3}", d.as_secs_f64()));
        let wchan = match wchan.trim() {
            "" | "0" => String::new(),
            w => format!(", waiting in {}", crate::sanitize::log_field(w)),
        };
        format!("state {state}{wchan}, {cpu} s of CPU used")
    }

    /// Whether the leader sleeps in the kernel (state `S` or `D`), off the CPU.
    pub(super) fn leader_blocked(&self) -> bool {
        std::fs::read_to_string(format!("/proc/{}/stat", self.pgid))
            .ok()
            .and_then(|stat| {
                // The state follows the command name's closing parenthesis.
                let after = &stat[stat.rfind(')')? + 1..];
                after
                    .split_whitespace()
                    .next()
                    .map(|s| s == "S" || s == "D")
            })
            .unwrap_or(false)
    }

    /// The CPU time of every thread of the leader, running or ended, to the nanosecond: the
    /// kernel's process CPU clock, read from outside, which nothing in the worker can write.
    /// None once the leader is gone (or where the kernel does not offer the clock).
    pub(super) fn process_cpu_time(&self) -> Option<Duration> {
        let clock = nix::time::clock_getcpuclockid(self.pgid).ok()?;
        nix::time::clock_gettime(clock).ok().map(Duration::from)
    }

    /// Kills every process of the group and reaps the leader.
    pub(crate) fn finish(mut self) -> Option<ExitStatus> {
        self.kill_and_reap()
    }

    fn kill_and_reap(&mut self) -> Option<ExitStatus> {
        if self.reaped {
            return None;
        }
        // ESRCH only means the group is already empty.
        let _ = killpg(self.pgid, Signal::SIGKILL);
        self.reaped = true;
        let status = match self.pgid.as_raw() as u32 == self.child.id() {
            true => self.child.wait().ok(),
            false => {
                // The child that made the worker's namespace has ended: it is reaped too.
                let _ = self.child.wait();
                wait_status(self.pgid)
            }
        };
        // Then whatever is left in its PID namespace (a process the candidate moved out of
        // the group), with the namespace's holder.
        drop(std::mem::take(&mut self.room));
        status
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill_and_reap();
    }
}

/// The end of `pid`, a child of this process that `std` does not know of, reaped.
fn wait_status(pid: Pid) -> Option<ExitStatus> {
    use std::os::unix::process::ExitStatusExt;
    match nix::sys::wait::waitpid(pid, None).ok()? {
        WaitStatus::Exited(_, code) => Some(ExitStatus::from_raw((code & 0xff) << 8)),
        WaitStatus::Signaled(_, signal, core) => Some(ExitStatus::from_raw(
            signal as i32 | if core { 0x80 } else { 0 },
        )),
        _ => None,
    }
}

/// The one-CPU mask for `cpu`, built before the fork.
fn affinity(cpu: Option<usize>) -> io::Result<Option<nix::sched::CpuSet>> {
    cpu.map(|cpu| {
        let mut set = nix::sched::CpuSet::new();
        set.set(cpu).map_err(io::Error::from)?;
        Ok(set)
    })
    .transpose()
}

/// Which process of a worker was found stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stopped {
    /// The worker itself, by this signal (`SIGSTOP`, `SIGTSTP`, `SIGTTIN`, `SIGTTOU`).
    Worker { signal: String },
    /// A process the candidate started (the kernel keeps no signal for the parent to read).
    Descendant { pid: i32, state: char },
}

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stopped::Worker { signal } => {
                write!(
                    f,
                    "the worker stopped itself ({signal}) inside the candidate"
                )
            }
            Stopped::Descendant { pid, state } => write!(
                f,
                "a process the candidate started (pid {pid}) is stopped (state {state})"
            ),
        }
    }
}

/// The first process of the group `pgid` in `/proc` whose state is stopped (`T`) or stopped by
/// a tracer (`t`): the group holds the worker and whatever the candidate started (the kernel
/// here keeps no per-thread `children` lists, and a reparented process stays in the group).
fn stopped_in_group(pgid: i32) -> Option<Stopped> {
    let dir = std::fs::read_dir("/proc").ok()?;
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some((state, group)) = state_and_group(&stat) else {
            continue;
        };
        match state {
            _ if group != pgid => {}
            // The leader in `T` is seen by `waitid`; in `t` a tracer holds it.
            'T' | 't' if pid == pgid => {
                return Some(Stopped::Worker {
                    signal: format!("state {state}"),
                });
            }
            'T' | 't' => return Some(Stopped::Descendant { pid, state }),
            _ => {}
        }
    }
    None
}

/// The state letter and process group (fields 3 and 5) of a `/proc/<pid>/stat` line.
fn state_and_group(stat: &str) -> Option<(char, i32)> {
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = fields.next()?.chars().next()?;
    let group = fields.nth(1)?.parse().ok()?;
    Some((state, group))
}

fn clock_ticks_per_second() -> Option<u64> {
    nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .and_then(|t| u64::try_from(t).ok())
        .filter(|&t| t > 0)
}

/// `utime + stime` (fields 14 and 15) of a `/proc/<pid>/stat` line. The command name may
/// hold spaces and parentheses, so fields are counted after its last `)`.
fn cpu_time_from_stat(stat: &str, ticks_per_second: u64) -> Option<Duration> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    let ticks = utime.checked_add(stime)?;
    Some(Duration::from_secs_f64(
        ticks as f64 / ticks_per_second as f64,
    ))
}

#[cfg(test)]
mod tests;
