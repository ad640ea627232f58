//! Measurement: planning (`plan`), statistics (`stats`), the engine's typed events (`event`).
//! Measures cycles per call by the guide's loop method and per-call samples for histograms,
//! always in worker processes. Never imports ratatui or crossterm.

pub mod doubt;
pub mod engine;
pub(crate) mod event;
pub(crate) mod job;
pub mod plan;
pub mod stats;
pub mod trial;

pub use event::{EngineEvent, HistogramSnapshot, JobKey, JobSummary};
pub use plan::{Planning, TrialPlan, plan};
