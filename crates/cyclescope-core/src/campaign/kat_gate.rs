//! The KAT gate: an instance is timed only once its KAT passed (unless allowed, as the
//! harness does). It runs the KAT job through the campaign's runner (or carries over a log the
//! TUI's session already has, or reuses a pass the tuning journal remembers for the same
//! library, manifest, checks' version and scope: "cached from run X"), records the verdict in
//! `build.json` and reports it as events. It never measures.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::runner::TrialRunner;
use super::{CampaignError, RunRequest};
use crate::catalog::{Instance, display_path};
use crate::kat::{KatEvent, KatOptions, KatStatus};
use crate::record::RunDir;
use crate::record::run_dir::free_bytes;
use crate::vocabulary::EngineEvent;

/// The KAT verdict as records store it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KatResult {
    pub(crate) status: KatStatus,
    pub(crate) detail: String,
    /// The log, relative to the run directory.
    pub(crate) log: Option<String>,
    pub(crate) log_sha256: Option<String>,
    /// The conformance checks' outcomes (empty for a KAT carried over or never run; those of
    /// the earlier pass for one reused from the journal).
    pub(crate) conformance: Vec<crate::conform::CheckResult>,
    /// The earlier run whose pass this one reused (the journal's KAT cache).
    pub(crate) cached_from: Option<String>,
    /// Every vector of this run's verified `KAT_2_12` text (`kat::known`): hashed again before
    /// timing in the program the timed calls run in. None for a KAT carried over or reused, or
    /// without a reference.
    pub(crate) known_answers: Vec<crate::kat::known::KnownAnswer>,
    /// The KAT worker's account, where this run ran it.
    pub(crate) worker: Option<crate::record::schema::WorkerAccount>,
}

impl KatResult {
    /// The check that failed, which every table names beside NONCONFORM.
    pub(crate) fn failed_check(&self) -> Option<crate::conform::Check> {
        crate::conform::first_failure(&self.conformance).map(|r| r.check)
    }
}

/// Runs (or, for a KAT passed earlier this session, carries over) the KAT of `inst`, records
/// it in `build.json`, and reports it as events. `None` when the cancel flag stopped the job:
/// nothing is recorded, so a resumed run runs it again.
pub(super) fn kat_gate(
    inst: &Instance,
    req: &RunRequest,
    dir: &RunDir,
    runner: &mut dyn TrialRunner,
    send: &mut dyn FnMut(EngineEvent),
) -> Result<Option<KatResult>, CampaignError> {
    let rel = Path::new("kat")
        .join(&inst.candidate)
        .join(format!("{}.log", inst.label));
    let cache = KatCache::open(req, inst);
    let result = match carried_over(req, inst, dir, &rel)
        .or_else(|| cache.as_ref().and_then(|c| c.reuse(dir, &rel)))
    {
        Some(r) => r,
        None => match run_fresh(inst, req, dir, &rel, runner, send)? {
            Some(r) => {
                if let Some(c) = &cache {
                    c.remember(dir, &rel, &r);
                }
                r
            }
            None => return Ok(None),
        },
    };
    send(EngineEvent::KatFinished {
        label: inst.label.clone(),
        status: result.status,
        detail: result.detail.clone(),
        log: result.log.as_ref().map(|l| dir.root().join(l)),
        check: result.failed_check(),
        findings: crate::conform::findings(&result.conformance),
    });
    dir.update_build(&inst.key(), build_entry(inst, &result))
        .map_err(|source| CampaignError::RecordWrite {
            run_dir: dir.root().to_path_buf(),
            what: "build.json".into(),
            source,
        })?;
    Ok(Some(result))
}

/// A pass from earlier in this session, its log copied into this run.
fn carried_over(req: &RunRequest, inst: &Instance, dir: &RunDir, rel: &Path) -> Option<KatResult> {
    let earlier = req.kat_passed.get(&inst.label)?;
    let log_path = dir.root().join(rel);
    (earlier.is_file() && copy_log(earlier, &log_path)).then(|| KatResult {
        status: KatStatus::Pass,
        detail: "passed earlier in this session; log carried over".into(),
        log: Some(rel.display().to_string()),
        log_sha256: crate::record::sha256_file(&log_path).ok(),
        conformance: Vec::new(),
        cached_from: None,
        known_answers: Vec::new(),
        worker: None,
    })
}

/// The journal's KAT passes, for one instance: its key, and the journal it is kept in.
struct KatCache {
    journal: crate::journal::Journal,
    key: crate::journal::KatKey,
}

impl KatCache {
    /// None when the run keeps no journal, or it cannot be opened (the KAT then simply runs).
    fn open(req: &RunRequest, inst: &Instance) -> Option<Self> {
        let crate::journal::JournalTarget::At(path) = &req.journal else {
            return None;
        };
        let journal =
            crate::journal::Journal::open_waiting(path, std::time::Duration::from_secs(1)).ok()?;
        let manifest_sha256 = match &inst.kat_manifest {
            Some(m) => crate::record::sha256_file(m).ok()?,
            None => "none".into(),
        };
        let key = crate::journal::KatKey {
            library_sha256: crate::plugin::sealed::sha256_of(&inst.library)?,
            manifest_sha256,
            checks_version: crate::conform::CHECKS_VERSION,
            // The campaign's gate runs the default scope (`kat --loop`/`--full` are their own).
            scope: "default".into(),
            kat_name: inst.kat_name.clone().unwrap_or_else(|| inst.label.clone()),
            digest_bits: inst.digest_bits,
        };
        Some(Self { journal, key })
    }

