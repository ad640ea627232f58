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

/// The trial worker's modules (`companion/`, built into its own `no_std` program by
/// `build.rs`), compiled here too so that the tests can hold them against the engine's side
/// of each interface. Most of it is only called from that program's `main`.
/// It loads a few of the engine's own files again (`perf_attr.rs`, `tsc.rs`):
/// in the program they are its only copy.
#[cfg(test)]
#[path = "../companion/worker.rs"]
#[allow(dead_code, clippy::duplicate_mod)]
pub(crate) mod companion;
