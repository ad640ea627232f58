//! The worker's sandbox, installed by the child after its own setup and before the candidate
//! library is loaded (its constructors run inside `dlopen`, so anything later would be too
//! late): the system-call filter before the worker reads its job, Landlock with the job's
//! folders after. Two kernel mechanisms, each used where the kernel has it:
//!
//! * Landlock: the worker may create and write files only beneath the folders it was given
//!   (a KAT job's output folder); everywhere else opening for writing, creating, removing,
//!   renaming or truncating fails with `EACCES`. It reads only the system's part of
//!   `jail::reads` (the loader, shared libraries, `/proc`, a few devices) and what its job
//!   names; opening anything else (`/etc/shadow`, a home folder) fails with `EACCES` too. On
//!   kernels that allow it, signals and abstract UNIX sockets outside the worker are out of
//!   reach too.
//! * seccomp: an allowlist (`jail::syscalls`, the one list every worker installs): any system
//!   call a worker, the loader and a hash function have no need of — opening sockets, running
//!   programs, tracing other processes, namespaces, changing files' modes or owners, the CPU
//!   affinity, scheduling policy or priority the worker set, the host name or the clock —
//!   kills the worker (`SIGSYS`). The parent reports such a death as the sandbox stopping the
//!   candidate ([`signal_note`]), naming the call where the kernel's log says which (`audit`).
//!
//! It never loosens anything the child set before (rlimits, `no_new_privs`) and never decides
//! a job's verdict.

use std::path::PathBuf;

use landlock::{LandlockStatus, RulesetStatus};
use serde::{Deserialize, Serialize};

/// What the sandbox of this worker enforces, as `check` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxState {
    /// The system-call filter is installed.
    pub seccomp: bool,
    /// Why it is not (the kernel's answer), when it is not.
    pub seccomp_detail: Option<String>,
    /// Landlock's limits on reads and writes: `fully enforced`, `partially enforced` or `not enforced`.
    pub landlock: String,
    /// The kernel's Landlock ABI version, or why there is none.
    pub landlock_detail: String,
    /// The worker's capabilities as it found them at start (`privileges::describe`).
    #[serde(default)]
    pub privileges: String,
    /// The control group the engine put the worker in, as `/proc/self/cgroup` shows it
    /// (`jail::cgroup`), or what its absence means.
    #[serde(default)]
    pub cgroup: String,
}

