//! Landlock for every worker and compiler: the workers' one ruleset (reads of `jail::reads`'
//! system part and the job's files, writes of regular files beneath the job's folders, no
//! signal or abstract socket outside), the compiler's (`build::jail`), and what a record may
//! say of the workers'. Landlock leaves no trace in
//! `/proc/<pid>` to read from outside, so a record says what the engine itself knows: the
//! kernel's ABI, asked by the engine, and the rights and scopes this code's ruleset asks of
//! that ABI. Nothing of it comes from a worker's report.

use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, BitFlags, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, path_beneath_rules,
};
use serde::{Deserialize, Serialize};

/// The Landlock ABI this code was written and tested against; older kernels get what they
/// support of it (best effort), newer ones exactly this.
pub(crate) const LANDLOCK_ABI: ABI = ABI::V6;

/// The one Landlock ruleset of every worker: reads of `jail::reads`' system part and beneath
/// `readable`, reads and writes of regular files beneath `writable`, no signal or abstract
/// socket outside. Enforced by the std worker in its own process (`worker::sandbox`), or made
/// by the engine and enforced in a trial worker's child before exec (`worker::confine`).
pub(crate) fn ruleset(
    writable: &[PathBuf],
    readable: &[PathBuf],
) -> Result<landlock::RulesetCreated, landlock::RulesetError> {
    let read = AccessFs::from_read(LANDLOCK_ABI);
    let write = AccessFs::from_write(LANDLOCK_ABI);
    // Beneath the writable folders: regular files only (no links, devices, FIFOs, sockets).
    let allowed: BitFlags<AccessFs> =
        AccessFs::WriteFile | AccessFs::MakeReg | AccessFs::Truncate | AccessFs::RemoveFile;
    Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(read | write)?
        .scope(Scope::from_all(LANDLOCK_ABI))?
        .create()?
        .add_rules(path_beneath_rules(crate::jail::reads::system(), read))?
        .add_rules(path_beneath_rules(readable, read))?
        .add_rules(path_beneath_rules(writable, read | (allowed & write)))
}

/// The Landlock ABI whose file-system rights a compiler's ruleset asks for (best effort below
/// it). No scopes: a compiler's driver signals and waits for its own children only, inside the
/// domain, and its PID namespace keeps the rest out of reach.
const COMPILER_LANDLOCK_ABI: ABI = ABI::V5;

/// A compiler's ruleset: every file-system right handled, reading and running allowed beneath
/// `read` and everything beneath `write` (paths that do not exist are left out); None where
/// the kernel has no Landlock. Enforced in the compiler's child before exec (`build::jail`).
pub(crate) fn compiler_ruleset(
    read: &[PathBuf],
    write: &[PathBuf],
) -> Result<Option<std::os::fd::OwnedFd>, landlock::RulesetError> {
    let existing = |paths: &[PathBuf]| -> Vec<PathBuf> {
        paths.iter().filter(|p| p.exists()).cloned().collect()
    };
    let created = Ruleset::default()
        .handle_access(AccessFs::from_all(COMPILER_LANDLOCK_ABI))?
        .create()?
        .add_rules(path_beneath_rules(
            existing(read),
            AccessFs::from_read(COMPILER_LANDLOCK_ABI),
        ))?
        .add_rules(path_beneath_rules(
            existing(write),
            AccessFs::from_all(COMPILER_LANDLOCK_ABI),
        ))?;
    Ok(created.into())
}

/// Restricts the calling process to `ruleset`: in the forked child before exec, so only
/// async-signal-safe calls — two raw system calls on a descriptor opened before the fork, no
/// allocation, no lock. The descriptor is close-on-exec: the worker never holds it.
pub(crate) fn enforce(ruleset: &std::os::fd::OwnedFd) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: prctl and landlock_restrict_self are plain system calls on integers and a
    // descriptor this process owns; they touch no memory of ours.
    unsafe {
        // Landlock asks for no_new_privs of a process without CAP_SYS_ADMIN; the privileges
        // plan has set it already where it ran.
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// What the workers' Landlock ruleset enforces on this kernel, as a record keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Landlock {
    /// The kernel's Landlock ABI version, None where it has none.
    pub kernel_abi: Option<u32>,
    /// The ABI the ruleset is enforced at: the lower of the kernel's and `LANDLOCK_ABI`.
    pub enforced_abi: u32,
    /// The file-system rights the ruleset handles at that ABI (`read_file`, `truncate`, …):
    /// each is refused outside the folders the job was given.
    pub handled: Vec<String>,
    /// The scopes at that ABI (`signal`, `abstract_unix_socket`): what is refused outside the
    /// worker's own domain.
    pub scopes: Vec<String>,
    /// How the engine knows (the kernel's answer to its ABI query, and which part is this
    /// code's ruleset), or why there is no Landlock.
    pub source: String,
}

impl Landlock {
    /// What this kernel gives the workers' ruleset: asked once a process (every worker's
    /// protections carry it, and the kernel's answer does not change).
    pub fn of_this_kernel() -> Self {
        static SEEN: std::sync::OnceLock<Landlock> = std::sync::OnceLock::new();
        SEEN.get_or_init(|| Self::at(kernel_abi())).clone()
    }

