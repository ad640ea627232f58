//! The filters as the kernel applies them: a forked child with the worker's filter installed
//! makes real system calls, and how it ends (and the kernel's audit line) is the verdict.
//! Skipped where the kernel has no seccomp (qemu-user).

use super::*;

/// Runs `body` in a forked child with the worker's filter installed; how the child ended.
/// The child makes raw system calls only (the parent has other threads: no allocation).
fn in_filtered_child(body: fn()) -> nix::sys::wait::WaitStatus {
    in_filtered_child_and_pid(body).1
}

fn in_filtered_child_and_pid(body: fn()) -> (u32, nix::sys::wait::WaitStatus) {
    let programs = programs(Kind::Worker).unwrap();
    // SAFETY: the child runs only `prctl`, the filter's installation (which copies from
    // programs built before the fork) and `body`'s raw system calls, then `_exit`s.
    match unsafe { libc::fork() } {
        0 => unsafe {
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
            for p in &programs {
                if seccompiler::apply_filter(p).is_err() {
                    libc::_exit(3);
                }
            }
            body();
            libc::_exit(0)
        },
        pid => (
            pid as u32,
            nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(pid), None).unwrap(),
        ),
    }
}

/// Seccomp where the kernel has it (not under qemu-user, which implements none).
fn kernel_filters() -> bool {
    // SAFETY: PR_GET_SECCOMP takes no pointer.
    let answered = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 };
    answered && std::fs::read_to_string("/proc/self/status").is_ok_and(|s| s.contains("Seccomp:"))
}

#[test]
fn every_allowed_call_runs_in_a_filtered_process() {
    if !kernel_filters() {
        return;
    }
    use nix::sys::wait::WaitStatus;
    // Every allowed call with arguments it refuses at once (-1 everywhere: bad descriptors,
    // bad pointers, bad flags), but those that would end, fork or signal the process.
    fn body() {
        let skip = [
            libc::SYS_exit,
            libc::SYS_exit_group,
            libc::SYS_rt_sigreturn,
            libc::SYS_restart_syscall,
            libc::SYS_clone,
            libc::SYS_kill,
            libc::SYS_tkill,
            libc::SYS_tgkill,
            libc::SYS_set_tid_address,
            libc::SYS_ioctl,
            libc::SYS_prctl,
            libc::SYS_prlimit64,
            libc::SYS_perf_event_open,
            #[cfg(target_arch = "x86_64")]
            libc::SYS_fork,
            #[cfg(target_arch = "x86_64")]
            libc::SYS_vfork,
            #[cfg(target_arch = "x86_64")]
            libc::SYS_alarm,
            // Waits for a signal (a hanging candidate's `pause()`), bad arguments or not.
            libc::SYS_rt_sigsuspend,
            #[cfg(target_arch = "x86_64")]
            libc::SYS_pause,
        ];
        let bad = -1i64;
        for &(_, nr, _) in ALLOWED {
            if !skip.contains(&nr) {
                // SAFETY: every argument is invalid, so the kernel refuses before acting.
                unsafe { libc::syscall(nr, bad, bad, bad, bad, bad, bad) };
            }
        }
        // SAFETY: the allowed forms of the argument-checked calls, each harmless.
        unsafe {
            libc::syscall(libc::SYS_kill, libc::getpid(), 0);
            libc::syscall(libc::SYS_ioctl, 1, 0x5401, 0);
            libc::syscall(libc::SYS_prctl, libc::PR_GET_DUMPABLE, 0, 0, 0, 0);
            libc::syscall(libc::SYS_prlimit64, 0, libc::RLIMIT_AS, 0, bad);
            libc::syscall(libc::SYS_perf_event_open, bad, 0, -1, -1, 0);
            // clone3 answers ENOSYS: glibc then uses clone.
            if libc::syscall(libc::SYS_clone3, 0, 0) != -1
                || *libc::__errno_location() != libc::ENOSYS
            {
                libc::_exit(4);
            }
        }
    }
    let status = in_filtered_child(body);
    assert!(matches!(status, WaitStatus::Exited(_, 0)), "{status:?}");
}

