//! A run directory: `campaign.json` (what was asked, the host at start and end, planning),
//! `build.json` (per instance: library, KAT status and log, as the harness's), `records/`,
//! `kat/`, `katgen/` (generated KAT text) and `journal.jsonl`. One writer at a time, enforced
//! with an advisory lock on `.campaign.lock`. A run directory is written only when it is this
//! user's real folder (`crate::owned`), never through a link.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::pyjson::write_json_atomic;
use super::read::JSON_LIMIT;
use super::safe_path::PathError;
use super::schema::TimingRecord;
use crate::catalog::Instance;
use crate::measure::Planning;
use crate::vocabulary::CampaignState;

#[derive(Debug, thiserror::Error)]
pub enum RunDirError {
    #[error("run directory {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a cyclescope run directory (no campaign.json)")]
    NotARun { path: PathBuf },
    #[error("{path} is malformed: {detail}")]
    Malformed { path: PathBuf, detail: String },
    #[error("another cyclescope process is writing {0} (it holds .campaign.lock)")]
    Busy(PathBuf),
    #[error(transparent)]
    Path(#[from] super::safe_path::PathError),
    #[error(transparent)]
    NotOwned(#[from] crate::owned::OwnedError),
}

/// The lock file whose identity proves the run directory is still the one opened.
const LOCK_FILE: &str = ".campaign.lock";

/// One host check pass stored with the campaign.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct HostCheckEntry {
    pub(crate) phase: String,
    pub(crate) cpu: usize,
    pub(crate) utc: String,
    pub problems: Vec<String>,
    /// The lane (`k/L`, the harness's shard of one run directory) this CPU measured for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) shard: Option<String>,
}

/// `campaign.json`: the harness's keys, then cyclescope's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Campaign {
    pub(crate) system_id: String,
    pub(crate) started_utc: String,
    pub(crate) environment_at_start: Map<String, Value>,
    pub(crate) host_checks: Vec<HostCheckEntry>,
    pub planning: Planning,
    pub(crate) ended_utc: Option<String>,
    pub(crate) environment_at_end: Option<Map<String, Value>>,
    pub(crate) host_problems: Vec<String>,
    /// The harness's shards of this run directory: one per measurement CPU (lane).
    pub(crate) shards: u32,
    /// Lane `k/L` → its CPU.
    #[serde(default)]
    pub(crate) shard_cpus: BTreeMap<String, usize>,
    pub cyclescope: CampaignRequest,
    /// Whether the run could check each trial's clock (with which witness), or why not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_verification: Option<crate::measure::clock::ClockVerification>,
}

impl Campaign {
    /// The host problems the run was allowed to measure with (`--allow-unfixed-host`, `A`).
    pub fn host_problems(&self) -> &[String] {
        &self.host_problems
    }
}

/// What the run was asked to do: enough for `run --resume` to finish it with no other input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CampaignRequest {
    pub instances: Vec<Instance>,
    pub lengths: Vec<u64>,
    /// The first measurement CPU (what runs before lanes stored).
    pub cpu: usize,
    /// Every measurement CPU.
    #[serde(default)]
    pub cpus: Vec<usize>,
    /// The slice of a larger campaign this run measures (`--shard K/N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::campaign::Shard>,
    /// Which lane measures which instances (`candidate/label`): the deterministic assignment.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lanes: Vec<LaneAssignment>,
    /// Whether cyclescope's own threads shared a measurement CPU (no other CPU was left).
    #[serde(default)]
    pub engine_shared_cpu: bool,
    /// The runs a `merge` joined into this dataset.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<MergedRun>,
    pub allow_unfixed_host: bool,
    pub allow_kat_fail: bool,
    pub(crate) tui_attached: bool,
    /// The adaptive mode, when the run uses it (absent: the guide's fixed trials).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<crate::measure::plan::Adaptive>,
    /// The candidate "× pseudoXOF" divides by (absent in runs before it was stored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// What the run counts (absent: cycles), so that a resumed run counts the same.
    #[serde(default, skip_serializing_if = "is_cycles")]
    pub counter: crate::counter::RunCounter,
    /// Labels of the baseline instances added as reference jobs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reference_jobs: Vec<String>,
    pub(crate) state: CampaignState,
}

/// The instances one lane (measurement CPU) takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaneAssignment {
    pub cpu: usize,
    pub instances: Vec<String>,
}

/// One run directory a merged dataset came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergedRun {
    pub run: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::campaign::Shard>,
    pub records: usize,
}

/// An open run directory, locked for writing.
pub struct RunDir {
    root: PathBuf,
    _lock: Flock<File>,
    /// Serialises the read-modify-write of `build.json` between the lanes of one run.
    build: std::sync::Mutex<()>,
}