    fn at(kernel: Result<u32, &'static str>) -> Self {
        let Ok(version) = kernel else {
            return Self {
                kernel_abi: None,
                enforced_abi: 0,
                handled: Vec::new(),
                scopes: Vec::new(),
                source: kernel.err().unwrap_or_default().into(),
            };
        };
        let enforced = version.min(LANDLOCK_ABI as u32);
        let abi = ABI::from(enforced as i32);
        let handled = AccessFs::from_all(abi)
            .iter()
            .map(|a| snake(&format!("{a:?}")))
            .collect();
        let scopes = Scope::from_all(abi)
            .iter()
            .map(|s| snake(&format!("{s:?}")))
            .collect();
        Self {
            kernel_abi: Some(version),
            enforced_abi: enforced,
            handled,
            scopes,
            source: "the kernel's ABI as the engine asked it; the rights and scopes the \
                     workers' ruleset handles at that ABI (Landlock leaves no trace in /proc \
                     to read from outside)"
                .into(),
        }
    }

    /// One phrase for a summary line.
    pub fn summary(&self) -> String {
        match self.kernel_abi {
            None => format!("no Landlock ({})", self.source),
            Some(_) if self.scopes.is_empty() => {
                format!("Landlock ABI {} (no scopes)", self.enforced_abi)
            }
            Some(_) => format!(
                "Landlock ABI {}, scopes {}",
                self.enforced_abi,
                self.scopes.join(", ")
            ),
        }
    }

    /// What is missing, each with what a candidate could then do.
    pub fn gaps(&self) -> Vec<&'static str> {
        match (self.kernel_abi, self.scopes.is_empty()) {
            (None, _) => vec![
                "no Landlock: the candidate may read and write whatever its uid may (home \
                 folders of that user, world-readable files)",
            ],
            (Some(_), true) => vec![
                "no Landlock scopes (a kernel before ABI 6): outside its PID namespace the \
                 candidate may signal processes of its uid, and reach abstract sockets where \
                 its system-call filter lets it make one",
            ],
            _ => Vec::new(),
        }
    }
}

/// `ReadFile` → `read_file`.
fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The kernel's Landlock ABI version, or why there is none.
pub fn kernel_abi() -> Result<u32, &'static str> {
    // SAFETY: with flag LANDLOCK_CREATE_RULESET_VERSION (1) the kernel reads no pointer and
    // makes no descriptor; it only answers the highest ABI it supports.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    match u32::try_from(v) {
        Ok(v) if v > 0 => Ok(v),
        _ => Err(match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::EOPNOTSUPP) => "Landlock is built in but disabled in this kernel",
            _ => {
                "the kernel has no Landlock system calls (ENOSYS): built without it, or an \
                 emulator such as qemu-user"
            }
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The trial worker's Landlock write rights per kernel ABI are the `landlock` crate's.
    #[test]
    fn the_trial_workers_write_rights_are_the_crates() {
        for (n, abi) in [ABI::V1, ABI::V2, ABI::V3, ABI::V4, ABI::V5, ABI::V6]
            .into_iter()
            .enumerate()
        {
            let theirs = AccessFs::from_write(abi).bits();
            assert_eq!(
                crate::companion::sandbox::write_rights(n as i64 + 1),
                theirs,
                "{abi:?}"
            );
        }
    }

    #[test]
    fn each_abi_names_what_its_ruleset_handles_and_scopes() {
        let six = Landlock::at(Ok(6));
        assert_eq!(six.enforced_abi, 6);
        assert!(six.handled.iter().any(|h| h == "read_file"), "{six:?}");
        assert!(six.handled.iter().any(|h| h == "ioctl_dev"), "{six:?}");
        assert_eq!(six.scopes, ["abstract_unix_socket", "signal"]);
        assert!(six.gaps().is_empty());
        assert_eq!(
            six.summary(),
            "Landlock ABI 6, scopes abstract_unix_socket, signal"
        );
        // A newer kernel is held to this code's ABI, an older one to its own.
        assert_eq!(Landlock::at(Ok(9)).enforced_abi, 6);
        let three = Landlock::at(Ok(3));
        assert!(three.handled.iter().any(|h| h == "truncate"), "{three:?}");
        assert!(!three.handled.iter().any(|h| h == "ioctl_dev"), "{three:?}");
        assert!(three.scopes.is_empty());
        assert!(three.gaps()[0].contains("no Landlock scopes"));
        let none = Landlock::at(Err("disabled"));
        assert_eq!(none.kernel_abi, None);
        assert!(none.gaps()[0].starts_with("no Landlock:"));
        assert_eq!(none.summary(), "no Landlock (disabled)");
    }

    /// The engine's answer is the one the crate gets when it enforces the ruleset (in a
    /// thread of its own: a Landlock domain binds only the thread that asked for it).
    #[test]
    fn the_engines_query_agrees_with_what_a_ruleset_enforces() {
        let seen = Landlock::of_this_kernel();
        let status = std::thread::spawn(|| ruleset(&[], &[]).and_then(|r| r.restrict_self()))
            .join()
            .unwrap()
            .unwrap();
        let full = status.ruleset == landlock::RulesetStatus::FullyEnforced;
        match seen.kernel_abi {
            Some(v) => assert_eq!(full, v >= LANDLOCK_ABI as u32, "{seen:?} {status:?}"),
            None => assert_eq!(
                status.ruleset,
                landlock::RulesetStatus::NotEnforced,
                "{seen:?}"
            ),
        }
    }
}
