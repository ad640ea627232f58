//! The child side of a worker: die with the parent, take the session token from stdin, take
//! stdout for the protocol, send the candidate's prints to stderr, drop inherited descriptors,
//! install the system-call filter, read the job, then set its kernel limits and Landlock
//! folders. Everything here happens before the candidate library is loaded; the engine has
//! pinned the worker and dropped its privileges before exec (`group`, `privileges`).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::fd::{AsRawFd, OwnedFd};

use serde::Serialize;

use super::{Limits, PARENT_PID_ENV, SessionToken};

/// The protocol channel to the parent (JSON lines, each after the session token).
pub struct Channel {
    out: BufWriter<File>,
    token: SessionToken,
    /// A copy of the stdin pipe, read to its end before the worker exits ([`Drop`]).
    held: Option<File>,
    /// Whether a message was sent (the engine closes stdin only after the first one).
    sent: bool,
}

impl Drop for Channel {
    /// A worker that has spoken waits until the engine is done looking at it from outside:
    /// the engine reads the worker's protections from its `/proc` entry at its first line,
    /// then closes the worker's stdin, whose end of file this waits for. A worker that
    /// exited at once could be gone, or halfway gone, by then: without its memory, a dying
    /// process's namespaces are closed to an engine that is not root. One that never spoke
    /// does not wait (nothing would close its stdin); nor does one whose library closed the
    /// copy: its protections then go unread, which the record says.
    fn drop(&mut self) {
        let Some(mut held) = self.held.take().filter(|_| self.sent) else {
            return;
        };
        let mut buf = [0u8; 64];
        while matches!(std::io::Read::read(&mut held, &mut buf), Ok(n) if n > 0) {}
    }
}

