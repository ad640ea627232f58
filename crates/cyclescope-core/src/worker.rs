//! Worker processes: candidate code never runs in the process that drives the TUI or the CLI.
//! The parent side spawns `cyclescope worker` as the leader of its own process group, hands
//! it a session token and then its job on stdin (`job_block`: never on its command line), reads its typed messages (token-marked JSON lines on the
//! child's stdout, which the child reserves for the protocol), keeps the tail of its stderr
//! (where the child sends the candidate's own stdout and stderr), enforces one deadline over
//! the whole exchange and cancellation, ends at once a worker found stopped (by itself or a
//! process it started: it would only wait out the deadline), reads the worker's CPU time from
//! outside, then kills the whole group and classifies how it ended. A line that is not the worker's own (no
//! token, not JSON, out of order by the caller's rules) ends it as tampered with. The child
//! side (`child`) sets the process up. It knows nothing of KAT or measurement: messages are a
//! type parameter.

pub(crate) mod audit;
pub mod child;
pub mod confine;
mod exchange;
mod go_line;
pub(crate) mod group;
pub mod image;
pub mod job_block;
pub mod limits;
pub mod observed;
pub mod one_shot;
mod outcome;
mod pass_fds;
pub(crate) mod place;
mod protocol_line;
pub mod sandbox;
mod session;
mod watch;

#[cfg(test)]
mod jail_tests;

pub use group::Stopped;
pub use limits::Limits;
pub use outcome::{Exit, Outcome};
pub use session::SessionToken;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;

use exchange::{Exchange, Framing};
use go_line::GoLine;
use group::Group;
use protocol_line::{classify, parse_line};
use watch::{Watch, group_limits};

/// The environment variable that tells a worker its parent's process id (the worker exits if
/// it was orphaned before it could ask to die with its parent).
pub(crate) const PARENT_PID_ENV: &str = "CYCLESCOPE_WORKER_PARENT";

/// How often the exchange looks at the cancel flag and the worker's state.
const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// How often the exchange scans `/proc` for a stopped process of the worker's group (the
/// leader itself is looked at every poll).
const GROUP_SCAN_INTERVAL: Duration = Duration::from_millis(250);

/// Bytes of the child's stderr kept for records and error messages (the harness keeps 2000).
pub(crate) const STDERR_TAIL_BYTES: usize = 2000;

/// What valgrind writes when it meets an instruction it cannot decode (then SIGILL).
pub(crate) const UNDECODED_MARK: &str = "unhandled instruction bytes:";

/// Why a message breaks the protocol (returned by a caller's message handler).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tampering(pub String);

#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("cannot start worker {exe}: {source}")]
    Spawn {
        exe: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot draw a session token for a worker: {0}")]
    Token(std::io::Error),
}

/// What to run.
#[derive(Debug, Clone)]
pub struct WorkerCommand {
    pub exe: PathBuf,
    /// The job: the arguments a worker reads after `worker`, sent on its stdin after the
    /// session token (`job_block`), never on its command line.
    pub args: Vec<String>,
    pub timeout: Duration,
    pub cancel: Option<Arc<AtomicBool>>,
    /// The limits the arguments give the worker (to name the one it dies of).
    pub limits: Limits,
    /// The CPU the arguments pin the worker to: the parent checks it stays there.
    pub pinned_cpu: Option<usize>,
    /// A program the worker runs under, with its arguments before the worker's (valgrind,
    /// for an instruction count: `counter::callgrind`).
    pub launcher: Option<(PathBuf, Vec<String>)>,
    /// A line written on the worker's stdin after its first protocol line (the fresh-message
    /// probe's seed), the worker's CPU clock read just before: see `Outcome::cpu_after_go`.
    pub go_line: Option<String>,
    /// The libraries the worker loads, sealed once for the run (`plugin::sealed`): handed over
    /// as descriptors at `WORKER_LIBRARY_FDS`, in this order; the arguments name them by
    /// `sealed::worker_path`.
    pub libraries: Vec<Arc<crate::plugin::sealed::SealedLibrary>>,
    /// The folder the worker starts in, None for the engine's: a KAT job's output folder,
    /// which a worker of root (an unprivileged user, `identity`) reaches as `.` whatever
    /// the folders above it let that user pass.
    pub cwd: Option<PathBuf>,
    /// For the trial worker, what its job hands it on disk: its Landlock ruleset is then
    /// enforced before exec (`confine`). None for `cyclescope worker`, which confines itself.
    pub files: Option<confine::JobFiles>,
}

/// The executable that hosts workers: `$CYCLESCOPE_WORKER_EXE`, else this executable (its
/// path as first asked: once the file is replaced the kernel's link reads "… (deleted)").
pub fn default_exe() -> PathBuf {
    own_exe().0.clone()
}

/// [`default_exe`], and whether it is this program itself.
fn own_exe() -> &'static (PathBuf, bool) {
    static OWN: std::sync::OnceLock<(PathBuf, bool)> = std::sync::OnceLock::new();
    OWN.get_or_init(|| match std::env::var_os("CYCLESCOPE_WORKER_EXE") {
        Some(p) => (PathBuf::from(p), false),
        None => std::env::current_exe()
            .map(|p| (p, true))
            .unwrap_or_else(|_| (PathBuf::from("cyclescope"), false)),
    })
}

