//! cyclescope's engine: load ICCS `CryptHash` libraries, prove them against their known-answer
//! tests, check the host, measure cycles per call and per byte by the NGCC guide's method, and
//! write the evidence (records, KAT logs, report pages). It knows nothing of terminals: the TUI
//! and the headless CLI in the `cyclescope` crate are two frontends over this API and its event
//! stream, and Cargo keeps ratatui and crossterm out of this crate. `unsafe` is confined to
//! `plugin` and `counter`.

pub mod baseline;
pub mod build;
pub mod campaign;
pub mod catalog;
pub mod counter;
pub mod cpu;
pub mod format;
pub mod host;
pub mod kat;
pub mod measure;
pub mod name;
pub mod plugin;
pub mod record;
pub mod report;
pub mod supercop;
pub mod sweep;
pub mod tune;
pub mod vocabulary;
pub mod worker;

#[cfg(test)]
mod input_props;
