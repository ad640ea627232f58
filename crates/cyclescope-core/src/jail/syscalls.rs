//! The system calls a process running candidate code may make: an allowlist, the one
//! definition every worker installs (the `cyclescope worker` program builds it here itself;
//! the `no_std` trial worker gets the same programs from the engine through a descriptor,
//! [`filter_blob`]). Anything not on it kills the process (`SECCOMP_RET_KILL_PROCESS`), and
//! the parent names the call from the kernel's audit line ([`name_of`]).
//!
//! What is on the list is what the worker's own code, the dynamic loader opening the
//! candidate, the C library and a hash function need: memory, threads, time, signals to
//! itself, reading and writing descriptors, opening files (Landlock decides where), reading
//! its own limits, and its own performance counter. Three calls are allowed only with the
//! arguments a worker needs: `clone` without any `CLONE_NEW*` flag, `perf_event_open` on the
//! calling thread only, `ioctl` with a terminal query or a performance-counter request only
//! (never `TIOCSTI`). `prctl` takes only harmless options and `prlimit64` only the caller's
//! own limits. `clone3` passes its flags in memory, where a filter cannot read them: it fails
//! with `ENOSYS`, and the C library falls back to `clone`, which the filter can check.
//!
//! Under valgrind ([`Kind::Valgrind`]) the filter also holds for valgrind's own calls (it is
//! installed from inside the client), so valgrind gets a few more: the timed signal wait it
//! polls with, and reading links and files by path to find debugging information. valgrind
//! starts under [`launch_programs`], put in force by the engine before `exec`.

mod allowed;

use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::{Mutex, OnceLock};

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op, SeccompCondition,
    SeccompFilter, SeccompRule, TargetArch,
};

use allowed::{ALLOWED, Args};

/// Which process the filter is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A worker running natively.
    Worker,
    /// A worker running under valgrind (`--counter instructions`, `profile`).
    Valgrind,
}

/// What valgrind adds for itself (it runs inside the filter it installs for its client).
const VALGRIND_ALSO: &[(&str, i64)] = &[("rt_sigtimedwait", libc::SYS_rt_sigtimedwait)];

/// What valgrind's start needs beyond that, in the filter the engine puts in force before
/// `exec` ([`launch_programs`]): running its wrapper script's program and then its tool, asking
/// whether the client has file capabilities, and removing the copies of the client's
/// `/proc/self/cmdline` and `auxv` it writes to its scratch folder (Landlock allows removing
/// only there). The trial worker's own filter, installed before the candidate is loaded, takes
/// all of these away again.
const VALGRIND_LAUNCH: &[(&str, i64)] = &[
    ("execve", libc::SYS_execve),
    ("getxattr", libc::SYS_getxattr),
    ("unlinkat", libc::SYS_unlinkat),
    #[cfg(target_arch = "x86_64")]
    ("unlink", libc::SYS_unlink),
];

/// `ioctl` requests a worker may make: terminal queries (the C library asks whether stdout is
/// a terminal) and its own performance counter's requests. `TIOCSTI` is not among them.
const IOCTLS: &[u64] = &[
    0x5401,      // TCGETS
    0x5413,      // TIOCGWINSZ
    0x5450,      // FIONCLEX
    0x5451,      // FIOCLEX
    0x2400,      // PERF_EVENT_IOC_ENABLE
    0x2401,      // PERF_EVENT_IOC_DISABLE
    0x2402,      // PERF_EVENT_IOC_REFRESH
    0x2403,      // PERF_EVENT_IOC_RESET
    0x8008_2407, // PERF_EVENT_IOC_ID
];

/// `prctl` options a worker may use: naming threads and memory, and reading its own state
/// (adding a seccomp filter, or `no_new_privs`, which installing one sets, only narrows it;
/// the signal it gets when its parent dies concerns only itself, and the trial worker asks for
/// it under valgrind's filter).
const PRCTLS: &[u64] = &[
    libc::PR_SET_PDEATHSIG as u64,
    libc::PR_GET_PDEATHSIG as u64,
    libc::PR_SET_NAME as u64,
    libc::PR_GET_NAME as u64,
    libc::PR_GET_DUMPABLE as u64,
    libc::PR_GET_SECCOMP as u64,
    libc::PR_SET_SECCOMP as u64,
    libc::PR_GET_NO_NEW_PRIVS as u64,
    libc::PR_SET_NO_NEW_PRIVS as u64,
    libc::PR_CAPBSET_READ as u64,
    libc::PR_GET_SECUREBITS as u64,
    libc::PR_GET_TIMERSLACK as u64,
    0x5356_4d41, // PR_SET_VMA: the C library names its anonymous mappings
];

