//! The trial worker's own setup, before the candidate is loaded, in the order the engine's
//! other workers use (`worker::child`): die with the parent, take the session token from
//! stdin, keep a private copy of stdout for the protocol and send fd 1 to stderr, close every
//! inherited descriptor but the library's, forbid new privileges. Then the sandbox
//! (`sandbox`), and only then the job from stdin (`read_job`), its kernel limits (address
//! space, CPU time, file size, open descriptors) and `/dev/null` on stdin. The engine pinned
//! the process to the measurement CPU before exec.

use core::ffi::c_int;
use core::fmt;

use super::args::Invocation;
use super::json::Channel;
use super::sys;

/// The environment variable holding the parent's process id (`worker::PARENT_PID_ENV`).
const PARENT_PID_ENV: &core::ffi::CStr = c"CYCLESCOPE_WORKER_PARENT";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SetupError {
    Sys { what: &'static str, errno: c_int },
    NoToken,
    Orphaned,
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetupError::Sys { what, errno } => write!(
                f,
                "worker setup: {what}: {} (errno {errno})",
                super::text::Lossy(sys::strerror_text(*errno))
            ),
            SetupError::NoToken => f.write_str(
                "worker setup: no session token on stdin (workers are started by cyclescope)",
            ),
            SetupError::Orphaned => {
                f.write_str("worker setup: the parent process ended before the worker started")
            }
        }
    }
}

fn sys_err(what: &'static str) -> impl FnOnce(c_int) -> SetupError {
    move |errno| SetupError::Sys { what, errno }
}

/// Sets the process up the same way for every job and returns the protocol channel: what a
/// job needs of the setup (its limits) comes after its job is read ([`limit`]).
pub(crate) fn enter() -> Result<Channel, SetupError> {
    die_with_parent()?;
    let token = take_token()?;
    let proto = sys::dup_fd(1).map_err(sys_err("dup stdout"))?;
    // From here on fd 1 is stderr: whatever the candidate prints ends up in the captured tail.
    sys::dup2_fd(2, 1).map_err(sys_err("redirect stdout"))?;
    close_inherited(proto);
    sys::prctl_int(sys::PR_SET_NO_NEW_PRIVS, 1).map_err(sys_err("no_new_privs"))?;
    sys::set_rlimit(sys::RLIMIT_CORE, 0, 0).map_err(sys_err("RLIMIT_CORE"))?;
    Ok(Channel::new(proto, token))
}

/// The room for a job (`worker::job_block::TRIAL_WORKER_BYTES`).
pub(crate) const JOB_BYTES: usize = 4096;

/// Reads the job the engine sent after the token (`worker::job_block`: a decimal byte count on
/// a line, then the arguments, each ended by a NUL) into `buf`: the arguments' bytes.
pub(crate) fn read_job(buf: &mut [u8; JOB_BYTES]) -> Result<&[u8], SetupError> {
    let bad = SetupError::Sys {
        what: "reading the job from stdin",
        errno: sys::EINVAL,
    };
    let mut head = [0u8; 24];
    let mut len = 0;
    // One byte at a time: what follows the line belongs to the job's body.
    while len < head.len() {
        match sys::read_fd(0, &mut head[len..len + 1]) {
            Ok(1) if head[len] == b'\n' => break,
            Ok(1) => len += 1,
            _ => return Err(bad),
        }
    }
    let size = super::args::number(&head[..len])
        .and_then(|n| usize::try_from(n).ok())
        .filter(|&n| n <= JOB_BYTES)
        .ok_or(bad)?;
    read_exact(&mut buf[..size]).ok_or(bad)?;
    Ok(&buf[..size])
}

/// Fills `buf` from fd 0; None at an early end.
fn read_exact(buf: &mut [u8]) -> Option<()> {
    let mut at = 0;
    while at < buf.len() {
        match sys::read_fd(0, &mut buf[at..]) {
            Ok(0) | Err(_) => return None,
            Ok(n) => at += n,
        }
    }
    Some(())
}

/// The job's limits (address space, CPU time, file size, open descriptors), once it is read;
/// then `/dev/null` on stdin, unless a go line is still to come (`--fresh-seed`), which
/// `read_go_line` reads later and which is no secret.
pub(crate) fn limit(inv: &Invocation<'_>) -> Result<(), SetupError> {
    if let Some(bytes) = inv.address_space_bytes {
        sys::set_rlimit(sys::RLIMIT_AS, bytes, bytes).map_err(sys_err("RLIMIT_AS"))?;
    }
    if let Some(secs) = inv.cpu_seconds {
        // The soft limit sends SIGXCPU, the hard one a second later SIGKILL.
        sys::set_rlimit(sys::RLIMIT_CPU, secs, secs.saturating_add(1))
            .map_err(sys_err("RLIMIT_CPU"))?;
    }
    if let Some(bytes) = inv.file_size_bytes {
        // A write beyond it fails and sends SIGXFSZ, which kills the worker by default.
        sys::set_rlimit(sys::RLIMIT_FSIZE, bytes, bytes).map_err(sys_err("RLIMIT_FSIZE"))?;
    }
    if let Some(n) = inv.open_files {
        match sys::set_rlimit(sys::RLIMIT_NOFILE, n, n) {
            // Valgrind keeps descriptors of its own above the client's hard limit and refuses
            // to move it: under it (`--count`) only the soft limit is set, which the record
            // says (`counter::callgrind::RELAXED`).
            Err(sys::EPERM) if inv.count => {
                let hard = sys::hard_rlimit(sys::RLIMIT_NOFILE).unwrap_or(n);
                sys::set_rlimit(sys::RLIMIT_NOFILE, n.min(hard), hard)
            }
            other => other,
        }
        .map_err(sys_err("RLIMIT_NOFILE"))?;
    }
    if inv.fresh_seed.is_none() {
        null_stdin()?;
    }
    Ok(())
}