#[test]
fn calls_just_outside_the_list_kill_the_process_and_are_named() {
    if !kernel_filters() {
        return;
    }
    use nix::sys::wait::WaitStatus;
    // SAFETY (each): a raw system call with plain numbers; the filter kills before it runs.
    let tries: [(&str, fn()); 8] = [
        ("socket", || unsafe {
            libc::syscall(libc::SYS_socket, libc::AF_INET, libc::SOCK_STREAM, 0);
        }),
        ("unshare", || unsafe {
            libc::syscall(libc::SYS_unshare, libc::CLONE_NEWUSER);
        }),
        ("fchmodat", || unsafe {
            libc::syscall(libc::SYS_fchmodat, libc::AT_FDCWD, c"/".as_ptr(), 0o755);
        }),
        ("sethostname", || unsafe {
            libc::syscall(libc::SYS_sethostname, c"x".as_ptr(), 1);
        }),
        ("ioctl", || unsafe {
            libc::syscall(libc::SYS_ioctl, 0, libc::TIOCSTI, c"x".as_ptr());
        }),
        ("clone", || unsafe {
            libc::syscall(
                libc::SYS_clone,
                libc::CLONE_NEWUSER | libc::SIGCHLD,
                0,
                0,
                0,
                0,
            );
        }),
        ("prctl", || unsafe {
            libc::syscall(libc::SYS_prctl, libc::PR_SET_DUMPABLE, 1, 0, 0, 0);
        }),
        ("perf_event_open", || unsafe {
            libc::syscall(libc::SYS_perf_event_open, 0, 1, -1, -1, 0);
        }),
    ];
    // Where the kernel log is readable (root, as in CI), each death names its call there.
    // The kernel drops audit lines past ten in five seconds (`printk_ratelimit`), and the
    // tests running beside this one make kills of their own: a death left unnamed is tried
    // again once the window has passed.
    let log_readable = std::fs::File::open("/dev/kmsg").is_ok();
    let ratelimit_window = std::time::Duration::from_millis(5_500);
    for (name, body) in tries {
        let mut named = None;
        for attempt in 0..2 {
            if attempt > 0 {
                std::thread::sleep(ratelimit_window);
            }
            let since = std::time::Instant::now();
            let (pid, status) = in_filtered_child_and_pid(body);
            assert!(
                matches!(
                    status,
                    WaitStatus::Signaled(_, nix::sys::signal::Signal::SIGSYS, _)
                ),
                "{name}: {status:?}"
            );
            if !log_readable {
                break;
            }
            named = crate::worker::audit::forbidden_call(pid, since);
            if named.is_some() {
                break;
            }
        }
        if log_readable {
            assert_eq!(named, Some(name));
        }
    }
    for name in [
        "socket",
        "unshare",
        "fchmodat",
        "sethostname",
        "execve",
        "ptrace",
    ] {
        assert!(
            NAMED_DENIED
                .iter()
                .any(|&(n, nr)| n == name && name_of(nr) == Some(name))
        );
    }
}

#[test]
fn the_trial_worker_reads_its_filter_where_it_is_handed_over() {
    assert_eq!(crate::companion::sandbox::FILTER_FD, WORKER_FILTER_FD);
    let fd = filter_memfd(Kind::Worker).unwrap();
    // Sealed: not even this process can change what every worker installs.
    // SAFETY: a write of one byte from a live buffer to a descriptor this process holds.
    assert_eq!(unsafe { libc::write(fd, c"x".as_ptr().cast(), 1) }, -1);
    assert_eq!(filter_memfd(Kind::Worker).unwrap(), fd);
    assert_ne!(filter_memfd(Kind::Valgrind).unwrap(), fd);
}
