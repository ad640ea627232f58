//! The kernel limits every worker sets on itself before the candidate is loaded — address
//! space (RLIMIT_AS), file size (RLIMIT_FSIZE), open descriptors (RLIMIT_NOFILE), optionally
//! CPU time (RLIMIT_CPU) — their defaults and command-line form, and how the parent names a
//! worker's death by one of them ("exceeded the 64.0 MiB address-space limit") instead of a
//! bare signal. Setting them is the child's (`child`, the trial worker's `setup`); nothing
//! here runs a process.

use super::Exit;

/// The address-space limit unless configured: KAT_2_33 hashes 1 GiB messages (about 1.1 GiB
/// with the worker itself), and no trial message comes near that.
pub const DEFAULT_ADDRESS_SPACE_MIB: u64 = 2048;

/// The environment variable that sets the address-space limit (MiB) of every worker of this
/// process where no flag or setting does (the one-shot probe and hash workers have neither).
pub const ADDRESS_SPACE_ENV: &str = "CYCLESCOPE_MAX_ADDRESS_SPACE_MIB";

/// The file-size limit of a worker that writes no file (all but KAT jobs): Landlock already
/// denies it any, this bounds the damage where the kernel has no Landlock.
pub(crate) const NO_FILES_FILE_SIZE: u64 = 1 << 20;

/// Open descriptors a worker may hold: the library, its own pipes and `/proc` readings, a KAT
/// file; a candidate has no use for more.
pub(crate) const OPEN_FILES: u64 = 64;

/// Kernel-enforced limits set by the child on itself before the candidate is loaded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// RLIMIT_AS in bytes.
    pub address_space_bytes: Option<u64>,
    /// RLIMIT_CPU in seconds.
    pub cpu_seconds: Option<u64>,
    /// RLIMIT_FSIZE in bytes: the largest file the worker may write.
    pub file_size_bytes: Option<u64>,
    /// RLIMIT_NOFILE: one more than the highest descriptor number it may open.
    pub open_files: Option<u64>,
}

impl Limits {
    /// The limits of a worker that writes no file, with an address space of `mib` MiB.
    pub fn standard(address_space_mib: u64) -> Self {
        Self {
            address_space_bytes: Some(address_space_mib.saturating_mul(1 << 20)),
            cpu_seconds: None,
            file_size_bytes: Some(NO_FILES_FILE_SIZE),
            open_files: Some(OPEN_FILES),
        }
    }

    /// [`Limits::standard`] with `$CYCLESCOPE_MAX_ADDRESS_SPACE_MIB` (a whole number of MiB,
    /// at least 64), else the default. A value that is not one is refused with the rule.
    pub fn from_env() -> Result<Self, String> {
        Ok(Self::standard(address_space_mib_from_env()?))
    }

    /// As `--max-address-space B --max-cpu-seconds S --max-file-size B --max-open-files N`,
    /// the options both worker programs read (the ones set, in this order).
    pub fn to_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        for (key, value) in [
            ("--max-address-space", self.address_space_bytes),
            ("--max-cpu-seconds", self.cpu_seconds),
            ("--max-file-size", self.file_size_bytes),
            ("--max-open-files", self.open_files),
        ] {
            if let Some(v) = value {
                args.extend([key.to_string(), v.to_string()]);
            }
        }
        args
    }

    /// The limit a worker that ended as `exit` ran into, in words (` (exceeded …)`), or "".
    /// `refused`: an allocator said so on the worker's stderr; `vm_peak_bytes` its largest
    /// `VmPeak` the parent saw while it lived: a refused allocation leaves no signal of its
    /// own, so a crash is put down to the address-space limit only on one of the two.
    pub(crate) fn note(&self, exit: &Exit, refused: bool, vm_peak_bytes: Option<u64>) -> String {
        let shown = |b: u64| crate::format::bytes(b);
        match exit {
            Exit::Signal { number, .. } if *number == libc::SIGXFSZ => {
                self.file_size_bytes.map_or_else(String::new, |b| {
                    format!(" (exceeded the {} file-size limit)", shown(b))
                })
            }
            Exit::Signal { number, .. } if *number == libc::SIGXCPU => {
                self.cpu_seconds.map_or_else(String::new, |s| {
                    format!(" (exceeded the {s} s CPU-time limit)")
                })
            }
            // The sandbox's kill is named by the sandbox.
            Exit::Signal { number, .. } if *number == libc::SIGSYS => String::new(),
            Exit::Signal { .. } | Exit::Code(_) => {
                let Some(limit) = self.address_space_bytes else {
                    return String::new();
                };
                let near = vm_peak_bytes.is_some_and(|p| p.saturating_add(limit / 16) >= limit);
                if near || refused {
                    format!(
                        " (exceeded the {} address-space limit: an allocation was refused; \
                         raise max_address_space_mib if the candidate needs more)",
                        shown(limit)
                    )
                } else {
                    String::new()
                }
            }
            _ => String::new(),
        }
    }
}