impl Channel {
    /// Sends one message and flushes (messages are batched by the caller, not here).
    pub fn send<M: Serialize>(&mut self, message: &M) {
        // A parent that went away is not this process's problem to report: it is killed or
        // its pipe closed, and the next write fails the same way.
        let Ok(json) = serde_json::to_vec(message) else {
            return;
        };
        let mut line = Vec::with_capacity(json.len() + 34);
        line.extend_from_slice(self.token.as_str().as_bytes());
        line.push(b' ');
        line.extend_from_slice(&json);
        line.push(b'\n');
        // One write per line: the line reaches the pipe whole or not at all.
        let _ = self.out.write_all(&line);
        let _ = self.out.flush();
        self.sent = true;
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("worker setup: {what}: {source}")]
    Sys {
        what: &'static str,
        source: nix::Error,
    },
    #[error(transparent)]
    Sandbox(#[from] super::sandbox::SandboxError),
    #[error("worker setup: no session token on stdin (workers are started by cyclescope)")]
    NoToken,
    #[error("worker setup: the parent process ended before the worker started")]
    Orphaned,
    #[error("worker setup: reading the job from stdin: {0}")]
    Job(std::io::Error),
}

fn sys(what: &'static str) -> impl FnOnce(nix::Error) -> SetupError {
    move |source| SetupError::Sys { what, source }
}

/// A worker set up to the point where it knows its job: the protocol channel and the job's
/// arguments (`job_block`), read once the system-call filter was in force.
pub struct Entered {
    pub channel: Channel,
    pub job: Vec<String>,
}

/// Prepares this process to host a candidate, the same way for every job: dies with the
/// parent, takes the session token, keeps stdout for the protocol, closes what it inherited,
/// forbids new privileges and core dumps, installs the system-call filter, and only then
/// reads its job from stdin (replaced by `/dev/null` after). The job's limits and folders
/// come next, with [`confine`].
pub fn enter() -> Result<Entered, SetupError> {
    die_with_parent()?;
    let token = SessionToken::read_from(std::io::stdin().lock()).ok_or(SetupError::NoToken)?;
    let proto: OwnedFd = nix::unistd::dup(std::io::stdout()).map_err(sys("dup stdout"))?;
    // From here on fd 1 is stderr: whatever the candidate prints ends up in the captured tail.
    nix::unistd::dup2_stdout(std::io::stderr()).map_err(sys("redirect stdout"))?;
    // Kept for the end (`Channel`'s drop); stdin itself becomes /dev/null below.
    let held: OwnedFd = nix::unistd::dup(std::io::stdin()).map_err(sys("dup stdin"))?;
    close_inherited(&[proto.as_raw_fd(), held.as_raw_fd()]);
    nix::sys::prctl::set_no_new_privs().map_err(sys("no_new_privs"))?;
    lower(libc::RLIMIT_CORE, 0, 0, "RLIMIT_CORE")?;
    super::sandbox::filter()?;
    let job = super::job_block::read(&mut std::io::stdin().lock(), super::job_block::MAX_BYTES)
        .map_err(SetupError::Job)?;
    null_stdin()?;
    Ok(Entered {
        channel: Channel {
            out: BufWriter::new(File::from(proto)),
            token,
            held: Some(File::from(held)),
            sent: false,
        },
        job,
    })
}

/// The job's part of the setup, after [`enter`]: its kernel limits, and Landlock over the
/// files it may read beneath `readable` (beyond the system's, `jail::reads`) and write
/// beneath `writable` (KAT text). Everything here happens before the candidate is loaded.
pub fn confine(
    limits: Limits,
    writable: &[std::path::PathBuf],
    readable: &[std::path::PathBuf],
) -> Result<(), SetupError> {
    if let Some(bytes) = limits.address_space_bytes {
        lower(libc::RLIMIT_AS, bytes, bytes, "RLIMIT_AS")?;
    }
    if let Some(secs) = limits.cpu_seconds {
        // Soft limit sends SIGXCPU, the hard one a second later SIGKILL.
        lower(libc::RLIMIT_CPU, secs, secs + 1, "RLIMIT_CPU")?;
    }
    if let Some(bytes) = limits.file_size_bytes {
        // A write beyond it fails and sends SIGXFSZ, which kills the worker by default.
        lower(libc::RLIMIT_FSIZE, bytes, bytes, "RLIMIT_FSIZE")?;
    }
    if let Some(n) = limits.open_files {
        lower(libc::RLIMIT_NOFILE, n, n, "RLIMIT_NOFILE")?;
    }
    // Last, so the worker's own setup is done, and before the candidate is loaded.
    super::sandbox::install(writable, readable)?;
    Ok(())
}

/// `jail::limits::lower`, its failure named after `name`.
fn lower(
    resource: libc::__rlimit_resource_t,
    soft: u64,
    hard: u64,
    name: &'static str,
) -> Result<(), SetupError> {
    crate::jail::limits::lower(resource, soft, hard).map_err(|e| {
        sys(name)(nix::Error::from_raw(
            e.raw_os_error().unwrap_or(libc::EINVAL),
        ))
    })
}

/// Puts `/dev/null` on stdin, so the candidate finds no trace of the token or the job on fd 0.
fn null_stdin() -> Result<(), SetupError> {
    let null = nix::fcntl::open(
        "/dev/null",
        nix::fcntl::OFlag::O_RDONLY,
        nix::sys::stat::Mode::empty(),
    )
    .map_err(sys("open /dev/null"))?;
    nix::unistd::dup2_stdin(&null).map_err(sys("replace stdin"))?;
    Ok(())
}

/// The kernel kills this process when its parent dies (the candidate's own children do not
/// inherit it; the parent kills the process group for them). A parent that died before the
/// request was made is noticed by the changed parent id.
fn die_with_parent() -> Result<(), SetupError> {
    nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
        .map_err(sys("PR_SET_PDEATHSIG"))?;
    let expected = std::env::var(PARENT_PID_ENV)
        .ok()
        .and_then(|p| p.parse::<i32>().ok());
    // 0: the parent is outside this worker's PID namespace (`jail::namespaces::PidRoom`),
    // alive; had it died, the namespace's holder would be the parent (1), or all be gone.
    match (expected, nix::unistd::getppid().as_raw()) {
        (_, 0) | (None, _) => Ok(()),
        (Some(pid), parent) if parent != pid => Err(SetupError::Orphaned),
        _ => Ok(()),
    }
}

/// Closes every descriptor above stderr except those in `keep` and the sealed libraries the engine
/// handed over (`plugin::sealed::WORKER_LIBRARY_FDS`, loaded after this): each number below the descriptor
/// table's size (`FDSize` in `/proc/self/status`; every open descriptor is below it). Listing
/// `/proc/self/fd` instead would cost a 32 KiB directory buffer, which stays resident in the
/// worker's heap and so in the candidate's baseline RSS.
fn close_inherited(keep: &[i32]) {
    let table_size = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("FDSize:"))?
                .trim()
                .parse::<i32>()
                .ok()
        })
        // Unreadable: the soft descriptor limit bounds every descriptor number too.
        .or_else(|| {
            nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
                .ok()
                .and_then(|(soft, _)| i32::try_from(soft).ok())
        })
        .unwrap_or(1024);
    let library = crate::plugin::sealed::WORKER_LIBRARY_FDS;
    for fd in (3..table_size).filter(|fd| !keep.contains(fd) && !library.contains(fd)) {
        // EBADF for the numbers that are not open is expected.
        let _ = nix::unistd::close(fd);
    }
}