/// The kernel kills this process when its parent dies; a parent that died before the request
/// was made is noticed by the changed parent id.
fn die_with_parent() -> Result<(), SetupError> {
    sys::prctl_int(sys::PR_SET_PDEATHSIG, sys::SIGKILL as _)
        .map_err(sys_err("PR_SET_PDEATHSIG"))?;
    let expected = sys::env(PARENT_PID_ENV)
        .and_then(super::args::number)
        .and_then(|p| c_int::try_from(p).ok());
    // 0: the parent is outside this worker's PID namespace, alive (as in `worker::child`).
    match (expected, sys::parent_pid()) {
        (_, 0) | (None, _) => Ok(()),
        (Some(pid), parent) if parent != pid => Err(SetupError::Orphaned),
        _ => Ok(()),
    }
}

/// Reads the token's line from stdin: 32 hex digits and a newline, exactly, so that the job
/// after it stays unread.
fn take_token() -> Result<[u8; 32], SetupError> {
    let mut line = [0u8; 33];
    read_exact(&mut line).ok_or(SetupError::NoToken)?;
    parse_token(&line).ok_or(SetupError::NoToken)
}

/// Reads fd 0 into `buf` up to the first newline (kept), its end, or a full buffer; the length.
fn read_line(buf: &mut [u8]) -> usize {
    let mut len = 0;
    while len < buf.len() && !buf[..len].contains(&b'\n') {
        match sys::read_fd(0, &mut buf[len..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => len += n,
        }
    }
    len
}

fn null_stdin() -> Result<(), SetupError> {
    let null = sys::open_read(c"/dev/null").map_err(sys_err("open /dev/null"))?;
    sys::dup2_fd(null, 0).map_err(sys_err("replace stdin"))?;
    sys::close_fd(null);
    Ok(())
}

/// The fresh-message probe's lines on stdin, which the engine writes only while this process
/// waits for them (it reads the process's CPU clock just before): the heads' seed after
/// `ready`, then an acknowledgement after the trial line. Each is one decimal number; None when
/// no such line came (the engine gave up, or the candidate read it first).
pub(crate) fn read_go_line() -> Option<u64> {
    let mut buf = [0u8; 32];
    let len = read_line(&mut buf);
    super::args::number(buf[..len].trim_ascii())
}

/// Puts `/dev/null` on stdin once the engine has nothing more to say.
pub(crate) fn close_go_lines() {
    let _ = null_stdin();
}

/// The token of a line: 32 hex digits, surrounding white space ignored.
pub fn parse_token(line: &[u8]) -> Option<[u8; 32]> {
    let t = line.trim_ascii();
    let token: [u8; 32] = t.try_into().ok()?;
    token.iter().all(u8::is_ascii_hexdigit).then_some(token)
}

/// Where the engine hands over the sealed libraries this worker loads (the engine's
/// `plugin::sealed::WORKER_LIBRARY_FDS`: the same numbers).
const LIBRARY_FDS: [c_int; 2] = [9, 10];

/// Where a job with `--message-fd` finds its message (a sealed memfd): the second library
/// slot, which only a KAT job's oracle uses otherwise.
pub(crate) const MESSAGE_FD: c_int = LIBRARY_FDS[1];

/// Closes every descriptor above stderr except `proto` and the library descriptors:
/// `close_range` where the kernel has it, else each number below the soft descriptor limit.
fn close_inherited(proto: c_int) {
    let mut keep = [proto as u32, LIBRARY_FDS[0] as u32, LIBRARY_FDS[1] as u32];
    keep.sort_unstable();
    let mut first = 3u32;
    let mut ranged = true;
    for k in keep {
        if k >= first {
            ranged &= k == first || sys::close_range(first, k - 1).is_ok();
            first = k + 1;
        }
    }
    ranged &= sys::close_range(first, u32::MAX).is_ok();
    if !ranged {
        let limit = sys::soft_rlimit(sys::RLIMIT_NOFILE).map_or(1024, |l| l.min(1 << 20));
        for fd in (3..limit as c_int).filter(|&fd| !keep.contains(&(fd as u32))) {
            sys::close_fd(fd);
        }
    }
}
