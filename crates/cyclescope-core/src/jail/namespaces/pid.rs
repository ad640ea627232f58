//! A PID namespace of one worker's own. Inside it the worker (and whatever the candidate
//! forks) reaches no process of the host by its number: `kill`, `pidfd_open`, `ptrace`,
//! `sched_setaffinity` and the like look pids up in the caller's namespace, where only the
//! worker's own family lives. Its parent, the engine, is outside: `getppid` says 0.
//!
//! The worker is not the namespace's first process. The first one (pid 1) gets a kernel's
//! init's treatment: it ignores every signal it has no handler for, `SIGSTOP` and `SIGABRT`
//! sent by itself included, so a candidate that stops or aborts itself would not be seen to.
//! So the spawning thread makes the namespace for its next children (`unshare`), forks a
//! holder into it first (pid 1: it only waits, and lets the kernel reap the orphans it
//! inherits), then spawns the worker (pid 2, still this process's child: the engine watches,
//! pins and reaps it by its pid as before), and goes back to its own namespace for every
//! later child. The holder dies with the spawning thread (`PR_SET_PDEATHSIG`); killing it
//! kills whatever is left in the namespace, after the worker is reaped ([`PidRoom`]'s drop).
//!
//! Only a process that holds `CAP_SYS_ADMIN` (root) may make one from here. An engine that is
//! not root has the forked child make it, inside the user namespace that child makes
//! ([`ChildMade`]): the child forks the holder and the worker into it as the engine's own
//! children, so nothing above changes. The host's `/proc` stays mounted (the Landlock rules of
//! a trial worker are made on it before the fork): the candidate can list the host's
//! processes there, but not reach them.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use nix::sys::signal::{Signal, kill};
use nix::sys::wait::waitpid;
use nix::unistd::Pid;

/// The holder of one worker's PID namespace; None where no namespace was made.
#[derive(Debug, Default)]
pub(crate) struct PidRoom {
    holder: Option<Pid>,
}

/// Cleared when going back to this process's own namespace once failed: no later spawn
/// makes one (a thread left pointing its children at a dead namespace could fork nothing).
static USABLE: AtomicBool = AtomicBool::new(true);

impl PidRoom {
    /// Runs `spawn` on this thread with its children going into a new PID namespace, whose
    /// pid 1 is a holder forked first; the spawned process is its pid 2. Where no namespace
    /// can be made (not root, an old kernel, an emulator that refuses), `spawn` runs as it
    /// would without, and the room is empty.
    pub(crate) fn spawn_in<T>(spawn: impl FnOnce() -> io::Result<T>) -> io::Result<(T, Self)> {
        let Some(own) = own_namespace() else {
            return spawn().map(|t| (t, Self::default()));
        };
        // SAFETY: unshare takes flags only; with CLONE_NEWPID alone it changes where this
        // thread's next children go, nothing of this process or its memory.
        if unsafe { libc::unshare(libc::CLONE_NEWPID) } != 0 {
            return spawn().map(|t| (t, Self::default()));
        }
        let spawned = start_holder().and_then(|holder| {
            let room = Self {
                holder: Some(holder),
            };
            // On an error the room is dropped here, which ends the holder.
            spawn().map(|t| (t, room))
        });
        // SAFETY: setns takes a descriptor of this process's own PID namespace, opened above
        // and alive here; it changes where this thread's next children go.
        if unsafe { libc::setns(own.as_raw_fd(), libc::CLONE_NEWPID) } != 0 {
            USABLE.store(false, Ordering::Relaxed);
            let error = io::Error::last_os_error();
            return Err(io::Error::new(
                error.kind(),
                format!("going back to this process's PID namespace after a spawn: {error}"),
            ));
        }
        spawned
    }

    /// Whether a namespace was made.
    #[cfg(test)]
    pub(crate) fn is_made(&self) -> bool {
        self.holder.is_some()
    }
}

impl Drop for PidRoom {
    /// Ends the holder, and with it every process left in the namespace. The worker (pid 2)
    /// must be reaped first: a namespace's first process ends only once every other process
    /// in it is gone, and the worker, a child of this process, stays a zombie until reaped.
    fn drop(&mut self) {
        if let Some(holder) = self.holder.take() {
            // ESRCH: it is gone already (its spawning thread ended); it is still reaped.
            let _ = kill(holder, Signal::SIGKILL);
            let _ = waitpid(holder, None);
        }
    }
}

