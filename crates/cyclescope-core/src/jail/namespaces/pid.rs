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
//! Only a process that holds `CAP_SYS_ADMIN` (root) may make one: an engine that is not root
//! gives its workers none (its workers' user namespaces are made in the forked child, which
//! cannot move itself into a new PID namespace), and records say so. The host's `/proc`
//! stays mounted (the Landlock rules of a trial worker are made on it before the fork): the
//! candidate can list the host's processes there, but not reach them.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
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

/// Forks the namespace's first process: it leaves the operator's session, dies with the
/// spawning thread, lets the kernel reap the orphans it inherits (`SIGCHLD` ignored), and
/// waits for its end.
fn start_holder() -> io::Result<Pid> {
    // SAFETY: the child of this (threaded) process makes only async-signal-safe system calls
    // (prctl, setsid, sigaction through `signal`, pause) on no memory of ours, and never
    // returns: it ends by a signal, as the namespace's first process, or by `_exit`.
    match unsafe { nix::unistd::fork() }.map_err(io::Error::from)? {
        nix::unistd::ForkResult::Child => unsafe {
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
        },
        nix::unistd::ForkResult::Parent { child } => Ok(child),
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