/// Every `CLONE_NEW*` flag `clone` takes (CLONE_NEWTIME only goes through `clone3`).
const CLONE_NEW_MASK: u64 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWCGROUP
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET) as u64;

/// Calls named when the filter kills on them, though not allowed: what a hostile candidate
/// tries (the audit line gives only the number).
const NAMED_DENIED: &[(&str, i64)] = &[
    ("socket", libc::SYS_socket),
    ("connect", libc::SYS_connect),
    ("execve", libc::SYS_execve),
    ("execveat", libc::SYS_execveat),
    ("ptrace", libc::SYS_ptrace),
    ("process_vm_readv", libc::SYS_process_vm_readv),
    ("process_vm_writev", libc::SYS_process_vm_writev),
    ("mount", libc::SYS_mount),
    ("umount2", libc::SYS_umount2),
    ("unshare", libc::SYS_unshare),
    ("setns", libc::SYS_setns),
    ("setsid", libc::SYS_setsid),
    ("setpgid", libc::SYS_setpgid),
    ("sched_setaffinity", libc::SYS_sched_setaffinity),
    ("sched_setscheduler", libc::SYS_sched_setscheduler),
    ("sched_setparam", libc::SYS_sched_setparam),
    ("sched_setattr", libc::SYS_sched_setattr),
    ("setpriority", libc::SYS_setpriority),
    ("io_uring_setup", libc::SYS_io_uring_setup),
    ("userfaultfd", libc::SYS_userfaultfd),
    ("bpf", libc::SYS_bpf),
    ("fchmodat", libc::SYS_fchmodat),
    ("fchmod", libc::SYS_fchmod),
    ("fchownat", libc::SYS_fchownat),
    ("fchown", libc::SYS_fchown),
    ("utimensat", libc::SYS_utimensat),
    ("setxattr", libc::SYS_setxattr),
    ("lsetxattr", libc::SYS_lsetxattr),
    ("fsetxattr", libc::SYS_fsetxattr),
    ("unlinkat", libc::SYS_unlinkat),
    ("renameat", libc::SYS_renameat),
    ("mkdirat", libc::SYS_mkdirat),
    ("sethostname", libc::SYS_sethostname),
    ("setdomainname", libc::SYS_setdomainname),
    ("settimeofday", libc::SYS_settimeofday),
    ("clock_settime", libc::SYS_clock_settime),
    ("clock_adjtime", libc::SYS_clock_adjtime),
    ("syslog", libc::SYS_syslog),
    ("pidfd_open", libc::SYS_pidfd_open),
    ("pidfd_send_signal", libc::SYS_pidfd_send_signal),
    ("capset", libc::SYS_capset),
    ("setuid", libc::SYS_setuid),
    ("setresuid", libc::SYS_setresuid),
    ("init_module", libc::SYS_init_module),
    ("finit_module", libc::SYS_finit_module),
    ("kexec_load", libc::SYS_kexec_load),
    ("reboot", libc::SYS_reboot),
    ("keyctl", libc::SYS_keyctl),
    ("add_key", libc::SYS_add_key),
    ("mlock", libc::SYS_mlock),
    #[cfg(target_arch = "x86_64")]
    ("chmod", libc::SYS_chmod),
    #[cfg(target_arch = "x86_64")]
    ("chown", libc::SYS_chown),
    #[cfg(target_arch = "x86_64")]
    ("unlink", libc::SYS_unlink),
    #[cfg(target_arch = "x86_64")]
    ("rename", libc::SYS_rename),
    #[cfg(target_arch = "x86_64")]
    ("mkdir", libc::SYS_mkdir),
];

/// The name of system call `nr` on this architecture, where this module knows it.
pub fn name_of(nr: i64) -> Option<&'static str> {
    ALLOWED
        .iter()
        .map(|&(name, n, _)| (name, n))
        .chain(VALGRIND_ALSO.iter().copied())
        .chain(NAMED_DENIED.iter().copied())
        .find(|&(_, n)| n == nr)
        .map(|(name, _)| name)
}

/// Whether `name` is allowed (with whatever arguments) for `kind`.
pub fn allows(kind: Kind, name: &str) -> bool {
    ALLOWED.iter().any(|&(n, _, _)| n == name)
        || (kind == Kind::Valgrind && VALGRIND_ALSO.iter().any(|&(n, _)| n == name))
}

