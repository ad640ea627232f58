//! Worker processes: candidate code never runs in the process that drives the TUI or the CLI.
//! The parent side spawns `cyclescope worker …`, reads its typed messages (JSON lines on the
//! child's stdout, which the child reserves for the protocol), keeps the tail of its stderr
//! (where the child sends the candidate's own stdout and stderr), enforces a timeout and
//! cancellation, and classifies how it ended. The child side (`child`) sets the process up.
//! It knows nothing of KAT or measurement: messages are a type parameter.

pub mod child;
pub mod sandbox;

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;

/// Bytes of the child's stderr kept for records and error messages (the harness keeps 2000).
pub(crate) const STDERR_TAIL_BYTES: usize = 2000;

/// Kernel-enforced limits set by the child on itself before the candidate is loaded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// RLIMIT_AS in bytes.
    pub address_space_bytes: Option<u64>,
    /// RLIMIT_CPU in seconds.
    pub cpu_seconds: Option<u64>,
}

/// How a worker ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal { number: i32, name: String },
    TimedOut(Duration),
    Cancelled,
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(c) => write!(f, "exit={c}"),
            Exit::Signal { name, .. } => write!(f, "signal={name}"),
            Exit::TimedOut(d) => write!(f, "timeout after {:.1} s", d.as_secs_f64()),
            Exit::Cancelled => write!(f, "cancelled"),
        }
    }
}

/// The end of a worker: how it exited, the tail of its stderr and its wall time.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub exit: Exit,
    pub stderr_tail: String,
    pub(crate) wall: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("cannot start worker {exe}: {source}")]
    Spawn {
        exe: PathBuf,
        source: std::io::Error,
    },
}

/// What to run.
#[derive(Debug, Clone)]
pub struct WorkerCommand {
    pub exe: PathBuf,
    /// Arguments after `worker`.
    pub args: Vec<String>,
    pub timeout: Duration,
    pub cancel: Option<Arc<AtomicBool>>,
}

/// The executable that hosts workers: `$CYCLESCOPE_WORKER_EXE`, else this executable.
pub fn default_exe() -> PathBuf {
    std::env::var_os("CYCLESCOPE_WORKER_EXE")
        .map(PathBuf::from)
        .or_else(|| std::env::current_exe().ok())
        .unwrap_or_else(|| PathBuf::from("cyclescope"))
}

/// The executable for measurement workers: the small `cyclescope-worker` companion when it
/// was built next to `base` (it adds about half the memory of the full binary to a trial
/// process), else `base` itself (`cyclescope worker measure`, same arguments).
pub(crate) fn measurement_exe(base: &std::path::Path) -> PathBuf {
    let companion = base.with_file_name("cyclescope-worker");
    if base.file_name().is_some_and(|n| n == "cyclescope") && companion.is_file() {
        companion
    } else {
        base.to_path_buf()
    }
}

/// Runs a worker to its end, handing each message to `on_message` as it arrives.
pub fn run<M: DeserializeOwned>(
    cmd: &WorkerCommand,
    mut on_message: impl FnMut(M),
) -> Result<Outcome, WorkerError> {
    let started = Instant::now();
    let mut child = Command::new(&cmd.exe)
        .arg("worker")
        .args(&cmd.args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| WorkerError::Spawn {
            exe: cmd.exe.clone(),
            source,
        })?;
    let (tx, rx) = mpsc::channel::<Option<String>>();
    let stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        if let Some(out) = stdout {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send(Some(line)).is_err() {
                    break;
                }
            }
        }
        let _ = tx.send(None);
    });
    let stderr = child.stderr.take();
    let tail = std::thread::spawn(move || stderr.map(read_tail).unwrap_or_default());

    let mut ended_by: Option<Exit> = None;
    loop {
        let elapsed = started.elapsed();
        if elapsed >= cmd.timeout {
            ended_by = Some(Exit::TimedOut(elapsed));
            break;
        }
        if cmd
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
        {
            ended_by = Some(Exit::Cancelled);
            break;
        }
        let wait = (cmd.timeout - elapsed).min(Duration::from_millis(50));
        match rx.recv_timeout(wait) {
            Ok(Some(line)) => {
                if let Ok(m) = serde_json::from_str::<M>(&line) {
                    on_message(m);
                }
            }
            Ok(None) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
    if ended_by.is_some() {
        let _ = child.kill();
    }
    let status = wait_child(&mut child);
    let _ = reader.join();
    let stderr_tail = tail.join().unwrap_or_default();
    let exit = ended_by.unwrap_or_else(|| classify(status));
    Ok(Outcome {
        exit,
        stderr_tail,
        wall: started.elapsed(),
    })
}

fn wait_child(child: &mut Child) -> Option<std::process::ExitStatus> {
    child.wait().ok()
}

fn classify(status: Option<std::process::ExitStatus>) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Some(s) => match (s.code(), s.signal()) {
            (Some(c), _) => Exit::Code(c),
            (None, Some(sig)) => Exit::Signal {
                number: sig,
                name: signal_name(sig),
            },
            (None, None) => Exit::Code(-1),
        },
        None => Exit::Code(-1),
    }
}

/// `SIGSEGV`, `SIGABRT`, … for a signal number.
pub(crate) fn signal_name(sig: i32) -> String {
    nix::sys::signal::Signal::try_from(sig)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("signal {sig}"))
}

/// Reads a stream to its end, keeping only the last `STDERR_TAIL_BYTES` bytes.
fn read_tail(mut r: impl Read) -> String {
    let mut keep: Vec<u8> = Vec::new();
    let mut buf = [0u8; 8192];
    while let Ok(n) = r.read(&mut buf) {
        if n == 0 {
            break;
        }
        keep.extend_from_slice(&buf[..n]);
        if keep.len() > 4 * STDERR_TAIL_BYTES {
            keep.drain(..keep.len() - STDERR_TAIL_BYTES);
        }
    }
    if keep.len() > STDERR_TAIL_BYTES {
        keep.drain(..keep.len() - STDERR_TAIL_BYTES);
    }
    String::from_utf8_lossy(&keep).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_bytes() {
        let text = "x".repeat(10_000) + "END";
        let t = read_tail(text.as_bytes());
        assert_eq!(t.len(), STDERR_TAIL_BYTES);
        assert!(t.ends_with("END"));
    }

    #[test]
    fn signals_have_names() {
        assert_eq!(signal_name(11), "SIGSEGV");
        assert_eq!(signal_name(6), "SIGABRT");
    }
}
