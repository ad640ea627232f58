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
//!   io_uring (which would bypass the filter), changing the CPU affinity, scheduling policy or
//!   priority the worker set — kill the worker (`SIGSYS`). The parent
//!   reports such a death as the sandbox stopping the candidate ([`signal_note`]), naming
//!   the call where the kernel's log says which (`audit`).
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
    /// The worker's capabilities as it found them at start (`privileges::describe`).
    #[serde(default)]
    pub privileges: String,
}

impl SandboxState {
    /// One line for `check`.
    pub fn summary(&self) -> String {
        let seccomp = if self.seccomp {
            "seccomp filter on (no sockets, exec, ptrace, mount, CPU or priority changes …)"
                .to_string()
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
        format!("{seccomp}; {landlock}; {}", self.privileges)
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
    // As the parent left them (`privileges`): read before the sandbox narrows anything.
    let privileges = std::fs::read_to_string("/proc/self/status").map_or_else(
        |e| format!("capabilities unknown (/proc/self/status: {e})"),
        |status| super::privileges::describe(&status, super::privileges::securebits()),
    );
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
        privileges,
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

/// The system calls that kill the worker (`forbidden.rs`, shared with the trial worker).
fn forbidden() -> Vec<i64> {
    super::forbidden::FORBIDDEN
        .iter()
        .map(|&(_, nr)| nr)
        .collect()
}

/// The filter: the forbidden calls kill the process, everything else is allowed.
fn filter_program() -> Result<BpfProgram, SandboxError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    let rules: BTreeMap<i64, Vec<seccompiler::SeccompRule>> =
        forbidden().into_iter().map(|nr| (nr, vec![])).collect();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::KillProcess,
        arch,
    )?;
    Ok(filter.try_into()?)
}

fn filter_system_calls() -> Result<(), SandboxError> {
    let program = filter_program()?;
    // Every thread: a candidate's constructor may start threads of its own later, and those
    // inherit the filter; threads the worker runtime started already get it too.
    seccompiler::apply_filter_all_threads(&program)?;
    Ok(())
}

/// What a signal says about a worker's death, for the messages that report it: `SIGSYS` is
/// the seccomp filter stopping a forbidden system call — `call`, when the kernel's log named it.
pub fn signal_note(signal: i32, call: Option<&str>) -> String {
    match call {
        _ if signal != libc::SIGSYS => String::new(),
        Some(call) => format!(" (stopped by the worker sandbox: a forbidden system call, {call})"),
        None => " (stopped by the worker sandbox: a forbidden system call such as a socket, \
                 exec, ptrace, mount, or a change of its CPU affinity, scheduling policy or \
                 priority)"
            .to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_compiles_for_this_machine() {
        let program = filter_program().unwrap();
        assert!(program.len() > forbidden().len());
    }

    /// The forbidden numbers are written out by hand (the trial worker has no `libc` crate):
    /// each must be the one `libc` gives for its name.
    #[test]
    fn the_forbidden_table_matches_libc() {
        let libc_numbers: BTreeMap<&str, i64> = [
            ("socket", libc::SYS_socket),
            ("setsid", libc::SYS_setsid),
            ("setpgid", libc::SYS_setpgid),
            ("execve", libc::SYS_execve),
            ("execveat", libc::SYS_execveat),
            ("ptrace", libc::SYS_ptrace),
            ("process_vm_readv", libc::SYS_process_vm_readv),
            ("process_vm_writev", libc::SYS_process_vm_writev),
            ("mount", libc::SYS_mount),
            ("umount2", libc::SYS_umount2),
            ("pivot_root", libc::SYS_pivot_root),
            ("chroot", libc::SYS_chroot),
            ("open_tree", libc::SYS_open_tree),
            ("move_mount", libc::SYS_move_mount),
            ("fsopen", libc::SYS_fsopen),
            ("fsconfig", libc::SYS_fsconfig),
            ("fsmount", libc::SYS_fsmount),
            ("fspick", libc::SYS_fspick),
            ("setns", libc::SYS_setns),
            ("unshare", libc::SYS_unshare),
            ("init_module", libc::SYS_init_module),
            ("finit_module", libc::SYS_finit_module),
            ("delete_module", libc::SYS_delete_module),
            ("kexec_load", libc::SYS_kexec_load),
            ("kexec_file_load", libc::SYS_kexec_file_load),
            ("reboot", libc::SYS_reboot),
            ("swapon", libc::SYS_swapon),
            ("swapoff", libc::SYS_swapoff),
            ("bpf", libc::SYS_bpf),
            ("io_uring_setup", libc::SYS_io_uring_setup),
            ("io_uring_enter", libc::SYS_io_uring_enter),
            ("io_uring_register", libc::SYS_io_uring_register),
            ("add_key", libc::SYS_add_key),
            ("request_key", libc::SYS_request_key),
            ("keyctl", libc::SYS_keyctl),
            ("userfaultfd", libc::SYS_userfaultfd),
            ("sched_setaffinity", libc::SYS_sched_setaffinity),
            ("sched_setscheduler", libc::SYS_sched_setscheduler),
            ("sched_setparam", libc::SYS_sched_setparam),
            ("sched_setattr", libc::SYS_sched_setattr),
            ("setpriority", libc::SYS_setpriority),
        ]
        .into_iter()
        .collect();
        let table = super::super::forbidden::FORBIDDEN;
        assert_eq!(table.len(), libc_numbers.len());
        for (name, nr) in table {
            assert_eq!(Some(&nr), libc_numbers.get(name), "{name}");
        }
    }

    /// Runs a classic-BPF seccomp program on a system call of this architecture.
    fn verdict(program: &[(u16, u8, u8, u32)], arch: u32, nr: u32) -> u32 {
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let (code, jt, jf, k) = program[pc];
            pc += 1;
            match code {
                0x20 => {
                    acc = if k == 4 {
                        arch
                    } else {
                        assert_eq!(k, 0);
                        nr
                    }
                }
                0x06 => return k,
                0x05 => pc += k as usize,
                0x15 | 0x25 | 0x35 | 0x45 => {
                    let taken = match code {
                        0x15 => acc == k,
                        0x25 => acc > k,
                        0x35 => acc >= k,
                        _ => acc & k != 0,
                    };
                    pc += usize::from(if taken { jt } else { jf });
                }
                other => panic!("instruction {other:#x} not understood by this test"),
            }
        }
    }

    /// The trial worker builds its filter by hand; on every system call number of this
    /// architecture it must decide as the `seccompiler` filter of the other workers does (and
    /// it also refuses x32 numbers and other architectures).
    #[test]
    fn the_trial_workers_filter_decides_as_seccompiler_does() {
        use crate::companion::sandbox::{
            AUDIT_ARCH, SECCOMP_RET_ALLOW, SECCOMP_RET_KILL_PROCESS, program,
        };
        let theirs = filter_program().unwrap();
        let theirs: Vec<_> = theirs.iter().map(|i| (i.code, i.jt, i.jf, i.k)).collect();
        let ours: Vec<_> = program()
            .iter()
            .map(|i| (i.code, i.jt, i.jf, i.k))
            .collect();
        let mut killed = 0;
        for nr in 0..1024 {
            let want = verdict(&theirs, AUDIT_ARCH, nr);
            assert_eq!(verdict(&ours, AUDIT_ARCH, nr), want, "system call {nr}");
            killed += usize::from(want == SECCOMP_RET_KILL_PROCESS);
        }
        assert_eq!(killed, forbidden().len());
        assert_eq!(
            verdict(&ours, AUDIT_ARCH, 0x4000_0000 | 41),
            SECCOMP_RET_KILL_PROCESS
        );
        assert_eq!(verdict(&ours, 0x4000_0003, 0), SECCOMP_RET_KILL_PROCESS);
        assert_eq!(verdict(&ours, AUDIT_ARCH, 0), SECCOMP_RET_ALLOW);
    }

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
    fn only_sigsys_is_blamed_on_the_sandbox() {
        assert!(signal_note(libc::SIGSYS, None).contains("sandbox"));
        assert!(signal_note(libc::SIGSYS, Some("setpriority")).ends_with(", setpriority)"));
        assert_eq!(signal_note(libc::SIGSEGV, Some("setpriority")), "");
    }
}
