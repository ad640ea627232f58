//! cyclescope's engine: load ICCS `CryptHash` libraries, prove them against their known-answer
//! tests, check the host, measure cycles per call and per byte by the NGCC guide's method, and
//! write the evidence (records, KAT logs, report pages). It knows nothing of terminals: the TUI
//! and the headless CLI in the `cyclescope` crate are two frontends over this API and its event
//! stream, and Cargo keeps ratatui and crossterm out of this crate. `unsafe` is confined to
//! `plugin`, `counter`, `jail` (with the build's jail) and `worker`.

pub mod baseline;
pub mod build;
pub mod campaign;
pub mod catalog;
pub mod conform;
pub mod counter;
pub mod cpu;
pub mod format;
pub mod host;
pub mod jail;
pub mod journal;
pub mod kat;
pub mod measure;
pub mod name;
pub mod owned;
pub mod plugin;
pub mod profile;
pub mod record;
pub mod report;
pub mod sanitize;
pub mod supercop;
pub mod sweep;
pub mod tune;
pub mod vocabulary;
pub mod worker;

#[cfg(test)]
mod input_props;

/// The trial worker's library (`cyclescope-worker`, built into its own `no_std` program by
/// `build.rs`), which the tests hold against the engine's side of each interface under the
/// name they have always used for it.
#[cfg(test)]
use cyclescope_worker as companion;
