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
//! later child. The holder lives as long as its room: it blocks reading a pipe whose only
//! writing end the room keeps ([`Lifeline`]), so it ends when the room is dropped and when
//! this process dies in any way, a `SIGKILL` at any instant included (a parent-death signal
//! is set only after the fork, and follows the spawning thread, not the process). The room's
//! drop also kills it, which kills whatever is left in the namespace, after the worker is
//! reaped.
//!
//! Only a process that holds `CAP_SYS_ADMIN` (root) may make one from here. An engine that is
//! not root has the forked child make it, inside the user namespace that child makes
//! ([`ChildMade`]): the child forks the holder and the worker into it as the engine's own
//! children, so nothing above changes. The host's `/proc` stays mounted (the Landlock rules of
//! a trial worker are made on it before the fork): the candidate can list the host's
//! processes there, but not reach them.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

use nix::sys::signal::{Signal, kill};
use nix::sys::wait::waitpid;
use nix::unistd::Pid;

/// The holder of one worker's PID namespace; None where no namespace was made.
#[derive(Debug, Default)]
pub(crate) struct PidRoom {
    holder: Option<Pid>,
    /// The writing end of the holder's [`Lifeline`]: closed after the holder is killed.
    life: Option<OwnedFd>,
}

/// The pipe that ties a holder's life to its room's: the holder keeps only the reading end
/// and blocks on it; the room keeps the writing end (close-on-exec, so no worker inherits
/// it), and nothing ever writes. The holder reads end-of-file once every writing end is
/// closed: when the room is dropped, or when this process ends, however it ends.
#[derive(Debug)]
struct Lifeline {
    read: OwnedFd,
    write: OwnedFd,
}

impl Lifeline {
    fn new() -> io::Result<Self> {
        let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
        Ok(Self { read, write })
    }
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
        let spawned = Lifeline::new()
            .and_then(start_holder)
            .and_then(|(holder, life)| {
                let room = Self {
                    holder: Some(holder),
                    life: Some(life),
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
        self.life.take();
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

/// Forks the namespace's first process ([`hold`]); the writing end of its lifeline.
fn start_holder(life: Lifeline) -> io::Result<(Pid, OwnedFd)> {
    let read = life.read.as_raw_fd();
    // SAFETY: the child of this (threaded) process runs only `hold`: async-signal-safe system
    // calls on no memory of ours, and never returns.
    match unsafe { nix::unistd::fork() }.map_err(io::Error::from)? {
        nix::unistd::ForkResult::Child => hold(read),
        // The reading end is the holder's alone from here.
        nix::unistd::ForkResult::Parent { child } => Ok((child, life.write)),
    }
}

/// The body of a namespace's first process: it closes every descriptor it was born with but
/// the reading end of its lifeline (`life`: a pipe end of another spawn held here would keep
/// that spawn, or its worker's stdin, from ever seeing its end, and its own lifeline's writing
/// end would keep it alive), leaves the operator's session, lets the kernel reap the orphans
/// it inherits (`SIGCHLD` ignored), and reads its lifeline until end-of-file, when it ends.
/// Async-signal-safe system calls only, on no memory of ours: it runs in a forked child.
fn hold(life: RawFd) -> ! {
    // SAFETY: each call takes integers, or a byte of this function's own stack to read into;
    // `_exit` ends the process without running anything of ours.
    unsafe {
        close_all_but(life);
        libc::setsid();
        libc::signal(libc::SIGCHLD, libc::SIG_IGN);
        let mut byte = 0u8;
        loop {
            let n = libc::read(life, (&raw mut byte).cast(), 1);
            // Nothing writes: a byte is ignored, an interruption retried; end-of-file, or a
            // descriptor that is not the lifeline any more, ends the holder.
            if n == 0 || (n < 0 && *libc::__errno_location() != libc::EINTR) {
                libc::_exit(0);
            }
        }
    }
}

/// Closes every descriptor of this process but `keep`. Async-signal-safe.
///
/// # Safety
/// Only in a forked child that owns nothing of ours by descriptor.
unsafe fn close_all_but(keep: RawFd) {
    let keep = keep as u32;
    let ranges = [(0u32, keep.checked_sub(1)), (keep + 1, Some(u32::MAX))];
    for (first, last) in ranges {
        let Some(last) = last else { continue };
        // SAFETY: close_range takes integers; the loop closes descriptors one by one where
        // the kernel lacks it.
        unsafe {
            if libc::syscall(libc::SYS_close_range, first, last, 0u32) != 0 {
                for fd in first..last.min(65_535) + 1 {
                    libc::close(fd as i32);
                }
            }
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
    /// The holder's lifeline: its reading end goes to the holder, its writing end to the room.
    life: Lifeline,
}

impl ChildMade {
    /// The pipe the child's pids come back on, made before the fork (both ends close on
    /// `exec`).
    pub(crate) fn new() -> io::Result<Self> {
        let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
        Ok(Self {
            read,
            write,
            life: Lifeline::new()?,
        })
    }

    /// What the forked child needs: the pipe's writing end, valid while `self` lives (until
    /// [`ChildMade::finish`], after the spawn).
    pub(crate) fn splitter(&self) -> Splitter {
        Splitter {
            write: self.write.as_raw_fd(),
            life: self.life.read.as_raw_fd(),
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
        // The holder has its own copy of the reading end (or none was made).
        drop(self.life.read);
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
        let room = PidRoom {
            holder,
            life: Some(self.life.write),
        };
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
    write: RawFd,
    /// The reading end of the holder's lifeline.
    life: RawFd,
}

impl Splitter {
    /// In the forked child, once its namespaces are made (`unshare` with `CLONE_NEWPID`):
    /// forks the holder and the worker into the new namespace. Returns in the worker only;
    /// the child that made them ends here, after writing their pids. Raw system calls only,
    /// no allocation.
    pub(crate) fn split(&self) -> io::Result<()> {
        let holder = clone_sibling()?;
        if holder == 0 {
            hold(self.life);
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

    /// A holder whose room's lifeline closes ends by itself, killed by nobody: so one whose
    /// engine died (its every descriptor closed, a `SIGKILL` at any instant) ends too. No
    /// namespace is needed to see it: the holder is forked the same way.
    #[test]
    fn a_holder_ends_when_its_lifeline_closes_with_nobody_killing_it() {
        let (holder, life) = start_holder(Lifeline::new().unwrap()).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let alive = nix::sys::wait::waitpid(holder, Some(nix::sys::wait::WaitPidFlag::WNOHANG));
        assert_eq!(alive, Ok(nix::sys::wait::WaitStatus::StillAlive));
        drop(life);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let status = loop {
            match nix::sys::wait::waitpid(holder, Some(nix::sys::wait::WaitPidFlag::WNOHANG)) {
                Ok(nix::sys::wait::WaitStatus::StillAlive)
                    if std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(10))
                }
                other => break other,
            }
        };
        if status == Ok(nix::sys::wait::WaitStatus::StillAlive) {
            let _ = kill(holder, Signal::SIGKILL);
            let _ = waitpid(holder, None);
        }
        assert_eq!(status, Ok(nix::sys::wait::WaitStatus::Exited(holder, 0)));
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