/// A descriptor of this process's own PID namespace, where one may be made (this process
/// holds `CAP_SYS_ADMIN`, and no earlier return failed).
fn own_namespace() -> Option<File> {
    if !USABLE.load(Ordering::Relaxed) {
        return None;
    }
    let admin = caps::has_cap(
        None,
        caps::CapSet::Effective,
        caps::Capability::CAP_SYS_ADMIN,
    )
    .unwrap_or(false);
    admin
        .then(|| File::open("/proc/self/ns/pid").ok())
        .flatten()
}

/// Forks the namespace's first process ([`hold`]).
fn start_holder() -> io::Result<Pid> {
    // SAFETY: the child of this (threaded) process runs only `hold`: async-signal-safe system
    // calls on no memory of ours, and never returns.
    match unsafe { nix::unistd::fork() }.map_err(io::Error::from)? {
        nix::unistd::ForkResult::Child => hold(),
        nix::unistd::ForkResult::Parent { child } => Ok(child),
    }
}

/// The body of a namespace's first process: it closes every descriptor it was born with (a
/// pipe end of another spawn held here would keep that spawn, or its worker's stdin, from
/// ever seeing its end), leaves the operator's session, dies with the spawning thread, lets
/// the kernel reap the orphans it inherits (`SIGCHLD` ignored), and waits for its end.
/// Async-signal-safe system calls only, on no memory of ours: it runs in a forked child.
fn hold() -> ! {
    // SAFETY: each call takes integers only; `_exit` ends the process without running
    // anything of ours.
    unsafe {
        if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) != 0 {
            for fd in 0..65_536 {
                libc::close(fd);
            }
        }
        if libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        ) != 0
        {
            libc::_exit(1);
        }
        libc::setsid();
        libc::signal(libc::SIGCHLD, libc::SIG_IGN);
        loop {
            libc::pause();
        }
    }
}

/// A PID namespace that the spawned child makes itself, where this process may not (it is not
/// root) but the child may, inside the user namespace it makes ([`super::Namespaces`]). The
/// child cannot enter the namespace it makes: only its children are born in it. So it forks
/// the holder (pid 1) and then the worker (pid 2), both as children of this process
/// (`CLONE_PARENT`: the engine watches, pins and reaps the worker by its pid as everywhere
/// else), tells this process both pids over a pipe, and ends; the worker goes on to `exec`.
#[derive(Debug)]
pub(crate) struct ChildMade {
    read: OwnedFd,
    write: OwnedFd,
}

impl ChildMade {
    /// The pipe the child's pids come back on, made before the fork (both ends close on
    /// `exec`).
    pub(crate) fn new() -> io::Result<Self> {
        let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
        Ok(Self { read, write })
    }

    /// What the forked child needs: the pipe's writing end, valid while `self` lives (until
    /// [`ChildMade::finish`], after the spawn).
    pub(crate) fn splitter(&self) -> Splitter {
        Splitter {
            write: self.write.as_raw_fd(),
        }
    }

    /// In this process, once `spawn` has returned (which it does only once the child has
    /// ended and the worker has run `exec` or failed to): the spawned child, the holder's room
    /// and the worker's pid. Every way it can go wrong ends here, with nothing left running: a
    /// worker whose `exec` failed is killed and reaped, and so is a child that made none.
    pub(crate) fn finish(
        self,
        spawned: io::Result<std::process::Child>,
    ) -> io::Result<(std::process::Child, PidRoom, Pid)> {
        drop(self.write);
        let mut bytes = Vec::with_capacity(8);
        // Every other end is closed by now, or soon: the child's has ended, the worker's
        // closed at `exec`, the holder's at its start.
        let _ = File::from(self.read).take(8).read_to_end(&mut bytes);
        let pid = |b: &[u8]| {
            let raw = libc::pid_t::from_ne_bytes(b.try_into().ok()?);
            (raw > 0).then(|| Pid::from_raw(raw))
        };
        let (holder, worker) = match bytes.len() {
            8 => (pid(&bytes[..4]), pid(&bytes[4..])),
            _ => (None, None),
        };
        let room = PidRoom { holder };
        match (spawned, worker) {
            (Ok(child), Some(worker)) => Ok((child, room, worker)),
            (Ok(mut child), None) => {
                let _ = child.kill();
                let _ = child.wait();
                Err(io::Error::other(
                    "the PID namespace was made, but no process came of it",
                ))
            }
            (Err(e), worker) => {
                if let Some(worker) = worker {
                    let _ = kill(worker, Signal::SIGKILL);
                    let _ = waitpid(worker, None);
                }
                Err(e)
            }
        }
    }
}

