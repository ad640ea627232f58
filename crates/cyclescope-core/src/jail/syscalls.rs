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

use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::{Mutex, OnceLock};

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op, SeccompCondition,
    SeccompFilter, SeccompRule, TargetArch,
};

/// Which process the filter is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A worker running natively.
    Worker,
    /// A worker running under valgrind (`--counter instructions`, `profile`).
    Valgrind,
}

/// How a listed call is allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Args {
    Any,
    /// `clone`: no namespace flag in the first argument.
    NoNewNamespace,
    /// `perf_event_open`: pid (second argument) 0, the calling thread.
    CallingThread,
    /// `ioctl`: the request (second argument) among [`IOCTLS`].
    KnownRequest,
    /// `prctl`: the option (first argument) among [`PRCTLS`].
    KnownOption,
    /// `prlimit64`: pid (first argument) 0, the caller itself.
    OwnProcess,
}

/// The allowlist: name, number on this architecture, what its arguments may be.
const ALLOWED: &[(&str, i64, Args)] = &[
    // Reading, writing and closing descriptors; opening files (Landlock restricts which).
    ("read", libc::SYS_read, Args::Any),
    ("readv", libc::SYS_readv, Args::Any),
    ("pread64", libc::SYS_pread64, Args::Any),
    ("preadv", libc::SYS_preadv, Args::Any),
    ("write", libc::SYS_write, Args::Any),
    ("writev", libc::SYS_writev, Args::Any),
    ("pwrite64", libc::SYS_pwrite64, Args::Any),
    ("pwritev", libc::SYS_pwritev, Args::Any),
    ("openat", libc::SYS_openat, Args::Any),
    ("close", libc::SYS_close, Args::Any),
    ("close_range", libc::SYS_close_range, Args::Any),
    ("lseek", libc::SYS_lseek, Args::Any),
    ("fstat", libc::SYS_fstat, Args::Any),
    ("newfstatat", libc::SYS_newfstatat, Args::Any),
    ("statx", libc::SYS_statx, Args::Any),
    ("readlinkat", libc::SYS_readlinkat, Args::Any),
    ("faccessat", libc::SYS_faccessat, Args::Any),
    ("faccessat2", libc::SYS_faccessat2, Args::Any),
    ("getdents64", libc::SYS_getdents64, Args::Any),
    ("getcwd", libc::SYS_getcwd, Args::Any),
    ("fcntl", libc::SYS_fcntl, Args::Any),
    ("dup", libc::SYS_dup, Args::Any),
    ("dup3", libc::SYS_dup3, Args::Any),
    ("pipe2", libc::SYS_pipe2, Args::Any),
    ("fsync", libc::SYS_fsync, Args::Any),
    ("fdatasync", libc::SYS_fdatasync, Args::Any),
    ("ftruncate", libc::SYS_ftruncate, Args::Any),
    ("ppoll", libc::SYS_ppoll, Args::Any),
    ("pselect6", libc::SYS_pselect6, Args::Any),
    ("ioctl", libc::SYS_ioctl, Args::KnownRequest),
    // Memory.
    ("brk", libc::SYS_brk, Args::Any),
    ("mmap", libc::SYS_mmap, Args::Any),
    ("munmap", libc::SYS_munmap, Args::Any),
    ("mremap", libc::SYS_mremap, Args::Any),
    ("mprotect", libc::SYS_mprotect, Args::Any),
    ("madvise", libc::SYS_madvise, Args::Any),
    ("mincore", libc::SYS_mincore, Args::Any),
    ("msync", libc::SYS_msync, Args::Any),
    // Threads and children of its own (the process group and the cgroup hold them).
    ("clone", libc::SYS_clone, Args::NoNewNamespace),
    ("exit", libc::SYS_exit, Args::Any),
    ("exit_group", libc::SYS_exit_group, Args::Any),
    ("wait4", libc::SYS_wait4, Args::Any),
    ("waitid", libc::SYS_waitid, Args::Any),
    ("futex", libc::SYS_futex, Args::Any),
    ("set_robust_list", libc::SYS_set_robust_list, Args::Any),
    ("set_tid_address", libc::SYS_set_tid_address, Args::Any),
    ("rseq", libc::SYS_rseq, Args::Any),
    ("sched_yield", libc::SYS_sched_yield, Args::Any),
    ("sched_getaffinity", libc::SYS_sched_getaffinity, Args::Any),
    (
        "sched_getscheduler",
        libc::SYS_sched_getscheduler,
        Args::Any,
    ),
    ("sched_getparam", libc::SYS_sched_getparam, Args::Any),
    (
        "sched_get_priority_max",
        libc::SYS_sched_get_priority_max,
        Args::Any,
    ),
    (
        "sched_get_priority_min",
        libc::SYS_sched_get_priority_min,
        Args::Any,
    ),
    ("getpriority", libc::SYS_getpriority, Args::Any),
    ("getcpu", libc::SYS_getcpu, Args::Any),
    // Signals (Landlock's signal scope keeps them inside the worker).
    ("kill", libc::SYS_kill, Args::Any),
    ("tkill", libc::SYS_tkill, Args::Any),
    ("tgkill", libc::SYS_tgkill, Args::Any),
    ("rt_sigaction", libc::SYS_rt_sigaction, Args::Any),
    ("rt_sigprocmask", libc::SYS_rt_sigprocmask, Args::Any),
    ("rt_sigreturn", libc::SYS_rt_sigreturn, Args::Any),
    ("sigaltstack", libc::SYS_sigaltstack, Args::Any),
    ("rt_sigsuspend", libc::SYS_rt_sigsuspend, Args::Any),
    ("rt_sigpending", libc::SYS_rt_sigpending, Args::Any),
    ("restart_syscall", libc::SYS_restart_syscall, Args::Any),
    // Time.
    ("nanosleep", libc::SYS_nanosleep, Args::Any),
    ("clock_nanosleep", libc::SYS_clock_nanosleep, Args::Any),
    ("clock_gettime", libc::SYS_clock_gettime, Args::Any),
    ("clock_getres", libc::SYS_clock_getres, Args::Any),
    ("gettimeofday", libc::SYS_gettimeofday, Args::Any),
    ("getitimer", libc::SYS_getitimer, Args::Any),
    ("setitimer", libc::SYS_setitimer, Args::Any),
    ("getrusage", libc::SYS_getrusage, Args::Any),
    ("times", libc::SYS_times, Args::Any),
    // Who and where it is.
    ("getpid", libc::SYS_getpid, Args::Any),
    ("getppid", libc::SYS_getppid, Args::Any),
    ("gettid", libc::SYS_gettid, Args::Any),
    ("getuid", libc::SYS_getuid, Args::Any),
    ("geteuid", libc::SYS_geteuid, Args::Any),
    ("getgid", libc::SYS_getgid, Args::Any),
    ("getegid", libc::SYS_getegid, Args::Any),
    ("getgroups", libc::SYS_getgroups, Args::Any),
    ("getresuid", libc::SYS_getresuid, Args::Any),
    ("getresgid", libc::SYS_getresgid, Args::Any),
    ("getpgid", libc::SYS_getpgid, Args::Any),
    ("getsid", libc::SYS_getsid, Args::Any),
    ("capget", libc::SYS_capget, Args::Any),
    ("uname", libc::SYS_uname, Args::Any),
    ("sysinfo", libc::SYS_sysinfo, Args::Any),
    ("getrandom", libc::SYS_getrandom, Args::Any),
    ("prctl", libc::SYS_prctl, Args::KnownOption),
    ("prlimit64", libc::SYS_prlimit64, Args::OwnProcess),
    (
        "perf_event_open",
        libc::SYS_perf_event_open,
        Args::CallingThread,
    ),
    // Adding a filter only narrows what the process may do.
    ("seccomp", libc::SYS_seccomp, Args::Any),
    // So does a Landlock layer: `cyclescope worker` adds its job's folders once its filter is
    // in force and its job read (`worker::sandbox::install`).
    (
        "landlock_create_ruleset",
        libc::SYS_landlock_create_ruleset,
        Args::Any,
    ),
    ("landlock_add_rule", libc::SYS_landlock_add_rule, Args::Any),
    (
        "landlock_restrict_self",
        libc::SYS_landlock_restrict_self,
        Args::Any,
    ),
    // The x86-64 calls the newer ones above replace elsewhere (the C library still makes them).
    #[cfg(target_arch = "x86_64")]
    ("open", libc::SYS_open, Args::Any),
    #[cfg(target_arch = "x86_64")]
    ("stat", libc::SYS_stat, Args::Any),
    #[cfg(target_arch = "x86_64")]
    ("lstat", libc::SYS_lstat, Args::Any),
    #[cfg(target_arch = "x86_64")]
    ("access", libc::SYS_access, Args::Any),
    #[cfg(target_arch = "x86_64")]
    ("readlink", libc::SYS_readlink, Args::Any),
    #[cfg(target_arch = "x86_64")]
    ("dup2", libc::SYS_dup2, Args::Any),
    #[cfg(target_arch = "x86_64")]
    ("pipe", libc::SYS_pipe, Args::Any),
    #[cfg(target_arch = "x86_64")]
    ("poll", libc::SYS_poll, Args::Any),
    #[cfg(target_arch = "x86_64")]
    ("select", libc::SYS_select, Args::Any),
    #[cfg(target_arch = "x86_64")]
    ("fork", libc::SYS_fork, Args::Any),
    #[cfg(target_arch = "x86_64")]
    ("vfork", libc::SYS_vfork, Args::Any),
    #[cfg(target_arch = "x86_64")]
    ("getpgrp", libc::SYS_getpgrp, Args::Any),
    #[cfg(target_arch = "x86_64")]
    ("alarm", libc::SYS_alarm, Args::Any),
    #[cfg(target_arch = "x86_64")]
    ("pause", libc::SYS_pause, Args::Any),
    #[cfg(target_arch = "x86_64")]
    ("time", libc::SYS_time, Args::Any),
    #[cfg(target_arch = "x86_64")]
    ("getrlimit", libc::SYS_getrlimit, Args::Any),
    #[cfg(target_arch = "x86_64")]
    ("arch_prctl", libc::SYS_arch_prctl, Args::Any),
];

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
