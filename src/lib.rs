//! cyclescope: load ICCS `CryptHash` libraries, prove them against their known-answer tests,
//! check the host, measure cycles per call and per byte by the NGCC guide's method, and write
//! the evidence. The engine modules (`catalog`, `plugin`, `kat`, `host`, `measure`, `record`,
//! `report`, `worker`, `counter`) never import ratatui or crossterm; `tui` and `cli` are the two
//! frontends. `unsafe` is confined to `plugin` and `counter`.

pub mod catalog;
pub mod cli;
pub mod counter;
pub mod format;
pub mod host;
pub mod kat;
pub mod measure;
pub mod plugin;
pub mod record;
pub mod report;
pub mod tui;
pub mod worker;
