//! The worker's sandbox, installed by the child after its own setup and before the candidate
//! library is loaded (its constructors run inside `dlopen`, so anything later would be too
//! late). Two kernel mechanisms, each used where the kernel has it:
//!
//! * Landlock: the worker may create and write files only beneath the folders it was given
//!   (a KAT job's output folder); everywhere else opening for writing, creating, removing,
//!   renaming or truncating fails with `EACCES`. Reading stays open (libraries, `/proc`). On
//!   kernels that allow it, signals and abstract UNIX sockets outside the worker are out of
//!   reach too.
//! * seccomp: system calls a hash function has no business making — opening sockets, running
//!   programs, tracing or writing other processes, mounting, namespaces, loading kernel code,
//!   io_uring (which would bypass the filter) — kill the worker (`SIGSYS`). The parent
//!   reports such a death as the sandbox stopping the candidate ([`signal_note`]).
//!
//! It never loosens anything the child set before (rlimits, `no_new_privs`) and never decides
//! a job's verdict.

use std::collections::BTreeMap;
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, BitFlags, CompatLevel, Compatible, LandlockStatus, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
};
use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, TargetArch};
use serde::{Deserialize, Serialize};

/// The Landlock ABI this code was written and tested against; older kernels get what they
/// support of it (best effort), newer ones exactly this.
const LANDLOCK_ABI: ABI = ABI::V6;

/// What the sandbox of this worker enforces, as `check` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxState {
    /// The system-call filter is installed.
    pub seccomp: bool,
    /// Why it is not (the kernel's answer), when it is not.
    pub seccomp_detail: Option<String>,
    /// Landlock write limits: `fully enforced`, `partially enforced` or `not enforced`.
    pub landlock: String,
    /// The kernel's Landlock ABI version, or why there is none.
    pub landlock_detail: String,
}

