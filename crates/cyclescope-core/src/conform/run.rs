//! The order the checks run in, and the oracle they compare with. Every check is the engine's
//! (`kat::run::engine_checks`): each runs in trial workers, the program every timed call runs
//! in, on messages the engine drew, and the engine judges what comes back. No check runs in a
//! process of the engine's own, and none takes a worker's word for its outcome.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::Check;
use crate::plugin::Abi;

/// The checks the engine runs against an oracle, in trial workers of their own (`oracle`).
pub const ORACLE_CHECKS: [Check; 2] = [Check::Differential, Check::LongMessage];

/// Every check, in the order it runs: the oracle's, then the framed tables' (`tabled`:
/// `outside_bytes` first, for the sample the others compare with; `reentrancy` in two threads
/// of one trial worker, `over_read` against an inaccessible page), then the two that the
/// writes those jobs saw decide, then `digest_length`, whose calls are out of domain. Each
/// runs in trial workers of its own, so a crash in one decides that one alone.
pub const ENGINE_CHECKS: [Check; 11] = [
    ORACLE_CHECKS[0],
    ORACLE_CHECKS[1],
    Check::OutsideBytes,
    Check::Determinism,
    Check::Alignment,
    Check::UnusedBits,
    Check::Reentrancy,
    Check::OverRead,
    Check::InputUnchanged,
    Check::OutputBounds,
    Check::DigestLength,
];

/// The order outcomes arrive in (the job holds its messages to it).
pub(crate) const RUN_ORDER: [Check; 11] = ENGINE_CHECKS;

/// The second implementation to compare with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OracleSpec {
    /// The oracle instance's label (for the evidence).
    pub label: String,
    pub library: PathBuf,
    #[serde(default)]
    pub abi: Abi,
}