    /// The remembered pass, its log copied into this run.
    fn reuse(&self, dir: &RunDir, rel: &Path) -> Option<KatResult> {
        let pass = self.journal.kat_pass(&self.key).ok()??;
        let log_path = dir.root().join(rel);
        if !pass.still_there() || !copy_log(&pass.log, &log_path) {
            return None;
        }
        // The run's folder name only: a run folder never holds an absolute path.
        let from = pass
            .run_dir
            .file_name()
            .map_or_else(|| "?".into(), |n| n.to_string_lossy().into_owned());
        Some(KatResult {
            status: KatStatus::Pass,
            detail: format!("cached from run {from} (same library, manifest, checks and scope)"),
            log: Some(rel.display().to_string()),
            log_sha256: crate::record::sha256_file(&log_path).ok(),
            // The pass's outcomes, its findings among them, as the run that passed had them.
            conformance: pass.conformance,
            cached_from: Some(from),
            known_answers: Vec::new(),
            worker: None,
        })
    }

    /// Keeps a fresh pass for the runs after this one (a failure to keep it costs only time).
    fn remember(&self, dir: &RunDir, rel: &Path, r: &KatResult) {
        let (KatStatus::Pass, Some(log_sha256)) = (r.status, &r.log_sha256) else {
            return;
        };
        let pass = crate::journal::KatPass {
            run_dir: dir.root().to_path_buf(),
            log: dir.root().join(rel),
            log_sha256: log_sha256.clone(),
            conformance: r.conformance.clone(),
        };
        let _ = self.journal.remember_kat_pass(&self.key, &pass);
    }
}

fn run_fresh(
    inst: &Instance,
    req: &RunRequest,
    dir: &RunDir,
    rel: &Path,
    runner: &mut dyn TrialRunner,
    send: &mut dyn FnMut(EngineEvent),
) -> Result<Option<KatResult>, CampaignError> {
    // The KAT text goes into the run directory: a disk that cannot hold it stops the run
    // here, rather than failing the candidate for our lack of space.
    let needed = kat_text_bytes(inst.digest_bits) + (1 << 20);
    if let Some(free) = free_bytes(dir.root()).filter(|&f| f < needed) {
        return Err(CampaignError::DiskFull {
            run_dir: dir.root().to_path_buf(),
            what: format!("the KAT text of {}", inst.label),
            needed,
            free,
        });
    }
    send(EngineEvent::KatStarted {
        label: inst.label.clone(),
    });
    let mut opts = KatOptions::new(dir.root());
    opts.timeout = req.kat_timeout;
    opts.limits.address_space_bytes = req.limits.address_space_bytes;
    opts.peers = req.instances.clone();
    let label = inst.label.clone();
    let Some(run) = runner.kat(inst, &opts, &mut |ev| {
        if let KatEvent::Progress { file, done, total } = ev {
            send(EngineEvent::KatProgress {
                label: label.clone(),
                file: file.tag().to_string(),
                done: *done,
                total: *total,
            });
        }
    }) else {
        return Ok(None);
    };
    let log_path = dir.root().join(rel);
    Ok(Some(KatResult {
        status: run.status,
        detail: run.detail,
        log: run.logged.then(|| rel.display().to_string()),
        log_sha256: run
            .logged
            .then(|| crate::record::sha256_file(&log_path).ok())
            .flatten(),
        conformance: run.conformance,
        cached_from: None,
        known_answers: run.known_answers,
        worker: run.worker,
    }))
}

/// Bytes of the default-scope KAT text for a `digest_bits` instance: `KAT_2_12` (4097
/// messages of up to 512 bytes in hex, and their digests) dominates; `KAT_2_23` is small.
fn kat_text_bytes(digest_bits: u32) -> u64 {
    2_600_000 + 4097 * (u64::from(digest_bits) / 4 + 24)
}

fn copy_log(from: &Path, to: &Path) -> bool {
    if from == to {
        return true;
    }
    to.parent()
        .is_some_and(|d| std::fs::create_dir_all(d).is_ok())
        && std::fs::copy(from, to).is_ok()
}

/// A `build.json` instance entry, as the harness writes it.
fn build_entry(inst: &Instance, kat: &KatResult) -> Value {
    let mut m = Map::new();
    m.insert("candidate".into(), json!(inst.candidate));
    m.insert("label".into(), json!(inst.label));
    m.insert(
        "instance".into(),
        json!(inst.kat_name.clone().unwrap_or_else(|| inst.label.clone())),
    );
    m.insert("variant".into(), json!(inst.variant));
    m.insert("flags".into(), json!(inst.flags));
    m.insert("kat".into(), json!(kat.status));
    m.insert("library".into(), json!(display_path(&inst.library)));
    m.insert(
        "library_sha256".into(),
        json!(crate::plugin::sealed::sha256_of(&inst.library).unwrap_or_default()),
    );
    m.insert(
        "elf_load_bytes".into(),
        json!(crate::plugin::sealed::elf_load_bytes_of(&inst.library)),
    );
    m.insert("kat_log".into(), json!(kat.log));
    m.insert("kat_log_sha256".into(), json!(kat.log_sha256));
    if let Some(from) = &kat.cached_from {
        m.insert("kat_cached_from".into(), json!(from));
    }
    Value::Object(m)
}
