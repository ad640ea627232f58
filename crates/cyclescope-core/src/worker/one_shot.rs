//! One-shot jobs of `cyclescope worker …`: a worker that does one thing (describe its sandbox) and answers with exactly one `Reply`. This is the parent's side — start it, take
//! the one reply, say how it ended in words that name the library — and the reply type the
//! child side (the binary's `worker` subcommand) sends. It decides nothing about the answer.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::sandbox::SandboxState;
use super::{Exit, Limits, Tampering, WorkerCommand};

/// A one-shot worker's answer.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum Reply {
    Error { message: String },
    Sandbox { state: SandboxState },
}

/// Why a one-shot job gave no reply; each names the library to blame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OneShotError {
    /// The worker could not be started or its limits not read.
    #[error("{0}")]
    Start(String),
    /// The library wrote to the protocol channel or left its place.
    #[error("{0}")]
    Tampered(String),
    /// No answer within the deadline.
    #[error("{0}")]
    TimedOut(String),
    /// The worker died (a signal, a stop) or ended without an answer.
    #[error("{0}")]
    Died(String),
}

/// Runs a one-shot job on `lib` that answers with exactly one reply. The job's arguments
/// name the library by its path; the worker gets the bytes a run sealed (or that are sealed
/// now: `plugin::sealed`) and loads those instead.
pub fn one_shot(lib: &Path, job: Vec<String>, timeout: Duration) -> Result<Reply, OneShotError> {
    one_shot_observed(lib, job, timeout).map(|(reply, _)| reply)
}

/// [`one_shot`], and the protections the worker was under as the engine read them from its
/// `/proc` entry (`observed`), when it spoke.
pub fn one_shot_observed(
    lib: &Path,
    job: Vec<String>,
    timeout: Duration,
) -> Result<(Reply, Option<super::observed::Protections>), OneShotError> {
    let limits = Limits::from_env().map_err(OneShotError::Start)?;
    let named = lib.display().to_string();
    // One that cannot be read is passed by its path: the worker's loader says what is wrong.
    let libraries: Vec<_> = job
        .contains(&named)
        .then(|| crate::plugin::sealed::for_path(lib).ok())
        .flatten()
        .into_iter()
        .collect();
    let loaded = crate::plugin::sealed::worker_path(0).display().to_string();
    // `<job> <limits> …`, sent on the worker's stdin (`job_block`).
    let mut args: Vec<String> = job
        .into_iter()
        .map(|a| {
            if a == named && !libraries.is_empty() {
                loaded.clone()
            } else {
                a
            }
        })
        .collect();
    args.splice(1..1, limits.to_args());
    let cmd = WorkerCommand {
        exe: super::default_exe(),
        args,
        timeout,
        cancel: None,
        limits,
        pinned_cpu: None,
        launcher: None,
        go_line: None,
        libraries,
        cwd: None,
        files: None,
    };
    let mut reply = None;
    let outcome = super::run(&cmd, |r: Reply| match reply {
        None => {
            reply = Some(r);
            Ok(())
        }
        Some(_) => Err(Tampering("a second reply".into())),
    })
    .map_err(|e| OneShotError::Start(e.to_string()))?;
    // The worker's own words name the descriptor it loaded; the operator's name is put back.
    let reply = reply.map(|r| match r {
        Reply::Error { message } => Reply::Error {
            message: crate::plugin::sealed::name_originals(&message, &cmd.libraries),
        },
        r => r,
    });
    match reply {
        Some(r) if !matches!(outcome.exit, Exit::Tampered(_) | Exit::Moved(_)) => {
            Ok((r, outcome.protections.clone()))
        }
        _ => Err(no_answer(lib, &outcome)),
    }
}

/// Why a worker that loaded `lib` gave no usable answer, from how it ended (`outcome`): what a
/// one-shot job says, and what any job of one answer says (`measure::proof::reference`).
pub(crate) fn no_answer(lib: &Path, outcome: &super::Outcome) -> OneShotError {
    let lib = lib.display();
    let tail = tail_suffix(&outcome.stderr_tail);
    match &outcome.exit {
        Exit::Tampered(why) => OneShotError::Tampered(format!(
            "TAMPERED: the library wrote to the worker's protocol channel ({why})"
        )),
        Exit::Moved(why) => OneShotError::Tampered(format!(
            "TAMPERED: library {lib} left its place in the worker: {why}"
        )),
        Exit::TimedOut(d) => OneShotError::TimedOut(format!(
            "library {lib} did not answer within {:.0} s (it hangs, or a process it started \
             holds the worker); the worker's process group was killed{tail}",
            d.as_secs_f64(),
        )),
        Exit::Stopped(stopped) => OneShotError::Died(format!(
            "library {lib}: {stopped}; the worker's process group was killed{tail}"
        )),
        Exit::Signal { name, .. } => OneShotError::Died(format!(
            "library {lib} crashed ({name}) in its worker{}{tail}",
            outcome.death_note(),
        )),
        exit => OneShotError::Died(format!(
            "the worker that loaded library {lib} ended without an answer ({exit}){}{tail}",
            outcome.limit_note,
        )),
    }
}

fn tail_suffix(tail: &str) -> String {
    let t = tail.trim();
    if t.is_empty() {
        String::new()
    } else {
        format!(": {t}")
    }
}
