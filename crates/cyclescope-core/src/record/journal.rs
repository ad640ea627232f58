//! The run journal (`journal.jsonl`): one JSON line per engine event worth keeping, appended
//! and flushed as it happens, so a second process (`cyclescope watch`) can follow a run live
//! and a killed run leaves a readable history. Live histograms are included at most once a
//! second per job. Reading tolerates a torn last line (the writer may be mid-write or killed).

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::histogram;
use std::sync::Arc;
use std::time::Duration;

use crate::kat::KatStatus;
use crate::measure::TrialPlan;
use crate::vocabulary::{EngineEvent, HistogramSnapshot, JobFailure, JobKey, JobSummary};

pub(crate) const FILE_NAME: &str = "journal.jsonl";

/// The most of the journal one `poll` reads.
pub(crate) const POLL_LIMIT: u64 = 16 << 20;

/// A journal line: the engine event in serialisable form, stamped with UTC time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub(crate) utc: String,
    #[serde(flatten)]
    pub event: JournalEvent,
}

impl Entry {
    /// When the event happened, as seconds since the Unix epoch (None if unreadable).
    pub fn unix_seconds(&self) -> Option<f64> {
        chrono::DateTime::parse_from_rfc3339(&self.utc)
            .ok()
            .map(|t| t.timestamp_micros() as f64 / 1e6)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum JournalEvent {
    RunStarted {
        labels: Vec<String>,
        lengths: Vec<u64>,
        /// The first measurement CPU.
        cpu: usize,
        /// Every measurement CPU (absent before lanes: `cpu` alone).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        cpus: Vec<usize>,
        pid: u32,
        /// The run's reference jobs (absent in older journals and when there are none).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        reference_jobs: Vec<String>,
    },
    HostProblems {
        problems: Vec<String>,
    },
    KatStarted {
        label: String,
    },
    KatFinished {
        label: String,
        status: KatStatus,
        detail: String,
        log: Option<PathBuf>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        check: Option<crate::conform::Check>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        findings: Vec<crate::conform::CheckResult>,
    },
    JobPlanned {
        job: JobKey,
        plan: TrialPlan,
        t1_s: f64,
    },
    JobStarted {
        job: JobKey,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cpu: Option<usize>,
    },
    TrialProgress {
        job: JobKey,
        trial: u32,
        trials: u32,
        calls_done: u64,
        calls_total: u64,
        loop_mean_cycles: Option<f64>,
        timer_overhead_ticks: f64,
        per_call_source: String,
        histogram: Option<String>,
    },
    TrialRetried {
        job: JobKey,
        trial: u32,
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cpu_wait: Option<crate::vocabulary::RunQueueWait>,
    },
    TrialOverdue {
        job: JobKey,
        trial: u32,
        trials: u32,
        elapsed_s: f64,
        expected_s: f64,
    },
    JobFinished {
        job: JobKey,
        summary: Box<JobSummary>,
        record: PathBuf,
    },
    JobFailed {
        job: JobKey,
        reason: JobFailure,
        stderr_tail: String,
        record: Option<PathBuf>,
    },
    Warning {
        message: String,
    },
    RunFinished {
        cancelled: bool,
        wall_s: f64,
        finished: usize,
        failed: usize,
    },
}

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

/// The appending side.
pub struct JournalWriter {
    file: File,
}

impl JournalWriter {
    pub fn open(run_dir: &Path) -> std::io::Result<Self> {
        use std::os::unix::fs::OpenOptionsExt;
        // Never through a link planted in the run folder.
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(run_dir.join(FILE_NAME))?;
        Ok(Self { file })
    }

    /// Appends one line (written with a single `write` so readers never see half of it
    /// interleaved with another line).
    pub fn append(&mut self, event: JournalEvent) -> std::io::Result<()> {
        let entry = Entry {
            utc: crate::record::utc_now(),
            event,
        };
        let mut line = serde_json::to_vec(&entry).map_err(std::io::Error::other)?;
        line.push(b'\n');
        self.file.write_all(&line)
    }
}

/// The following side: reads complete lines appended since the last call.
pub struct JournalReader {
    path: PathBuf,
    offset: u64,
}

impl JournalReader {
    pub fn new(run_dir: &Path) -> Self {
        Self {
            path: run_dir.join(FILE_NAME),
            offset: 0,
        }
    }

    /// New complete entries (a torn or garbled line is skipped; an incomplete last line is
    /// left for the next call).
    /// The journal is read like any evidence file: not through a link, only a regular file,
    /// and at most [`POLL_LIMIT`] bytes per call (a line longer than that is garbage and is
    /// skipped).
    pub fn poll(&mut self) -> std::io::Result<Vec<Entry>> {
        use super::safe_path::PathError;
        let (root, name) = match (self.path.parent(), self.path.file_name()) {
            (Some(r), Some(n)) => (r, Path::new(n)),
            _ => return Ok(vec![]),
        };
        let mut f = match super::read::open_inside(root, name) {
            Ok(f) => f,
            Err(PathError::Missing { .. }) => return Ok(vec![]),
            Err(e) => return Err(std::io::Error::other(e.to_string())),
        };
        f.seek(SeekFrom::Start(self.offset))?;
        let mut buf = Vec::new();
        f.take(POLL_LIMIT).read_to_end(&mut buf)?;
        let complete = match buf.iter().rposition(|&b| b == b'\n') {
            Some(i) => i + 1,
            None if buf.len() as u64 == POLL_LIMIT => {
                self.offset += POLL_LIMIT;
                return Ok(vec![]);
            }
            None => 0,
        };
        self.offset += complete as u64;
        Ok(buf[..complete]
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .filter_map(|l| serde_json::from_slice(l).ok())
            .collect())
    }
}
