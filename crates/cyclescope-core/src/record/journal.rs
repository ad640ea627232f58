//! The run journal (`journal.jsonl`): one JSON line per engine event worth keeping, appended
//! and flushed as it happens, so a second process (`cyclescope watch`) can follow a run live
//! and a killed run leaves a readable history. Live histograms are included at most once a
//! second per job. Reading tolerates a torn last line (the writer may be mid-write or killed).

mod convert;

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::kat::KatStatus;
use crate::measure::TrialPlan;
use crate::vocabulary::{JobFailure, JobKey, JobSummary};

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