/// What allocators print when the kernel refuses memory: Rust's `handle_alloc_error`, C's
/// `strerror(ENOMEM)` after `perror`.
pub(super) const ALLOCATION_REFUSED: [&str; 2] = ["memory allocation of", "Cannot allocate memory"];

/// The address-space limit in MiB: a flag, else the environment, else the setting, else the
/// default (2048).
pub fn address_space_mib(flag: Option<u64>, setting: Option<u64>) -> Result<u64, String> {
    match flag {
        Some(mib) => Ok(mib),
        None if std::env::var_os(ADDRESS_SPACE_ENV).is_some() => address_space_mib_from_env(),
        None => Ok(setting.unwrap_or(DEFAULT_ADDRESS_SPACE_MIB)),
    }
}

/// The address-space limit in MiB from the environment, else the default.
pub fn address_space_mib_from_env() -> Result<u64, String> {
    match std::env::var(ADDRESS_SPACE_ENV) {
        Err(_) => Ok(DEFAULT_ADDRESS_SPACE_MIB),
        Ok(v) => v
            .trim()
            .parse::<u64>()
            .map_err(|_| format!("{ADDRESS_SPACE_ENV}={v:?} is not a whole number of MiB"))
            .and_then(|mib| {
                crate::catalog::bounds::ADDRESS_SPACE_MIB
                    .check(mib)
                    .map_err(|e| format!("{ADDRESS_SPACE_ENV}: {e}"))
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signal(number: i32) -> Exit {
        Exit::Signal {
            number,
            name: super::super::protocol_line::signal_name(number),
        }
    }

    #[test]
    fn each_limit_is_named_for_the_death_it_causes() {
        let l = Limits {
            cpu_seconds: Some(7),
            ..Limits::standard(64)
        };
        assert_eq!(
            l.note(&signal(libc::SIGXFSZ), false, None),
            " (exceeded the 1.0 MiB file-size limit)"
        );
        assert_eq!(
            l.note(&signal(libc::SIGXCPU), false, None),
            " (exceeded the 7 s CPU-time limit)"
        );
        let as_note = "exceeded the 64.0 MiB address-space limit";
        let segv = signal(libc::SIGSEGV);
        assert!(l.note(&segv, false, Some(63 << 20)).contains(as_note));
        assert!(l.note(&segv, true, Some(3 << 20)).contains(as_note));
        assert!(l.note(&signal(libc::SIGABRT), true, None).contains(as_note));
        // A crash far from the limit is not blamed on it.
        assert_eq!(l.note(&segv, false, Some(3 << 20)), "");
        assert_eq!(l.note(&Exit::Cancelled, true, None), "");
        assert_eq!(l.note(&signal(libc::SIGSYS), true, None), "");
        assert_eq!(Limits::default().note(&segv, true, None), "");
    }

    #[test]
    fn limits_become_the_workers_options() {
        assert_eq!(
            Limits::standard(2048).to_args().join(" "),
            "--max-address-space 2147483648 --max-file-size 1048576 --max-open-files 64"
        );
        assert!(Limits::default().to_args().is_empty());
    }
}
