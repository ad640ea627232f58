//! The two-way mapping between engine events and journal lines: which events are kept, how
//! paths become relative to the run folder, and how a line turns back into an event.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::JournalEvent;
use crate::record::histogram;
use crate::vocabulary::{EngineEvent, HistogramSnapshot};

impl JournalEvent {
    /// The journal form of an engine event; None for events not journalled (KAT progress).
    /// Paths are stored relative to the run directory, so the journal names no absolute path.
    pub(crate) fn from_event(ev: &EngineEvent, run_dir: &Path) -> Option<Self> {
        let rel = |p: PathBuf| p.strip_prefix(run_dir).map(Path::to_path_buf).unwrap_or(p);
        Some(match ev.clone() {
            EngineEvent::RunStarted {
                run_dir: _,
                labels,
                lengths,
                cpus,
                reference_jobs,
            } => JournalEvent::RunStarted {
                labels,
                lengths,
                cpu: cpus.first().copied().unwrap_or(0),
                cpus,
                pid: std::process::id(),
                reference_jobs,
            },
            EngineEvent::HostProblems { problems } => JournalEvent::HostProblems { problems },
            EngineEvent::KatStarted { label } => JournalEvent::KatStarted { label },
            EngineEvent::KatProgress { .. } => return None,
            // The records' environment block says it (`host_check_reused_from`).
            EngineEvent::HostReused { .. } => return None,
            // Before the run has a folder: nothing to write them into.
            EngineEvent::CpuWaiting { .. } | EngineEvent::CpuFree { .. } => return None,
            // Each kept trial's clock is in its record (`clock_hz_by_trial`).
            EngineEvent::TrialClock { .. } => return None,
            EngineEvent::KatFinished {
                label,
                status,
                detail,
                log,
                check,
                findings,
            } => JournalEvent::KatFinished {
                label,
                status,
                detail,
                log: log.map(rel),
                check,
                findings,
            },
            EngineEvent::JobPlanned { job, plan, t1_s } => {
                JournalEvent::JobPlanned { job, plan, t1_s }
            }
            EngineEvent::JobStarted { job, cpu } => JournalEvent::JobStarted { job, cpu },
            EngineEvent::TrialProgress {
                job,
                trial,
                trials,
                calls_done,
                calls_total,
                snapshot,
            } => JournalEvent::TrialProgress {
                job,
                trial,
                trials,
                calls_done,
                calls_total,
                loop_mean_cycles: snapshot.loop_mean_cycles,
                timer_overhead_ticks: snapshot.timer_overhead_ticks,
                per_call_source: snapshot.per_call_source,
                histogram: histogram::encode(&snapshot.histogram),
            },
            EngineEvent::TrialRetried {
                job,
                trial,
                reason,
                cpu_wait,
            } => JournalEvent::TrialRetried {
                job,
                trial,
                reason,
                cpu_wait,
            },
            EngineEvent::TrialOverdue {
                job,
                trial,
                trials,
                elapsed,
                expected,
            } => JournalEvent::TrialOverdue {
                job,
                trial,
                trials,
                elapsed_s: elapsed.as_secs_f64(),
                expected_s: expected.as_secs_f64(),
            },
            EngineEvent::JobFinished {
                job,
                summary,
                record,
                ..
            } => JournalEvent::JobFinished {
                job,
                summary,
                record,
            },
            EngineEvent::JobFailed {
                job,
                reason,
                stderr_tail,
                record,
            } => JournalEvent::JobFailed {
                job,
                reason,
                stderr_tail,
                record,
            },
            EngineEvent::Warning { message } => JournalEvent::Warning { message },
            EngineEvent::RunFinished {
                cancelled,
                wall,
                finished,
                failed,
            } => JournalEvent::RunFinished {
                cancelled,
                wall_s: wall.as_secs_f64(),
                finished,
                failed,
            },
        })
    }

    /// Back to an engine event, for frontends that follow the journal of `run_dir`.
    pub fn into_event(self, run_dir: &Path) -> EngineEvent {
        match self {
            JournalEvent::RunStarted {
                labels,
                lengths,
                cpu,
                cpus,
                reference_jobs,
                ..
            } => EngineEvent::RunStarted {
                run_dir: run_dir.to_path_buf(),
                labels,
                lengths,
                cpus: if cpus.is_empty() { vec![cpu] } else { cpus },
                reference_jobs,
            },
            JournalEvent::HostProblems { problems } => EngineEvent::HostProblems { problems },
            JournalEvent::KatStarted { label } => EngineEvent::KatStarted { label },
            JournalEvent::KatFinished {
                label,
                status,
                detail,
                log,
                check,
                findings,
            } => EngineEvent::KatFinished {
                label,
                status,
                detail,
                log: log.map(|l| run_dir.join(l)),
                check,
                findings,
            },
            JournalEvent::JobPlanned { job, plan, t1_s } => {
                EngineEvent::JobPlanned { job, plan, t1_s }
            }
            JournalEvent::JobStarted { job, cpu } => EngineEvent::JobStarted { job, cpu },
            JournalEvent::TrialProgress {
                job,
                trial,
                trials,
                calls_done,
                calls_total,
                loop_mean_cycles,
                timer_overhead_ticks,
                per_call_source,
                histogram,
            } => {
                let h = histogram
                    .as_deref()
                    .and_then(histogram::decode)
                    .unwrap_or_else(crate::measure::stats::new_histogram);
                EngineEvent::TrialProgress {
                    job,
                    trial,
                    trials,
                    calls_done,
                    calls_total,
                    snapshot: HistogramSnapshot {
                        per_call: crate::measure::stats::per_call(&h),
                        histogram: Arc::new(h),
                        loop_mean_cycles,
                        timer_overhead_ticks,
                        per_call_source,
                    },
                }
            }
            JournalEvent::TrialRetried {
                job,
                trial,
                reason,
                cpu_wait,
            } => EngineEvent::TrialRetried {
                job,
                trial,
                reason,
                cpu_wait,
            },
            JournalEvent::TrialOverdue {
                job,
                trial,
                trials,
                elapsed_s,
                expected_s,
            } => EngineEvent::TrialOverdue {
                job,
                trial,
                trials,
                // A journal is read back as written; a foreign one gets no panic from a value.
                elapsed: Duration::try_from_secs_f64(elapsed_s).unwrap_or_default(),
                expected: Duration::try_from_secs_f64(expected_s).unwrap_or_default(),
            },
            JournalEvent::JobFinished {
                job,
                summary,
                record,
            } => EngineEvent::JobFinished {
                job,
                summary,
                record,
                snapshot: None,
            },
            JournalEvent::JobFailed {
                job,
                reason,
                stderr_tail,
                record,
            } => EngineEvent::JobFailed {
                job,
                reason,
                stderr_tail,
                record,
            },
            JournalEvent::Warning { message } => EngineEvent::Warning { message },
            JournalEvent::RunFinished {
                cancelled,
                wall_s,
                finished,
                failed,
            } => EngineEvent::RunFinished {
                cancelled,
                // A journal is input: a wall time beyond any Duration must not panic a reader.
                wall: Duration::try_from_secs_f64(wall_s.max(0.0)).unwrap_or(Duration::MAX),
                finished,
                failed,
            },
        }
    }
}
