//! Jobs of the trial worker that time nothing: a trial of one call on a message the engine
//! hands over (`proof::reference`, the digest of a message the engine chooses), and a trial of
//! no call (the library's metadata, `metadata`). The same program, the same job kind and the
//! same descriptors as every timed trial, so that a library meets them where it meets its
//! timed calls; the parent reads their answers as it reads a trial's, and decides everything.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::measure::trial::{TrialMessage, TrialSpec};
use crate::measure::trial_args::MeasureInvocation;
use crate::plugin::sealed::{SealedLibrary, name_originals};
use crate::plugin::{Abi, NgccMeta};
use crate::worker::one_shot::{OneShotError, no_answer};
use crate::worker::{Exit, Limits, Tampering, WorkerCommand};

/// How long loading a library and reading its metadata may take: a constructor that hangs
/// (or forks and waits) is reported within seconds.
const METADATA_TIMEOUT: Duration = Duration::from_secs(5);

/// The trial worker's command for `spec` (its library in the first descriptor slot, `more` in
/// the next), with `extra` words after the trial's own.
pub(crate) fn command(
    spec: &TrialSpec,
    library: Arc<SealedLibrary>,
    more: Option<Arc<SealedLibrary>>,
    extra: &[String],
    timeout: Duration,
) -> Result<WorkerCommand, OneShotError> {
    let limits = Limits::from_env().map_err(OneShotError::Start)?;
    command_with(spec, library, more, extra, timeout, limits)
}

/// [`command`] under `limits` (a KAT job's, `--max-address-space-mib` of `kat` and `run`).
pub(crate) fn command_with(
    spec: &TrialSpec,
    library: Arc<SealedLibrary>,
    more: Option<Arc<SealedLibrary>>,
    extra: &[String],
    timeout: Duration,
    limits: Limits,
) -> Result<WorkerCommand, OneShotError> {
    // What the parent can check of the file, it checks before anything runs it.
    crate::plugin::check_elf(&library.here())
        .map_err(|e| OneShotError::Start(library.name_here(&e.to_string())))?;
    let exe =
        crate::catalog::bundled::trial_worker().map_err(|e| OneShotError::Start(e.to_string()))?;
    let mut args = MeasureInvocation {
        spec: spec.clone(),
        cpu: None,
        pmu_type: None,
        sample_period_ns: None,
        limits,
    }
    .to_args();
    args.extend_from_slice(extra);
    Ok(WorkerCommand {
        exe,
        args,
        timeout,
        cancel: None,
        limits,
        pinned_cpu: None,
        launcher: None,
        go_line: None,
        libraries: std::iter::once(library).chain(more).collect(),
        cwd: None,
        files: Some(Default::default()),
    })
}

/// A trial of `calls` calls (0 or 1) of the library in the first slot, on a message of
/// `bytes` bytes, with no warm-up and no per-call phase.
pub(crate) fn spec(digest_bits: u32, abi: Abi, bytes: u64, calls: u64) -> TrialSpec {
    TrialSpec {
        library: crate::plugin::sealed::worker_path(0),
        digest_bits,
        input_bytes: bytes,
        iterations: calls,
        warmups: 0,
        trials: u32::from(calls > 0),
        sample_calls: 0,
        abi,
        fresh_seed: None,
        fresh_heads: None,
        offsets: None,
        count: false,
        hardware_instructions: false,
        loop_only: false,
        repeat: false,
        any_width: false,
    }
}

/// The `ngcc_meta` of `lib` (resolving `abi`'s entry point), None when it exports none: loaded
/// by a trial worker that calls nothing, and decoded and checked here.
pub fn metadata(lib: &Path, abi: Abi) -> Result<Option<NgccMeta>, String> {
    metadata_or_why(lib, abi).map_err(|e| e.to_string())
}

/// [`metadata`], its refusal kept apart from a library that did not load: a worker that wrote
/// to its protocol channel or left its place is `OneShotError::Tampered`.
pub(crate) fn metadata_or_why(lib: &Path, abi: Abi) -> Result<Option<NgccMeta>, OneShotError> {
    let start = |e: String| OneShotError::Start(e);
    let library = crate::plugin::sealed::for_path(lib).map_err(|e| start(e.to_string()))?;
    // No call is made: the width only sizes a digest buffer.
    let spec = spec(8, abi, 0, 0);
    let cmd = command(&spec, library, None, &[], METADATA_TIMEOUT)?;
    let mut ready: Option<Result<Option<NgccMeta>, String>> = None;
    let mut done = false;
    let outcome = crate::worker::run(&cmd, |m: TrialMessage| {
        match m {
            TrialMessage::Ready {
                meta_block,
                build_flags,
                ..
            } if ready.is_none() => ready = Some(decode(lib, meta_block, build_flags)),
            TrialMessage::Error { stage, detail } if ready.is_none() => {
                ready = Some(Err(name_originals(
                    &super::job::meta::load_error(&spec, stage, detail),
                    &cmd.libraries,
                )))
            }
            TrialMessage::Done { .. } if ready.is_some() && !done => done = true,
            _ => return Err(Tampering("a line out of a metadata job's order".into())),
        }
        Ok(())
    })
    .map_err(|e| start(e.to_string()))?;
    match (ready, &outcome.exit) {
        (Some(answer), exit) if !matches!(exit, Exit::Tampered(_) | Exit::Moved(_)) => {
            answer.map_err(start)
        }
        _ => Err(no_answer(lib, &outcome)),
    }
}

/// The metadata block and build flags a worker sent, as the engine decodes any library's.
fn decode(
    lib: &Path,
    block: Option<String>,
    flags: Option<String>,
) -> Result<Option<NgccMeta>, String> {
    let Some(block) = block else {
        return Ok(None);
    };
    let bad = |what: &str| {
        format!(
            "library {}: the worker sent {what} that is not hex",
            lib.display()
        )
    };
    let block = hex::decode(block).map_err(|_| bad("a metadata block"))?;
    let flags = flags
        .map(hex::decode)
        .transpose()
        .map_err(|_| bad("build flags"))?;
    crate::plugin::meta_from_block(lib, &block, flags.as_deref())
        .map(Some)
        .map_err(|e| e.to_string())
}
