//! The digest a timed message must have, obtained before timing in a worker of its own (the
//! same job `cyclescope hash` runs): one call on a copy of the message in a buffer of its
//! own, in a trial worker that times nothing else. Only the parent runs it.

use std::sync::Arc;
use std::time::Duration;

use crate::catalog::Instance;
use crate::measure::job::meta;
use crate::measure::one_call;
use crate::measure::trial::{TrialMessage, TrialSpec};
use crate::plugin::sealed::{SealedLibrary, name_originals};
use crate::vocabulary::{FailureKind, JobFailure};
use crate::worker::one_shot::{OneShotError, no_answer};
use crate::worker::{Exit, Tampering};

/// How long hashing one message may take.
const HASH_TIMEOUT: Duration = Duration::from_secs(60);

/// Why no digest came back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DigestError {
    #[error("{0} wrote outside its message or digest buffer (OVERFLOW)")]
    Overflow(String),
    #[error("CryptHash returned {0}")]
    Refused(i32),
    #[error("the worker sent a digest that is not hex")]
    NotHex,
    #[error("{0}")]
    Worker(String),
    #[error(transparent)]
    OneShot(#[from] OneShotError),
}

impl DigestError {
    /// The job failure a measurement reports when its reference digest could not be had.
    pub(crate) fn job_failure(&self) -> JobFailure {
        let kind = match self {
            DigestError::Overflow(_) => FailureKind::Overflow,
            DigestError::Refused(_) => FailureKind::Cryptofail,
            DigestError::NotHex => FailureKind::Tampered,
            DigestError::OneShot(OneShotError::Tampered(_)) => FailureKind::Tampered,
            DigestError::OneShot(OneShotError::TimedOut(_)) => FailureKind::Timeout,
            DigestError::OneShot(OneShotError::Died(_)) => FailureKind::Crash,
            DigestError::Worker(_) | DigestError::OneShot(OneShotError::Start(_)) => {
                FailureKind::Loadfail
            }
        };
        JobFailure::new(
            kind,
            format!(
                "the digest to check the timed calls against, computed in a worker of its own: {self}"
            ),
        )
    }
}

/// Hashes the first `bits` bits of `msg` with `inst` in a worker: the trial worker, as one
/// trial of one call with no warm-up on a message the engine hands over sealed
/// (`--message-fd`), so a library meets the digests it is held to in the program and the job
/// its timed calls run in, and can tell them apart only by their numbers.
pub fn hash_once(inst: &Instance, msg: &[u8], bits: u64) -> Result<Vec<u8>, DigestError> {
    // `crypto_hash` takes whole bytes: refused without a call, as the library wrapper does.
    if !inst.abi.is_iccs() && !bits.is_multiple_of(8) {
        return Err(DigestError::Refused(crate::plugin::SUPERCOP_PARTIAL_BYTE));
    }
    let worker = |e: String| DigestError::Worker(e);
    // The bytes the call reads: the bits' own, the last one holding the bits past a byte.
    let Some(msg) = usize::try_from(bits.div_ceil(8))
        .ok()
        .and_then(|n| msg.get(..n))
    else {
        return Err(worker(format!(
            "{bits} bits asked of a message of {} bytes",
            msg.len()
        )));
    };
    let message = SealedLibrary::of_bytes("message", msg)
        .map_err(|e| worker(format!("cannot seal the message for the worker: {e}")))?;
    let library = crate::plugin::sealed::for_path(&inst.library)
        .map_err(|e| DigestError::OneShot(OneShotError::Start(e.to_string())))?;
    let spec = one_call::spec(inst.digest_bits, inst.abi, msg.len() as u64, 1);
    let mut extra = vec!["--message-fd".to_string()];
    if bits != (msg.len() as u64).saturating_mul(8) {
        extra.extend(["--message-bits".into(), bits.to_string()]);
    }
    let cmd = one_call::command(
        &spec,
        library,
        Some(Arc::new(message)),
        &extra,
        HASH_TIMEOUT,
    )?;
    let mut answer = Answer {
        spec: &spec,
        ready: false,
        result: None,
    };
    let outcome = crate::worker::run(&cmd, |m: TrialMessage| answer.take(m))
        .map_err(|e| DigestError::OneShot(OneShotError::Start(e.to_string())))?;
    match (answer.result, &outcome.exit) {
        (_, Exit::Tampered(_) | Exit::Moved(_)) | (None, _) => {
            Err(DigestError::OneShot(no_answer(&inst.library, &outcome)))
        }
        (Some(Err(e)), _) => Err(match e {
            DigestError::Worker(why) => DigestError::Worker(name_originals(&why, &cmd.libraries)),
            DigestError::Overflow(_) => DigestError::Overflow(inst.label.clone()),
            e => e,
        }),
        (Some(Ok(hex)), _) => hex::decode(hex).map_err(|_| DigestError::NotHex),
    }
}

/// What the worker answered, in the order a trial's lines come: `ready`, then one `trial`
/// (its digest) and `done`, or a fault or an error instead. Anything else, or a second answer,
/// is not the worker's.
struct Answer<'a> {
    spec: &'a TrialSpec,
    ready: bool,
    result: Option<Result<String, DigestError>>,
}

impl Answer<'_> {
    fn take(&mut self, m: TrialMessage) -> Result<(), Tampering> {
        // Refused already (its metadata): what it says next changes nothing.
        if matches!(self.result, Some(Err(_))) {
            return Ok(());
        }
        let result = match m {
            // Its metadata is held against the width asked, as a trial's is.
            TrialMessage::Ready {
                meta_block,
                build_flags,
                ..
            } if !self.ready => {
                self.ready = true;
                match meta::worker_meta(self.spec, meta_block, build_flags) {
                    Ok(_) => return Ok(()),
                    Err(e) => Err(DigestError::Worker(e.to_string())),
                }
            }
            TrialMessage::Error { stage, detail } if self.result.is_none() => Err(
                DigestError::Worker(meta::load_error(self.spec, stage, detail)),
            ),
            TrialMessage::Done { .. } if self.result.as_ref().is_some_and(Result::is_ok) => {
                return Ok(());
            }
            _ if !self.ready || self.result.is_some() => {
                return Err(Tampering("a line out of a one-call job's order".into()));
            }
            TrialMessage::Trial { digest, .. } => Ok(digest),
            TrialMessage::Cryptofail { rc } => Err(DigestError::Refused(rc)),
            TrialMessage::Overflow { .. } => Err(DigestError::Overflow(String::new())),
            TrialMessage::InputChanged { offset } => Err(DigestError::Worker(format!(
                "the library wrote into its const message, first at byte {offset}"
            ))),
            _ => return Err(Tampering("a line out of a one-call job's order".into())),
        };
        self.result = Some(result);
        Ok(())
    }
}

/// The harness's timing message of `len` bytes, as the trial worker prepares it.
pub(crate) fn harness_message(len: u64) -> Vec<u8> {
    (0..len)
        .map(|i| i.wrapping_mul(131).wrapping_add(len) as u8)
        .collect()
}