/// The forked child's side of [`ChildMade`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Splitter {
    write: std::os::fd::RawFd,
}

impl Splitter {
    /// In the forked child, once its namespaces are made (`unshare` with `CLONE_NEWPID`):
    /// forks the holder and the worker into the new namespace. Returns in the worker only;
    /// the child that made them ends here, after writing their pids. Raw system calls only,
    /// no allocation.
    pub(crate) fn split(&self) -> io::Result<()> {
        let holder = clone_sibling()?;
        if holder == 0 {
            hold();
        }
        let worker = match clone_sibling() {
            Ok(worker) => worker,
            Err(error) => {
                // SAFETY: kill takes integers; the holder is this child's sibling, reaped
                // by the engine, which reads its pid from the pipe.
                unsafe { libc::kill(holder, libc::SIGKILL) };
                self.tell(holder, 0);
                return Err(error);
            }
        };
        if worker == 0 {
            return Ok(());
        }
        self.tell(holder, worker);
        // SAFETY: ends this forked child without running anything of ours (its exec would
        // have replaced it in any case).
        unsafe { libc::_exit(0) }
    }

    /// Writes both pids into the pipe (eight bytes: one write, atomic on a pipe).
    fn tell(&self, holder: libc::pid_t, worker: libc::pid_t) {
        let mut bytes = [0u8; 8];
        bytes[..4].copy_from_slice(&holder.to_ne_bytes());
        bytes[4..].copy_from_slice(&worker.to_ne_bytes());
        // SAFETY: write reads eight bytes of a live array from a descriptor this child holds.
        unsafe { libc::write(self.write, bytes.as_ptr().cast(), bytes.len()) };
    }
}

/// `clone(CLONE_PARENT | SIGCHLD)` with no new stack: a fork whose child is this process's
/// sibling (a child of this process's parent). Returns 0 in the child.
fn clone_sibling() -> io::Result<libc::pid_t> {
    let flags = (libc::CLONE_PARENT | libc::SIGCHLD) as libc::c_ulong;
    // SAFETY: with a null stack the child runs on a copy of this process's memory, as after
    // `fork`; it is called only in a single-threaded forked child, whose children make raw
    // system calls only before they `exec` or end (libc's cached thread id, stale in them,
    // is never used).
    let pid = unsafe { libc::syscall(libc::SYS_clone, flags, 0usize, 0usize, 0usize, 0usize) };
    match pid {
        -1 => Err(io::Error::last_os_error()),
        pid => Ok(pid as libc::pid_t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pid_of_shell(cmd: &mut std::process::Command) -> io::Result<String> {
        let out = cmd.args(["-c", "echo $$"]).output()?;
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// Root's spawn is pid 2 (not 1) of a namespace of its own; the thread's next child, spawned
    /// plainly, is back in this process's namespace. Not root: no namespace, no change.
    #[test]
    fn a_spawn_is_pid_2_of_its_own_namespace_and_the_next_child_is_back_home() {
        let (inside, room) =
            PidRoom::spawn_in(|| pid_of_shell(&mut std::process::Command::new("sh"))).unwrap();
        let root = nix::unistd::geteuid().is_root();
        assert_eq!(room.is_made(), root);
        // 2, or a little more where the spawn itself starts a process first (qemu-user's
        // emulation of it); never 1.
        let small = |pid: &str| pid.parse::<u32>().is_ok_and(|p| (2..10).contains(&p));
        assert_eq!(small(&inside), root, "{inside}");
        drop(room);
        let after = pid_of_shell(&mut std::process::Command::new("sh")).unwrap();
        assert!(!small(&after), "{after}");
        assert_eq!(
            std::fs::read_link("/proc/thread-self/ns/pid_for_children").unwrap(),
            std::fs::read_link("/proc/thread-self/ns/pid").unwrap()
        );
    }
}
