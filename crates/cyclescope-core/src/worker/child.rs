//! The child side of a worker: take stdout for the protocol, send the candidate's prints to
//! stderr, drop inherited descriptors and privileges, set kernel limits, pin to the measurement
//! CPU. Everything here happens before the candidate library is loaded.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::fd::{AsRawFd, OwnedFd};

use serde::Serialize;

use super::Limits;

/// The protocol channel to the parent (JSON lines).
pub struct Channel {
    out: BufWriter<File>,
}

impl Channel {
    /// Sends one message and flushes (messages are batched by the caller, not here).
    pub fn send<M: Serialize>(&mut self, message: &M) {
        // A parent that went away is not this process's problem to report: it is killed or
        // its pipe closed, and the next write fails the same way.
        if serde_json::to_writer(&mut self.out, message).is_ok() {
            let _ = self.out.write_all(b"\n");
            let _ = self.out.flush();
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("worker setup: {what}: {source}")]
    Sys {
        what: &'static str,
        source: nix::Error,
    },
    #[error(transparent)]
    Sandbox(#[from] super::sandbox::SandboxError),
}

fn sys(what: &'static str) -> impl FnOnce(nix::Error) -> SetupError {
    move |source| SetupError::Sys { what, source }
}

/// Prepares this process to host a candidate and returns the protocol channel; the sandbox
/// lets it write nowhere.
pub fn enter(cpu: Option<usize>, limits: Limits) -> Result<Channel, SetupError> {
    enter_writing(cpu, limits, &[])
}

/// [`enter`] for a worker that must write files beneath the `writable` folders (KAT text).
pub fn enter_writing(
    cpu: Option<usize>,
    limits: Limits,
    writable: &[std::path::PathBuf],
) -> Result<Channel, SetupError> {
    let proto: OwnedFd = nix::unistd::dup(std::io::stdout()).map_err(sys("dup stdout"))?;
    // From here on fd 1 is stderr: whatever the candidate prints ends up in the captured tail.
    nix::unistd::dup2_stdout(std::io::stderr()).map_err(sys("redirect stdout"))?;
    close_inherited(proto.as_raw_fd());
    nix::sys::prctl::set_no_new_privs().map_err(sys("no_new_privs"))?;
    use nix::sys::resource::{Resource, setrlimit};
    setrlimit(Resource::RLIMIT_CORE, 0, 0).map_err(sys("RLIMIT_CORE"))?;
    if let Some(bytes) = limits.address_space_bytes {
        setrlimit(Resource::RLIMIT_AS, bytes, bytes).map_err(sys("RLIMIT_AS"))?;
    }
    if let Some(secs) = limits.cpu_seconds {
        // Soft limit sends SIGXCPU, the hard one a second later SIGKILL.
        setrlimit(Resource::RLIMIT_CPU, secs, secs + 1).map_err(sys("RLIMIT_CPU"))?;
    }
    if let Some(cpu) = cpu {
        crate::cpu::pin_current_thread(cpu).map_err(sys("pin to the measurement CPU"))?;
    }
    // Last, so the worker's own setup is done, and before the candidate is loaded.
    super::sandbox::install(writable)?;
    Ok(Channel {
        out: BufWriter::new(File::from(proto)),
    })
}

/// Closes every descriptor above stderr except `keep`.
fn close_inherited(keep: i32) {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    let fds: Vec<i32> = dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter(|&fd| fd > 2 && fd != keep)
        .collect();
    for fd in fds {
        // The fd of the read_dir itself is already closed; EBADF is expected for it.
        let _ = nix::unistd::close(fd);
    }
}
