//! The system calls a worker sandbox forbids: a hash function has no business opening
//! sockets, running programs, reaching into other processes, mounting, loading kernel code,
//! doing I/O through io_uring (which would bypass the filter) or moving itself off the CPU,
//! the scheduling policy and the priority the worker set before loading it. One table per architecture, by
//! name and number, written out here rather than taken from the `libc` crate because the trial
//! worker companion (`companion/`, no `std`, no dependencies) includes this file too; a test
//! compares every number with `libc`'s. Nothing here installs a filter.

/// How many system calls are forbidden.
pub(crate) const FORBIDDEN_COUNT: usize = 41;

/// x86-64 numbers (`asm/unistd_64.h`).
#[cfg(target_arch = "x86_64")]
pub(crate) const FORBIDDEN: [(&str, i64); FORBIDDEN_COUNT] = [
    // Network (and local daemons): no socket of any family.
    ("socket", 41),
    // Leaving the worker's process group or session: a descendant that did would outlive the
    // group kill at the end of the job.
    ("setsid", 112),
    ("setpgid", 109),
    // Running other programs.
    ("execve", 59),
    ("execveat", 322),
    // Other processes' memory.
    ("ptrace", 101),
    ("process_vm_readv", 310),
    ("process_vm_writev", 311),
    // Filesystems and namespaces.
    ("mount", 165),
    ("umount2", 166),
    ("pivot_root", 155),
    ("chroot", 161),
    ("open_tree", 428),
    ("move_mount", 429),
    ("fsopen", 430),
    ("fsconfig", 431),
    ("fsmount", 432),
    ("fspick", 433),
    ("setns", 308),
    ("unshare", 272),
    // Kernel code, the machine, swap.
    ("init_module", 175),
    ("finit_module", 313),
    ("delete_module", 176),
    ("kexec_load", 246),
    ("kexec_file_load", 320),
    ("reboot", 169),
    ("swapon", 167),
    ("swapoff", 168),
    ("bpf", 321),
    // io_uring performs I/O without passing through this filter.
    ("io_uring_setup", 425),
    ("io_uring_enter", 426),
    ("io_uring_register", 427),
    // Kernel keyrings; page faults handled in user space.
    ("add_key", 248),
    ("request_key", 249),
    ("keyctl", 250),
    ("userfaultfd", 323),
    // Its place: the CPU it was pinned to, its policy, its priority. A candidate that moved
    // would be measured somewhere its record does not name, or make itself unpreemptable.
    // (`nice(3)` is `setpriority` here; threads inherit the filter.)
    ("sched_setaffinity", 203),
    ("sched_setscheduler", 144),
    ("sched_setparam", 142),
    ("sched_setattr", 314),
    ("setpriority", 141),
];

/// AArch64 numbers (the generic `asm-generic/unistd.h` table).
#[cfg(target_arch = "aarch64")]
pub(crate) const FORBIDDEN: [(&str, i64); FORBIDDEN_COUNT] = [
    // Network (and local daemons): no socket of any family.
    ("socket", 198),
    // Leaving the worker's process group or session: a descendant that did would outlive the
    // group kill at the end of the job.
    ("setsid", 157),
    ("setpgid", 154),
    // Running other programs.
    ("execve", 221),
    ("execveat", 281),
    // Other processes' memory.
    ("ptrace", 117),
    ("process_vm_readv", 270),
    ("process_vm_writev", 271),
    // Filesystems and namespaces.
    ("mount", 40),
    ("umount2", 39),
    ("pivot_root", 41),
    ("chroot", 51),
    ("open_tree", 428),
    ("move_mount", 429),
    ("fsopen", 430),
    ("fsconfig", 431),
    ("fsmount", 432),
    ("fspick", 433),
    ("setns", 268),
    ("unshare", 97),
    // Kernel code, the machine, swap.
    ("init_module", 105),
    ("finit_module", 273),
    ("delete_module", 106),
    ("kexec_load", 104),
    ("kexec_file_load", 294),
    ("reboot", 142),
    ("swapon", 224),
    ("swapoff", 225),
    ("bpf", 280),
    // io_uring performs I/O without passing through this filter.
    ("io_uring_setup", 425),
    ("io_uring_enter", 426),
    ("io_uring_register", 427),
    // Kernel keyrings; page faults handled in user space.
    ("add_key", 217),
    ("request_key", 218),
    ("keyctl", 219),
    ("userfaultfd", 282),
    // Its place: the CPU it was pinned to, its policy, its priority. A candidate that moved
    // would be measured somewhere its record does not name, or make itself unpreemptable.
    // (`nice(3)` is `setpriority` here; threads inherit the filter.)
    ("sched_setaffinity", 122),
    ("sched_setscheduler", 119),
    ("sched_setparam", 118),
    ("sched_setattr", 274),
    ("setpriority", 140),
];

/// Other architectures: no table, so no filter (the sandbox reports it as not in force).
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub(crate) const FORBIDDEN: [(&str, i64); 0] = [];
