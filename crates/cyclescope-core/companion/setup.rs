//! The trial worker's own setup, before the candidate is loaded, in the order the engine's
//! other workers use (`worker::child`): die with the parent, take the session token from stdin
//! and put `/dev/null` there, keep a private copy of stdout for the protocol and send fd 1 to
//! stderr, close every inherited descriptor but the library's, forbid new privileges, set the kernel limits (address
//! space, CPU time, file size, open descriptors), pin
//! to the measurement CPU. The sandbox comes last (`sandbox`).

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

/// Sets the process up and returns the protocol channel.
pub(crate) fn enter(inv: &Invocation<'_>) -> Result<Channel, SetupError> {
    die_with_parent()?;
    let token = take_token(inv.fresh_seed.is_some())?;
    let proto = sys::dup_fd(1).map_err(sys_err("dup stdout"))?;
    // From here on fd 1 is stderr: whatever the candidate prints ends up in the captured tail.
    sys::dup2_fd(2, 1).map_err(sys_err("redirect stdout"))?;
    close_inherited(proto);
    sys::prctl_int(sys::PR_SET_NO_NEW_PRIVS, 1).map_err(sys_err("no_new_privs"))?;
    sys::set_rlimit(sys::RLIMIT_CORE, 0, 0).map_err(sys_err("RLIMIT_CORE"))?;
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
    if let Some(cpu) = inv.cpu {
        sys::pin_to(cpu).map_err(sys_err("pin to the measurement CPU"))?;
    }
    Ok(Channel::new(proto, token))
}

/// The kernel kills this process when its parent dies; a parent that died before the request
/// was made is noticed by the changed parent id.
fn die_with_parent() -> Result<(), SetupError> {
    sys::prctl_int(sys::PR_SET_PDEATHSIG, sys::SIGKILL as _)
        .map_err(sys_err("PR_SET_PDEATHSIG"))?;
    let expected = sys::env(PARENT_PID_ENV)
        .and_then(super::args::number)
        .and_then(|p| c_int::try_from(p).ok());
    match expected {
        Some(pid) if sys::parent_pid() != pid => Err(SetupError::Orphaned),
        _ => Ok(()),
    }
}

/// Reads the token (one line, 32 hex digits) from stdin, then puts `/dev/null` on fd 0 so the
/// candidate finds no trace of it — unless a go line is still to come (`--fresh-seed`), which
/// `read_go_line` reads later and which is no secret.
fn take_token(keep_stdin: bool) -> Result<[u8; 32], SetupError> {
    let mut buf = [0u8; 64];
    let len = read_line(&mut buf);
    let token = parse_token(&buf[..len]).ok_or(SetupError::NoToken)?;
    if !keep_stdin {
        null_stdin()?;
    }
    Ok(token)
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
pub(crate) fn parse_token(line: &[u8]) -> Option<[u8; 32]> {
    let t = line.trim_ascii();
    let token: [u8; 32] = t.try_into().ok()?;
    token.iter().all(u8::is_ascii_hexdigit).then_some(token)
}

/// Where the engine hands over the sealed libraries this worker loads (the engine's
/// `plugin::sealed::WORKER_LIBRARY_FDS`: the same numbers).
const LIBRARY_FDS: [c_int; 2] = [9, 10];

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
