//! `cyclescope worker` (hidden): the child processes that host candidate code, and the
//! parent-side helper for the sandbox report (hashing one message, a table of them (SUPERCOP's
//! checksums) and a library's metadata are the trial worker's: `measure::one_call`,
//! `measure::table`). Every job
//! starts with the same command line; what it is to do arrives on stdin once the worker's
//! system-call filter is in force (`worker::job_block`), and is parsed here as [`WorkerArgs`].

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};

use crate::plugin::{Abi, NgccMeta};
use crate::worker::one_shot::Reply;
use crate::worker::sandbox::SandboxState;
use crate::worker::{Limits, child};

/// How long a probe may take: loading a library and reading its metadata is quick, so a
/// constructor that hangs (or forks and waits) is reported within seconds.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// A worker's job, as the engine sends it after the session token.
#[derive(Debug, Parser)]
#[command(name = "worker")]
struct WorkerArgs {
    /// RLIMIT_AS in bytes (the parent passes every limit it wants, after the job's name;
    /// none is set otherwise).
    #[arg(long, global = true, value_name = "BYTES")]
    max_address_space: Option<u64>,
    /// RLIMIT_CPU in seconds.
    #[arg(long, global = true, value_name = "S")]
    max_cpu_seconds: Option<u64>,
    /// RLIMIT_FSIZE in bytes.
    #[arg(long, global = true, value_name = "BYTES")]
    max_file_size: Option<u64>,
    /// RLIMIT_NOFILE.
    #[arg(long, global = true, value_name = "N")]
    max_open_files: Option<u64>,
    #[command(subcommand)]
    job: Job,
}

#[derive(Debug, Subcommand)]
enum Job {
    /// Set up like any worker (limits, sandbox) and report what the sandbox enforces.
    Sandbox,
}

pub fn run() -> anyhow::Result<ExitCode> {
    let child::Entered { channel, job } = child::enter()?;
    let args = WorkerArgs::try_parse_from(std::iter::once("worker".to_string()).chain(job))?;
    run_job(args, channel)
}

fn run_job(args: WorkerArgs, mut ch: child::Channel) -> anyhow::Result<ExitCode> {
    // No job writes anything: the KAT files are the engine's, the checks only read them.
    let writable: Vec<PathBuf> = vec![];
    let limits = Limits {
        address_space_bytes: args.max_address_space,
        cpu_seconds: args.max_cpu_seconds,
        file_size_bytes: args.max_file_size,
        open_files: args.max_open_files,
    };
    child::confine(limits, &writable, &[])?;
    let reply = match args.job {
        // The state of the sandbox this very process entered above.
        Job::Sandbox => match crate::worker::sandbox::installed() {
            Some(state) => Reply::Sandbox { state },
            None => Reply::Error {
                message: "the worker entered no sandbox".into(),
            },
        },
    };
    ch.send(&reply);
    Ok(ExitCode::SUCCESS)
}

/// Loads ICCS library `lib` in a worker and returns its metadata (None when it exports none).
pub fn probe(lib: &Path) -> Result<Option<NgccMeta>, String> {
    probe_abi(lib, Abi::Iccs)
}

/// As [`probe`], resolving the entry point of `abi`: in the trial worker, which every timed
/// call runs in too (`measure::one_call`).
pub fn probe_abi(lib: &Path, abi: Abi) -> Result<Option<NgccMeta>, String> {
    crate::measure::one_call::metadata(lib, abi)
}

/// What the sandbox of a worker enforces on this machine, asked of a real worker, and what
/// the engine read of that worker from outside.
pub fn sandbox_state()
-> Result<(SandboxState, Option<crate::worker::observed::Protections>), String> {
    match crate::worker::one_shot::one_shot_observed(
        Path::new("(none)"),
        vec!["sandbox".into()],
        PROBE_TIMEOUT,
    )
    .map_err(|e| e.to_string())?
    {
        (Reply::Sandbox { state }, seen) => Ok((state, seen)),
        (Reply::Error { message }, _) => Err(message),
    }
}
