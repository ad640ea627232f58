//! The digest a timed message must have, obtained before timing in a worker of its own (the
//! `hash` one-shot job, the same one `cyclescope hash` runs): one call on a copy of the
//! message in a buffer of its own, in a process that timed nothing. Only the parent runs it.

use std::time::Duration;

use crate::catalog::Instance;
use crate::vocabulary::{FailureKind, JobFailure};
use crate::worker::one_shot::{OneShotError, Reply, one_shot};

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
    #[error("unexpected reply from the worker")]
    Unexpected,
    #[error(transparent)]
    OneShot(#[from] OneShotError),
}

impl DigestError {
    /// The job failure a measurement reports when its reference digest could not be had.
    pub(crate) fn job_failure(&self) -> JobFailure {
        let kind = match self {
            DigestError::Overflow(_) => FailureKind::Overflow,
            DigestError::Refused(_) => FailureKind::Cryptofail,
            DigestError::NotHex | DigestError::Unexpected => FailureKind::Tampered,
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

/// Hashes the first `bits` bits of `msg` with `inst` in a worker.
pub fn hash_once(inst: &Instance, msg: &[u8], bits: u64) -> Result<Vec<u8>, DigestError> {
    let mut file = tempfile::NamedTempFile::new()
        .map_err(|e| DigestError::Worker(format!("temporary file: {e}")))?;
    std::io::Write::write_all(&mut file, msg)
        .map_err(|e| DigestError::Worker(format!("temporary file: {e}")))?;
    // Root's worker runs as an unprivileged user: the file (0600) becomes that user's.
    if let Some(id) = crate::jail::identity::Identity::for_workers() {
        id.hand_over(file.path())
            .map_err(|e| DigestError::Worker(format!("temporary file: {e}")))?;
    }
    let reply = one_shot(
        &inst.library,
        vec![
            "hash".into(),
            inst.library.display().to_string(),
            "--digest-bits".into(),
            inst.digest_bits.to_string(),
            "--bits".into(),
            bits.to_string(),
            "--file".into(),
            file.path().display().to_string(),
            format!("--abi={}", inst.abi.name()),
        ],
        HASH_TIMEOUT,
    )?;
    match reply {
        Reply::Digest { overflow: true, .. } => Err(DigestError::Overflow(inst.label.clone())),
        Reply::Digest { rc, .. } if rc != 0 => Err(DigestError::Refused(rc)),
        Reply::Digest { hex, .. } => hex::decode(hex).map_err(|_| DigestError::NotHex),
        Reply::Error { message } => Err(DigestError::Worker(message)),
        _ => Err(DigestError::Unexpected),
    }
}

/// The harness's timing message of `len` bytes, as the trial worker prepares it.
pub(crate) fn harness_message(len: u64) -> Vec<u8> {
    (0..len)
        .map(|i| i.wrapping_mul(131).wrapping_add(len) as u8)
        .collect()
}