/// Whether `exe` is this program's own image ([`default_exe`] without an override).
fn is_own_exe(exe: &std::path::Path) -> bool {
    let (own, is_self) = own_exe();
    *is_self && own == exe
}

/// The program that hosts trials, as records name it: the `no_std` companion built from
/// `crates/cyclescope-worker` (see `catalog::bundled::trial_worker`).
pub(crate) const TRIAL_WORKER_NAME: &str = "cyclescope-worker";

/// Runs a worker to its end, handing each message to `on_message` as it arrives; a handler
/// that rejects a message (out of the protocol's order) ends the worker as tampered with.
pub fn run<M: DeserializeOwned>(
    cmd: &WorkerCommand,
    on_message: impl FnMut(M) -> Result<(), Tampering>,
) -> Result<Outcome, WorkerError> {
    run_watched(cmd, &mut |_| {}, on_message)
}

/// [`run`], also calling `on_wait` with the time since the start at every poll while the
/// worker runs (at most every `POLL_INTERVAL` apart when it is quiet): how a caller tells
/// the operator about a worker running far past what was expected of it.
pub(crate) fn run_watched<M: DeserializeOwned>(
    cmd: &WorkerCommand,
    on_wait: &mut dyn FnMut(Duration),
    mut on_message: impl FnMut(M) -> Result<(), Tampering>,
) -> Result<Outcome, WorkerError> {
    let started = Instant::now();
    let token = SessionToken::generate().map_err(WorkerError::Token)?;
    // The worker inherits this thread's scheduling: what it must still have at the end.
    let expected = place::Expected::of_this_thread(cmd.pinned_cpu);
    let mut command = match &cmd.launcher {
        // The image opened once, not the path: replacing the file mid-run fails no job.
        None => image::command(&cmd.exe),
        // valgrind opens the program by the path it is given (the trial worker in the cache).
        Some((program, args)) => {
            let mut c = Command::new(program);
            c.args(args).arg(&cmd.exe);
            c
        }
    };
    let job = job_block::encode(&cmd.args).map_err(|source| WorkerError::Spawn {
        exe: cmd.exe.clone(),
        source,
    })?;
    command
        .arg("worker")
        .env(PARENT_PID_ENV, std::process::id().to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = &cmd.cwd {
        command.current_dir(dir);
    }
    // Where the machine offers control groups, the worker and all it starts are bounded and
    // counted together from outside: memory, process count, the peak, an OOM kill. Joined
    // first, before the descriptors are put in place.
    let bounds = crate::jail::cgroup::Cgroup::create("worker", group_limits(&cmd.limits)).ok();
    if let Some(group) = &bounds {
        group.join_at_exec(&mut command);
    }
    // The system-call filter the worker installs, valgrind's own list under valgrind; where
    // none can be made the worker says so (its sandbox reports no filter).
    let kind = match cmd.launcher {
        Some(_) => crate::jail::syscalls::Kind::Valgrind,
        None => crate::jail::syscalls::Kind::Worker,
    };
    let filter = crate::jail::syscalls::filter_memfd(kind).ok();
    pass_fds::pass_descriptors(&mut command, &cmd.libraries, filter);
    // The trial worker's Landlock ruleset (made here, before the fork) is enforced last
    // before exec, after the namespaces' mounts and the privileges (a Landlock-restricted
    // process may not mount).
    let spawn_error = |source| WorkerError::Spawn {
        exe: cmd.exe.clone(),
        source,
    };
    let ruleset = match &cmd.files {
        Some(files) => {
            let launcher = cmd.launcher.as_ref().map(|(p, _)| p.as_path());
            let files = confine::JobFiles::for_worker(&cmd.exe, launcher, files);
            confine::prepare(&mut command, &files).map_err(spawn_error)?
        }
        None => None,
    };
    // valgrind starts under a filter too: the worker's own, inside, comes only with its client.
    let filters = match cmd.launcher {
        Some(_) => crate::jail::syscalls::launch_programs()
            .map_err(|e| spawn_error(std::io::Error::other(e)))?,
        None => Vec::new(),
    };
    let mut group = Group::spawn_worker(
        &mut command,
        cmd.pinned_cpu,
        confine::kept_for(cmd),
        confine::BeforeExec { ruleset, filters },
    )
    .map_err(|source| WorkerError::Spawn {
        exe: cmd.exe.clone(),
        source,
    })?;
    let child = group.child_mut();
    let mut stdin = child.stdin.take();
    if let Some(stdin) = &mut stdin {
        // A worker that died at once cannot take it: its end tells why. Both fit in the
        // pipe's buffer; the worker reads the job once its filter is in force.
        let mut first = format!("{}\n", token.as_str()).into_bytes();
        first.extend_from_slice(&job);
        let _ = stdin.write_all(&first);
    }
    // Without a go line stdin is held open until the worker's first line has been read and
    // its protections looked at, then closed: a std worker that has spoken waits for that
    // end of file before it exits (`child::Channel`), so it is still whole when looked at.
    let (stdin, mut held) = match cmd.go_line {
        Some(_) => (stdin, None),
        None => (None, stdin),
    };
    let mut go = GoLine::new(cmd.go_line.as_deref(), stdin);
    let mut pipes = Exchange::new(child.stdout.take(), child.stderr.take());
    pipes.wake_on_exit(group.pid());
    // The worker speaks only once its setup (pinning included) is done: from its first line
    // on, the parent watches where it runs.
    let set_up = std::cell::Cell::new(false);
    // Its protections, read from outside when it first speaks (its sandbox is in place by
    // then, and nothing in it can be undone).
    let leader = group.pid();
    let mut protections = None;
    let mut on_line = |line: Result<&[u8], Framing>| -> Result<(), Tampering> {
        if !set_up.get() {
            protections = observed::Protections::of(leader);
            held.take();
        }
        set_up.set(true);
        let m = parse_line::<M>(line, &token)?;
        on_message(m)
    };
    let mut watch = Watch::new(expected, group.pid());
    let deadline = started + cmd.timeout;
    let mut next_group_scan = started;
    let mut timeout_note = String::new();
    let ended_by = loop {
        if cmd
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
        {
            break Some(Exit::Cancelled);
        }
        let now = Instant::now();
        if now >= deadline {
            timeout_note = format!(
                " (when killed: {}; {})",
                group.leader_stall(),
                match set_up.get() {
                    true => "it had spoken",
                    false => "it had not spoken yet",
                }
            );
            break Some(Exit::TimedOut(started.elapsed()));
        }
        if group.leader_ended() {
            // What it wrote is in the pipes; descendants still holding them are not waited for.
            let drained = pipes.drain(&mut on_line).err().map(|t| Exit::Tampered(t.0));
            // The zombie keeps its last CPU, affinity and scheduling until it is reaped.
            break drained.or_else(|| set_up.get().then(|| watch.look()).flatten());
        }
        let stopped = if now >= next_group_scan {
            next_group_scan = now + GROUP_SCAN_INTERVAL;
            group.stopped()
        } else {
            group.leader_stopped()
        };
        if let Some(s) = stopped {
            // What it wrote before it stopped is in the pipes: it tells where it stopped.
            break Some(match pipes.drain(&mut on_line) {
                Err(t) => Exit::Tampered(t.0),
                Ok(()) => Exit::Stopped(s),
            });
        }
        on_wait(now - started);
        match pipes.pump((deadline - now).min(POLL_INTERVAL), &mut on_line) {
            Err(t) => break Some(Exit::Tampered(t.0)),
            Ok(0) => {}
            Ok(_) => go.after_lines(&group),
        }
        if set_up.get() {
            go.send(&group);
        }
        if set_up.get()
            && let Some(moved) = watch.look_now_and_then()
        {
            break Some(moved);
        }
    };
    // A worker that had ended by its first line has no group in `/proc` any more: the group
    // the engine joined it to at exec is named instead.
    if let (Some(seen), Some(g)) = (protections.as_mut(), &bounds)
        && seen.cgroup.is_empty()
        && let Some(name) = g.paths().first().and_then(|p| p.file_name())
    {
        seen.cgroup = format!("{} (joined at exec by the engine)", name.to_string_lossy());
    }
    let cpu = group
        .leader_ended()
        .then(|| group.leader_cpu_time())
        .flatten();
    let cpu_after_go = go.window();
    // The worker knows its libraries by descriptor; people know them by path.
    let stderr_tail = crate::plugin::sealed::name_originals(&pipes.stderr_tail(), &cmd.libraries);
    let status = group.finish();
    let exit = ended_by.unwrap_or_else(|| classify(status));
    let peak_memory_bytes = bounds.as_ref().and_then(|g| g.peak_memory());
    let group_cpu = bounds.as_ref().and_then(|g| g.cpu_time());
    let killed_for_memory = bounds.as_ref().is_some_and(|g| g.out_of_memory());
    // What the candidate forked out of its process group dies with the control group.
    drop(bounds);
    let limit_note = if killed_for_memory {
        format!(
            " (killed by the kernel: its control group's {} memory limit)",
            crate::format::bytes(group_limits(&cmd.limits).memory_bytes.unwrap_or(0))
        )
    } else if let Exit::TimedOut(_) = exit {
        timeout_note
    } else {
        cmd.limits
            .note(&exit, pipes.allocation_refused(), watch.vm_peak_bytes)
    };
    let sandbox_call = match exit {
        Exit::Signal { number, .. } if number == libc::SIGSYS => {
            audit::forbidden_call(watch.pid, started)
        }
        _ => None,
    };
    Ok(Outcome {
        exit,
        stderr_tail,
        undecoded: pipes.undecoded(),
        wall: started.elapsed(),
        cpu,
        limit_note,
        sandbox_call,
        cpu_after_go,
        peak_memory_bytes,
        group_cpu,
        protections,
    })
}

#[cfg(test)]
mod tests;
