//! What a process that runs candidate code may read: the one list every worker's Landlock
//! ruleset starts from (`worker::sandbox` for the engine's own workers, `worker::confine` for
//! the trial worker and valgrind, set before they start). The loader and the system's shared
//! libraries, the devices a C library opens, the CPU topology, and `/proc`; a job adds what it
//! was handed (its library's file where it is not a sealed descriptor, its KAT folder,
//! valgrind and its private copy). Never `/etc` beyond the loader's files, nor
//! any home folder.
//!
//! `/proc` is whole: Landlock scopes files by where they are in the tree, not by which process
//! they describe, and a worker reads its own `status`, `statm` and `schedstat` (the trial
//! worker's readings, `check`'s look at its privileges). What `/proc` holds of other processes
//! stays closed where the kernel checks who asks (their memory, environment and descriptors:
//! the engine is not dumpable, `privileges`). The sealed library at `/proc/self/fd/9` is a
//! memfd, on a mount of the kernel's own, which Landlock lets a process open whatever its
//! rules.

use std::path::PathBuf;

/// The system's part of the read set; a path this machine lacks is left out.
pub const SYSTEM: &[&str] = &[
    // The loader, the C library and whatever a candidate links, on every layout we know.
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/usr/lib",
    "/usr/lib32",
    "/usr/lib64",
    "/usr/libx32",
    "/usr/libexec",
    "/usr/local/lib",
    "/nix/store",
    // The loader's cache and configuration.
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/ld.so.preload",
    "/proc",
    "/sys/devices/system/cpu",
    "/dev/null",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
];

/// [`SYSTEM`]'s paths that exist here.
pub fn system() -> Vec<PathBuf> {
    SYSTEM
        .iter()
        .map(PathBuf::from)
        .filter(|p| p.exists())
        .collect()
}

/// Whether a worker may read `path` under [`SYSTEM`] alone (by where it is in the tree, as
/// Landlock decides: symbolic links are not followed here).
pub fn in_system(path: &std::path::Path) -> bool {
    SYSTEM.iter().any(|s| path.starts_with(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_and_home_folders_are_outside() {
        for outside in [
            "/etc/shadow",
            "/etc/passwd",
            "/root/.ssh/id_ed25519",
            "/home/a/x",
        ] {
            assert!(!in_system(std::path::Path::new(outside)), "{outside}");
        }
        for inside in [
            "/usr/lib/x86_64-linux-gnu/libc.so.6",
            "/etc/ld.so.cache",
            "/proc/self/status",
        ] {
            assert!(in_system(std::path::Path::new(inside)), "{inside}");
        }
    }
}
