//! Measurement below the campaign: planning (`plan`), statistics (`stats`), the worker side of
//! a trial (`trial`), the codec of its command line (`trial_args`) and the parent side of one
//! worker process (`job`), the paired statistic of interleaved A/B trials (`paired`), and the
//! proof that timed calls did the work (`proof`), the buffer layouts (`layout`), and the
//! parent side of an instruction count under valgrind (`count`).
//! Measures cycles per call by the guide's loop method and per-call samples for histograms,
//! always in worker processes. It never decides which jobs run, never
//! retries and never writes records (that is `campaign`).

pub mod body;
pub mod clock;
pub(crate) mod count;
pub mod doubt;
pub mod eta;
pub(crate) mod job;
pub mod layout;
pub mod one_call;
pub mod paired;
pub mod plan;
pub mod proof;
pub mod robust;
pub mod stats;
pub mod table;
pub mod trial;
pub mod trial_args;

pub use plan::{Planning, TrialPlan, plan};
