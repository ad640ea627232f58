//! The worker's allowlist as data: each system call it may make, its number on this
//! architecture, and what its arguments may be. The filters are built from it in the parent.

/// How a listed call is allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Args {
    Any,
    /// `clone`: no namespace flag in the first argument.
    NoNewNamespace,
    /// `perf_event_open`: pid (second argument) 0, the calling thread.
    CallingThread,
    /// `ioctl`: the request (second argument) among [`super::IOCTLS`].
    KnownRequest,
    /// `prctl`: the option (first argument) among [`super::PRCTLS`].
    KnownOption,
    /// `prlimit64`: pid (first argument) 0, the caller itself.
    OwnProcess,
}

/// The allowlist: name, number on this architecture, what its arguments may be.
pub(super) const ALLOWED: &[(&str, i64, Args)] = &[
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