impl RunDir {
    /// Creates (or opens) `root` for writing and takes its lock.
    pub(crate) fn open_for_writing(root: &Path) -> Result<Self, RunDirError> {
        let io = |source| RunDirError::Io {
            path: root.to_path_buf(),
            source,
        };
        // A link or another user's folder is refused before anything is written: root would
        // otherwise write records wherever the link points, or into a folder its owner can
        // swap for one.
        crate::owned::create_run_folder(root)?;
        std::fs::create_dir_all(root.join("records")).map_err(io)?;
        // Never truncated: the lock's identity, not its content, is what counts.
        let lock_file = crate::owned::open_lock_file(&root.join(LOCK_FILE))?;
        let lock = Flock::lock(lock_file, FlockArg::LockExclusiveNonblock)
            .map_err(|_| RunDirError::Busy(root.to_path_buf()))?;
        Ok(Self {
            root: root.to_path_buf(),
            _lock: lock,
            build: std::sync::Mutex::new(()),
        })
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Fails when the run directory was deleted or replaced since it was opened.
    fn still_ours(&self) -> Result<(), RunDirError> {
        Ok(super::safe_path::still_locked(
            &self.root,
            LOCK_FILE,
            &self._lock,
        )?)
    }

    pub(crate) fn write_campaign(&self, c: &Campaign) -> Result<(), RunDirError> {
        self.still_ours()?;
        let path = self.root.join("campaign.json");
        write_json_atomic(&path, c).map_err(|source| RunDirError::Io { path, source })
    }

    /// Writes a record atomically; returns its path relative to the run directory.
    pub(crate) fn write_record(&self, r: &TimingRecord) -> Result<PathBuf, RunDirError> {
        self.still_ours()?;
        let rel = TimingRecord::relative_path(&r.candidate, &r.label, r.input_bytes);
        let path = super::safe_path::inside(&self.root, &rel)?;
        write_json_atomic(&path, r).map_err(|source| RunDirError::Io { path, source })?;
        Ok(rel)
    }

    /// Adds or replaces one instance's entry in `build.json` (read-modify-write under the lock).
    pub(crate) fn update_build(&self, key: &str, entry: Value) -> Result<(), RunDirError> {
        // A lane that panicked mid-update left the file whole (it is replaced atomically).
        let _one_writer = self
            .build
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        self.still_ours()?;
        let path = self.root.join("build.json");
        let read = super::read::read_inside(&self.root, Path::new("build.json"), JSON_LIMIT);
        let mut build = match read {
            Ok(bytes) => {
                serde_json::from_slice::<Value>(&bytes).map_err(|e| RunDirError::Malformed {
                    path: path.clone(),
                    detail: e.to_string(),
                })?
            }
            Err(PathError::Missing { .. }) => serde_json::json!({"instances": {}, "optimized": {}}),
            Err(e) => return Err(e.into()),
        };
        if let Some(instances) = build.get_mut("instances").and_then(Value::as_object_mut) {
            instances.insert(key.to_string(), entry);
        }
        write_json_atomic(&path, &build).map_err(|source| RunDirError::Io { path, source })
    }
}

/// Bytes free for this user on the filesystem holding `path` (None if it cannot be asked).
pub(crate) fn free_bytes(path: &Path) -> Option<u64> {
    let st = nix::sys::statvfs::statvfs(path).ok()?;
    Some((st.blocks_available() as u64).saturating_mul(st.fragment_size() as u64))
}

/// Reads `campaign.json` of a run (no lock needed: it is replaced atomically).
pub fn read_campaign(root: &Path) -> Result<Campaign, RunDirError> {
    let path = root.join("campaign.json");
    let bytes = match super::read::read_inside(root, Path::new("campaign.json"), JSON_LIMIT) {
        Ok(b) => b,
        Err(PathError::Missing { .. }) => {
            return Err(RunDirError::NotARun {
                path: root.to_path_buf(),
            });
        }
        Err(e) => return Err(e.into()),
    };
    let campaign: Campaign =
        serde_json::from_slice(&bytes).map_err(|e| RunDirError::Malformed {
            path: path.clone(),
            detail: e.to_string(),
        })?;
    // A campaign is resumed from this file alone: its names and numbers get the checks a
    // config gets.
    check_request(&campaign).map_err(|detail| RunDirError::Malformed { path, detail })?;
    Ok(campaign)
}

fn check_request(c: &Campaign) -> Result<(), String> {
    use crate::catalog::bounds;
    for i in &c.cyclescope.instances {
        i.file_names().map_err(|e| e.to_string())?;
        bounds::check_digest_bits(u64::from(i.digest_bits))?;
    }
    bounds::check_lengths(&c.cyclescope.lengths)?;
    bounds::TRIALS.check(u64::from(c.planning.trials))?;
    bounds::TRIAL_TARGET.check(c.planning.trial_target_s)?;
    bounds::OP_BUDGET.check(c.planning.op_budget_s)?;
    if let Some(a) = &c.cyclescope.adaptive {
        bounds::check_fraction("adaptive precision", a.precision)?;
        bounds::MAX_TRIALS.check(u64::from(a.max_trials))?;
    }
    Ok(())
}

/// Reads a record if it exists and parses (a missing or unreadable one is "not done").
pub(crate) fn read_record(
    root: &Path,
    candidate: &str,
    label: &str,
    bytes: u64,
) -> Option<TimingRecord> {
    let rel = TimingRecord::relative_path(candidate, label, bytes);
    serde_json::from_slice(&super::read::read_inside(root, &rel, JSON_LIMIT).ok()?).ok()
}

/// The record at `rel` inside `root`, if it is one.
pub(crate) fn read_record_at(root: &Path, rel: &Path) -> Option<TimingRecord> {
    serde_json::from_slice(&super::read::read_inside(root, rel, JSON_LIMIT).ok()?).ok()
}

/// Every record under `records/`, with its path relative to the run directory (files that
/// are not records are left out: callers that must name them use `read::scan_records`).
pub fn list_records(root: &Path) -> Vec<(PathBuf, TimingRecord)> {
    super::read::scan_records(root).records
}

/// Seconds of worker processes per instance (`candidate/label`) over the records of a run:
/// the harness's prior cost of an instance, for balancing shards.
pub fn instance_wall_seconds(root: &Path) -> BTreeMap<String, f64> {
    let mut costs = BTreeMap::new();
    for (_, r) in list_records(root) {
        let wall: f64 = r.processes.iter().map(|p| p.wall_s).sum();
        *costs
            .entry(format!("{}/{}", r.candidate, r.label))
            .or_insert(0.0) += wall;
    }
    costs
}

fn is_cycles(c: &crate::counter::RunCounter) -> bool {
    *c == crate::counter::RunCounter::Cycles
}
