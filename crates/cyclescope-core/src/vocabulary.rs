//! The words every layer shares: which job (`JobKey`), how a job, a worker process, a record
//! and a run ended (`JobOutcome`, `ProcessStatus`, `RecordStatus`, `CampaignState`), the
//! figures a finished job reports (`JobSummary`) and the events the campaign tells its
//! frontends (`EngineEvent`). Plain types with their serialised words and nothing else: they
//! sit below the campaign, the records and the frontends alike, so none of those has to reach
//! into another to speak about a job. This module never measures, writes or decides anything.

mod check;
mod event;
mod job;
mod status;

pub use check::{Check, CheckResult, Evidence, Grade, Outcome};
pub(crate) use event::PROGRESS_INTERVAL;
pub use event::{EngineEvent, HistogramSnapshot};
pub use job::{FailureKind, JobFailure, JobKey, JobOutcome, JobSummary, RunQueueWait};
pub use status::{CampaignState, ProcessStatus, RecordStatus};