impl SandboxState {
    /// One line for `check`.
    pub fn summary(&self) -> String {
        let seccomp = if self.seccomp {
            "seccomp filter on (no sockets, exec, ptrace, mount …)".to_string()
        } else {
            format!(
                "seccomp NOT available ({}): candidates may open sockets and run programs",
                self.seccomp_detail.as_deref().unwrap_or("unknown")
            )
        };
        let landlock = match self.landlock.as_str() {
            "not enforced" => format!(
                "Landlock NOT available ({}): candidates may write anywhere this user may",
                self.landlock_detail
            ),
            state => format!(
                "Landlock {state} ({}): writes only to the KAT output folder",
                self.landlock_detail
            ),
        };
        format!("{seccomp}; {landlock}")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("worker sandbox: Landlock: {0}")]
    Landlock(#[from] landlock::RulesetError),
    #[error("worker sandbox: building the seccomp filter: {0}")]
    Filter(#[from] seccompiler::BackendError),
    #[error("worker sandbox: {0}")]
    Seccomp(#[from] seccompiler::Error),
}

/// Restricts this process: writes only beneath `writable`, no forbidden system calls. A
/// kernel without Landlock or seccomp leaves that part out (reported in the state); any other
/// failure is an error, and the worker must not go on to load the candidate.
pub fn install(writable: &[PathBuf]) -> Result<SandboxState, SandboxError> {
    let (landlock, landlock_detail) = restrict_writes(writable)?;
    let (seccomp, seccomp_detail) = match filter_system_calls() {
        Ok(()) => (true, None),
        // EINVAL: a kernel built without seccomp filters; ENOSYS: no seccomp(2) at all, as
        // under qemu-user, which refuses to install a guest's filter on itself. Anything else
        // is ours to report.
        Err(SandboxError::Seccomp(seccompiler::Error::Seccomp(e)))
            if e.raw_os_error() == Some(libc::EINVAL) =>
        {
            (false, Some(e.to_string()))
        }
        Err(SandboxError::Seccomp(seccompiler::Error::Seccomp(e)))
            if e.raw_os_error() == Some(libc::ENOSYS) =>
        {
            (
                false,
                Some(format!(
                    "{e}: seccomp(2) is not implemented here — a kernel without it, or an \
                     emulator such as qemu-user"
                )),
            )
        }
        Err(e) => return Err(e),
    };
    let state = SandboxState {
        seccomp,
        seccomp_detail,
        landlock,
        landlock_detail,
    };
    let _ = INSTALLED.set(state.clone());
    Ok(state)
}

/// The state of the sandbox this process installed (None before [`install`]).
static INSTALLED: std::sync::OnceLock<SandboxState> = std::sync::OnceLock::new();

/// What [`install`] enforced in this process, if it ran.
pub fn installed() -> Option<SandboxState> {
    INSTALLED.get().cloned()
}

fn restrict_writes(writable: &[PathBuf]) -> Result<(String, String), SandboxError> {
    let write = AccessFs::from_write(LANDLOCK_ABI);
    // Beneath the writable folders: regular files only (no links, devices, FIFOs, sockets).
    let allowed: BitFlags<AccessFs> =
        AccessFs::WriteFile | AccessFs::MakeReg | AccessFs::Truncate | AccessFs::RemoveFile;
    let status = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(write)?
        .scope(Scope::from_all(LANDLOCK_ABI))?
        .create()?
        .add_rules(path_beneath_rules(writable, allowed & write))?
        .restrict_self()?;
    let state = match status.ruleset {
        RulesetStatus::FullyEnforced => "fully enforced",
        RulesetStatus::PartiallyEnforced => "partially enforced",
        RulesetStatus::NotEnforced => "not enforced",
    };
    let detail = match status.landlock {
        LandlockStatus::Available { effective_abi, .. } => {
            format!("kernel ABI {}", effective_abi as i32)
        }
        LandlockStatus::NotEnabled => "disabled in this kernel".into(),
        // ENOSYS: the kernel was built without it, or an emulator (qemu-user before 8.0)
        // does not pass the calls through; which of the two cannot be told from here.
        LandlockStatus::NotImplemented => {
            "the Landlock system calls are not implemented here (ENOSYS): a kernel built \
             without Landlock, or an emulator such as qemu-user"
                .into()
        }
    };
    Ok((state.to_string(), detail))
}

/// The system calls that kill the worker.
fn forbidden() -> Vec<i64> {
    vec![
        // Network (and local daemons): no socket of any family.
        libc::SYS_socket,
        // Leaving the worker's process group or session: a descendant that did would outlive
        // the group kill at the end of the job.
        libc::SYS_setsid,
        libc::SYS_setpgid,
        // Running other programs.
        libc::SYS_execve,
        libc::SYS_execveat,
        // Other processes' memory.
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        // Filesystems and namespaces.
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_open_tree,
        libc::SYS_move_mount,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_setns,
        libc::SYS_unshare,
        // Kernel code, the machine, swap.
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_bpf,
        // io_uring performs I/O without passing through this filter.
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        // Kernel keyrings.
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_keyctl,
        libc::SYS_userfaultfd,
    ]
}

fn filter_system_calls() -> Result<(), SandboxError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    let rules: BTreeMap<i64, Vec<seccompiler::SeccompRule>> =
        forbidden().into_iter().map(|nr| (nr, vec![])).collect();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::KillProcess,
        arch,
    )?;
    let program: BpfProgram = filter.try_into()?;
    // Every thread: a candidate's constructor may start threads of its own later, and those
    // inherit the filter; threads the worker runtime started already get it too.
    seccompiler::apply_filter_all_threads(&program)?;
    Ok(())
}

/// What a signal says about a worker's death, for the messages that report it: `SIGSYS` is
/// the seccomp filter stopping a forbidden system call.
pub fn signal_note(signal: i32) -> &'static str {
    if signal == libc::SIGSYS {
        " (stopped by the worker sandbox: a forbidden system call such as a socket, exec, \
         ptrace or mount)"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_compiles_for_this_machine() {
        let arch = TargetArch::try_from(std::env::consts::ARCH).unwrap();
        let rules = forbidden().into_iter().map(|nr| (nr, vec![])).collect();
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::KillProcess,
            arch,
        )
        .unwrap();
        let program: BpfProgram = filter.try_into().unwrap();
        assert!(program.len() > forbidden().len());
    }

    #[test]
    fn only_sigsys_is_blamed_on_the_sandbox() {
        assert!(signal_note(libc::SIGSYS).contains("sandbox"));
        assert_eq!(signal_note(libc::SIGSEGV), "");
    }
}
