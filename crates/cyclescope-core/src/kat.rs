//! Known-answer tests of hash instances, the way the ICCS generator and the harness's
//! `ngcc_kat` do them: the ICCS DRNG (`drng`), the four official KAT generators (`generate`),
//! `kat.sha256` manifests and reference comparison (`manifest`), the statuses (`status`), the
//! worker-side job and its messages (`job`), the engine side that runs a job in a worker
//! process and classifies its end (`run`), and the published log layout (`log`). Candidate
//! code only ever runs in the worker; nothing here touches a terminal.

pub(crate) mod drng;
pub mod generate;
pub mod job;
pub mod known;
pub(crate) mod log;
pub(crate) mod manifest;
pub mod pool;
mod produce;
pub mod run;
pub(crate) mod status;

pub use drng::Drng;
pub use generate::{KatFile, generate};
pub use manifest::{Manifest, ManifestEntry};
pub use run::{
    FileReport, KatError, KatEvent, KatOptions, KatReport, KatScope, Reference, run_kat,
};
pub use status::{KatStatus, KatVerdict};