/// The programs to install, in order: the allowlist (anything else kills the process), then
/// `clone3` answered with ENOSYS (the kernel applies the stricter of the two answers).
pub fn programs(kind: Kind) -> Result<Vec<BpfProgram>, seccompiler::BackendError> {
    programs_with(kind, &[])
}

/// The programs valgrind starts under (`worker::confine::BeforeExec`): [`Kind::Valgrind`]'s,
/// with what its start needs besides ([`VALGRIND_LAUNCH`]).
pub fn launch_programs() -> Result<Vec<BpfProgram>, seccompiler::BackendError> {
    programs_with(Kind::Valgrind, VALGRIND_LAUNCH)
}

fn programs_with(
    kind: Kind,
    extra: &[(&str, i64)],
) -> Result<Vec<BpfProgram>, seccompiler::BackendError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for &(_, nr, args) in ALLOWED {
        rules.insert(nr, rules_for(args)?);
    }
    // clone3 passes the first filter, so that the second one's ENOSYS is its answer.
    rules.insert(libc::SYS_clone3, Vec::new());
    if kind == Kind::Valgrind {
        for &(_, nr) in VALGRIND_ALSO {
            rules.insert(nr, Vec::new());
        }
    }
    for &(_, nr) in extra {
        rules.insert(nr, Vec::new());
    }
    let allowlist = SeccompFilter::new(
        rules,
        SeccompAction::KillProcess,
        SeccompAction::Allow,
        arch,
    )?;
    let clone3 = SeccompFilter::new(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )?;
    Ok(vec![allowlist.try_into()?, clone3.try_into()?])
}

fn rules_for(args: Args) -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
    let one = |index: u8, len: Len, op: Op, value: u64| {
        SeccompCondition::new(index, len, op, value).and_then(|c| SeccompRule::new(vec![c]))
    };
    let among = |index: u8, values: &[u64]| -> Result<Vec<SeccompRule>, _> {
        values
            .iter()
            .map(|&v| one(index, Len::Dword, Op::Eq, v))
            .collect()
    };
    Ok(match args {
        Args::Any => Vec::new(),
        Args::NoNewNamespace => vec![one(0, Len::Qword, Op::MaskedEq(CLONE_NEW_MASK), 0)?],
        Args::CallingThread => vec![one(1, Len::Dword, Op::Eq, 0)?],
        Args::KnownRequest => among(1, IOCTLS)?,
        Args::KnownOption => among(0, PRCTLS)?,
        Args::OwnProcess => vec![one(0, Len::Dword, Op::Eq, 0)?],
    })
}

/// [`programs`] as bytes for a worker that cannot build them (the `no_std` trial worker):
/// for each program, its instruction count (u32, native order), then its instructions
/// (`struct sock_filter`, 8 bytes each).
pub fn filter_blob(kind: Kind) -> Result<Vec<u8>, seccompiler::BackendError> {
    let mut blob = Vec::new();
    for program in programs(kind)? {
        blob.extend_from_slice(&(program.len() as u32).to_ne_bytes());
        for insn in program {
            blob.extend_from_slice(&insn.code.to_ne_bytes());
            blob.push(insn.jt);
            blob.push(insn.jf);
            blob.extend_from_slice(&insn.k.to_ne_bytes());
        }
    }
    Ok(blob)
}

/// The descriptor number a worker finds [`filter_blob`] at (after its libraries,
/// `plugin::sealed::WORKER_LIBRARY_FDS`); the trial worker repeats the number.
pub const WORKER_FILTER_FD: RawFd = 11;

/// A sealed memfd holding [`filter_blob`] for `kind`, made once per process and kept open
/// for its life: every worker is handed the same bytes.
pub fn filter_memfd(kind: Kind) -> io::Result<RawFd> {
    static MEMFDS: OnceLock<Mutex<Vec<(Kind, OwnedFd)>>> = OnceLock::new();
    let mut made = MEMFDS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, fd)) = made.iter().find(|(k, _)| *k == kind) {
        return Ok(fd.as_raw_fd());
    }
    let blob = filter_blob(kind).map_err(io::Error::other)?;
    let fd = super::sealed_memfd(c"cyclescope-syscall-filter", &blob)?;
    let raw = fd.as_raw_fd();
    made.push((kind, fd));
    Ok(raw)
}

#[cfg(test)]
mod tests;