impl SandboxState {
    /// One line for `check`.
    pub fn summary(&self) -> String {
        let seccomp = if self.seccomp {
            "seccomp allowlist on (memory, threads, time, reading and writing descriptors; no \
             sockets, exec, ptrace, namespaces, chmod/chown, CPU or priority changes …)"
                .to_string()
        } else {
            format!(
                "seccomp NOT available ({}): candidates may open sockets and run programs",
                self.seccomp_detail.as_deref().unwrap_or("unknown")
            )
        };
        let landlock = match self.landlock.as_str() {
            "not enforced" => format!(
                "Landlock NOT available ({}): candidates may read and write anywhere this \
                 user may",
                self.landlock_detail
            ),
            state => format!(
                "Landlock {state} ({}): reads only the loader, shared libraries, /proc, \
                 devices and the job's files; writes only to the KAT output folder",
                self.landlock_detail
            ),
        };
        format!(
            "{seccomp}; {landlock}; {}; {}",
            self.privileges, self.cgroup
        )
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

/// The first part, before the worker reads its job (`job_block`): the system-call filter.
/// Afterwards [`install`] adds Landlock with the job's folders and records the state. A
/// kernel without seccomp leaves it out (reported in the state); any other failure is an
/// error, and the worker must not go on.
pub fn filter() -> Result<(), SandboxError> {
    let result = match filter_system_calls() {
        Ok(()) => None,
        // EINVAL: a kernel built without seccomp filters; ENOSYS: no seccomp(2) at all, as
        // under qemu-user, which refuses to install a guest's filter on itself. Anything else
        // is ours to report.
        Err(SandboxError::Seccomp(seccompiler::Error::Seccomp(e)))
            if e.raw_os_error() == Some(libc::EINVAL) =>
        {
            Some(e.to_string())
        }
        Err(SandboxError::Seccomp(seccompiler::Error::Seccomp(e)))
            if e.raw_os_error() == Some(libc::ENOSYS) =>
        {
            Some(format!(
                "{e}: seccomp(2) is not implemented here — a kernel without it, or an \
                 emulator such as qemu-user"
            ))
        }
        Err(e) => return Err(e),
    };
    let _ = FILTERED.set(result);
    Ok(())
}

/// What [`filter`] did: None when the filter is in force, else why not.
static FILTERED: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();

/// Restricts this process further, after [`filter`]: reads only `jail::reads` and beneath
/// `readable`, writes only beneath `writable` (Landlock only narrows: the filter allows its
/// calls). A kernel without Landlock leaves it out (reported in the state); any other failure
/// is an error, and the worker must not go on to load the candidate.
pub fn install(writable: &[PathBuf], readable: &[PathBuf]) -> Result<SandboxState, SandboxError> {
    // As the parent left them (`privileges`).
    let privileges = std::fs::read_to_string("/proc/self/status").map_or_else(
        |e| format!("capabilities unknown (/proc/self/status: {e})"),
        |status| crate::jail::privileges::describe(&status, crate::jail::privileges::securebits()),
    );
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").map_or_else(
        |e| format!("control group unknown (/proc/self/cgroup: {e})"),
        |text| describe_cgroup(&text),
    );
    let (landlock, landlock_detail) = restrict_files(writable, readable)?;
    let seccomp_detail = match FILTERED.get() {
        Some(why) => why.clone(),
        None => Some("the filter was not installed before the job was read".into()),
    };
    let state = SandboxState {
        seccomp: seccomp_detail.is_none(),
        seccomp_detail,
        landlock,
        landlock_detail,
        privileges,
        cgroup,
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

fn restrict_files(
    writable: &[PathBuf],
    readable: &[PathBuf],
) -> Result<(String, String), SandboxError> {
    let status = crate::jail::landlock::ruleset(writable, readable)?.restrict_self()?;
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

/// One line on the worker's control groups (`/proc/self/cgroup`): its own where the engine
/// made one (`jail::cgroup`, named `cyclescope-…`), else what that leaves unbounded.
fn describe_cgroup(text: &str) -> String {
    let own: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("/cyclescope-"))
        .filter_map(|l| l.split(':').nth(1))
        .map(|c| if c.is_empty() { "v2" } else { c })
        .collect();
    if own.is_empty() {
        "no control group of its own: memory bounded by RLIMIT_AS only, processes by nothing"
            .to_string()
    } else {
        format!(
            "a control group of its own ({}): memory and processes bounded and counted from outside",
            own.join(", ")
        )
    }
}

/// Installs the system-call allowlist on every thread of this process.
fn filter_system_calls() -> Result<(), SandboxError> {
    // The allowlist and clone3's ENOSYS, in that order (`jail::syscalls`).
    for program in crate::jail::syscalls::programs(crate::jail::syscalls::Kind::Worker)? {
        seccompiler::apply_filter_all_threads(&program)?;
    }
    Ok(())
}

/// What a worker's death by `signal` says of the sandbox, naming the `call` where known.
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
    fn the_workers_own_control_groups_are_named() {
        let v1 = "8:pids:/a/cyclescope-1-worker-0\n4:memory:/a/cyclescope-1-worker-0\n0::/\n";
        assert!(describe_cgroup(v1).starts_with("a control group of its own (pids, memory)"));
        assert!(describe_cgroup("0::/cyclescope-2-worker-3\n").contains("(v2)"));
        assert!(describe_cgroup("4:memory:/process_api/x\n0::/\n").starts_with("no control group"));
    }

    #[test]
    fn only_sigsys_is_blamed_on_the_sandbox() {
        assert!(signal_note(libc::SIGSYS, None).contains("sandbox"));
        assert!(signal_note(libc::SIGSYS, Some("setpriority")).ends_with(", setpriority)"));
        assert_eq!(signal_note(libc::SIGSEGV, Some("setpriority")), "");
    }
}
