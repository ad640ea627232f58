//! The two gates before measuring: the KAT gate (an instance is timed only once its KAT
//! passed, unless allowed, as the harness does) and the host gate (checks, the environment
//! block every record carries, FIXED_ENV comparison on resume). Thin adapters from the `kat`
//! and `host` modules to what the engine and the records need.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde_json::{Map, Value, json};

use super::{EngineError, RunRequest};
use crate::catalog::{Instance, display_path};
use crate::kat::run::KatError;
use crate::kat::{KatEvent, KatOptions, run_kat};
use crate::measure::EngineEvent;
use crate::record::RunDir;
use crate::record::run_dir::free_bytes;

/// The KAT verdict as records store it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KatResult {
    pub(crate) status: String,
    pub(crate) detail: String,
    /// The log, relative to the run directory.
    pub(crate) log: Option<String>,
    pub(crate) log_sha256: Option<String>,
}

impl KatResult {
    pub(crate) fn unknown() -> Self {
        Self {
            status: "NOKAT".into(),
            detail: String::new(),
            log: None,
            log_sha256: None,
        }
    }
}

pub(crate) struct KatGate;

impl KatGate {
    /// Runs (or, for a KAT passed earlier this session, carries over) the KAT of `inst`,
    /// records it in `build.json`, and reports it as events. `None` when `cancel` stopped it
    /// (nothing is recorded: a resumed run runs it again).
    pub fn run(
        inst: &Instance,
        req: &RunRequest,
        dir: &RunDir,
        send: &mut dyn FnMut(EngineEvent),
        cancel: &Arc<AtomicBool>,
    ) -> Result<Option<KatResult>, EngineError> {
        let rel = Path::new("kat")
            .join(&inst.candidate)
            .join(format!("{}.log", inst.label));
        let log_path = dir.root().join(&rel);
        let result = match req.kat_passed.get(&inst.label) {
            Some(earlier) if earlier.is_file() && copy_log(earlier, &log_path) => KatResult {
                status: "PASS".into(),
                detail: "passed earlier in this session; log carried over".into(),
                log: Some(rel.display().to_string()),
                log_sha256: crate::record::sha256_file(&log_path).ok(),
            },
            _ => {
                // The KAT text goes into the run directory: a disk that cannot hold it stops
                // the run here, rather than failing the candidate for our lack of space.
                let needed = kat_text_bytes(inst.digest_bits) + (1 << 20);
                if let Some(free) = free_bytes(dir.root()).filter(|&f| f < needed) {
                    return Err(EngineError::DiskFull {
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
                opts.worker_exe = req.worker_exe.clone();
                opts.cancel = Some(cancel.clone());
                let label = inst.label.clone();
                let report = run_kat(inst, &opts, &mut |ev| {
                    if let KatEvent::Progress { file, done, total } = ev {
                        send(EngineEvent::KatProgress {
                            label: label.clone(),
                            file: file.tag().to_string(),
                            done: *done,
                            total: *total,
                        });
                    }
                });
                match report {
                    Ok(r) => KatResult {
                        status: r.status.as_str().to_string(),
                        detail: r.detail.clone(),
                        log: Some(rel.display().to_string()),
                        log_sha256: crate::record::sha256_file(&log_path).ok(),
                    },
                    Err(KatError::Cancelled(_)) => return Ok(None),
                    Err(e) => KatResult {
                        status: "LOADFAIL".into(),
                        detail: e.to_string(),
                        log: None,
                        log_sha256: None,
                    },
                }
            }
        };
        send(EngineEvent::KatFinished {
            label: inst.label.clone(),
            status: result.status.clone(),
            detail: result.detail.clone(),
            log: result.log.as_ref().map(|l| dir.root().join(l)),
        });
        let entry = build_entry(inst, &result);
        dir.update_build(&inst.key(), entry)
            .map_err(|source| EngineError::RecordWrite {
                run_dir: dir.root().to_path_buf(),
                what: "build.json".into(),
                source,
            })?;
        Ok(Some(result))
    }
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
        json!(crate::record::sha256_file(&inst.library).unwrap_or_default()),
    );
    m.insert(
        "elf_load_bytes".into(),
        json!(crate::plugin::elf_load_bytes(&inst.library).ok()),
    );
    m.insert("kat_log".into(), json!(kat.log));
    m.insert("kat_log_sha256".into(), json!(kat.log_sha256));
    Value::Object(m)
}

/// The host as the run found it: checks, the environment block, the clock for the
/// disturbance test. Checked once per run; records carry this environment.
pub(crate) struct HostGate {
    report: crate::host::HostReport,
    environment: Map<String, Value>,
    started_utc: String,
    load_average_start: [f64; 3],
}

impl HostGate {
    /// Checks CPU `cpu` of the host below `root` (`/` for this machine).
    pub(crate) fn check(root: &Path, cpu: usize) -> Result<Self, crate::host::HostError> {
        let root = crate::host::HostRoot::new(root);
        let mut probes = crate::host::Probes::for_root(&root)?;
        let report = crate::host::check_host(&root, cpu, &mut probes);
        let environment = crate::host::environment(&root, cpu, &mut probes);
        Ok(Self {
            report,
            environment,
            started_utc: crate::record::utc_now(),
            load_average_start: crate::record::load_average(),
        })
    }

    /// The harness's problem sentences (failed checks only).
    pub fn problems(&self) -> Vec<String> {
        self.report.problems()
    }

    pub fn environment(&self) -> Map<String, Value> {
        self.environment.clone()
    }

    /// The harness's `fixed_clock` (cpufreq max, else the probed clock) for the disturbance test.
    pub fn fixed_clock_hz(&self) -> Option<f64> {
        crate::host::fixed_clock_hz(&self.environment)
    }

    pub(crate) fn ref_to_core_ratio(&self) -> Option<f64> {
        self.environment
            .get("ref_to_core_ratio")
            .and_then(Value::as_f64)
    }

    pub(crate) fn started_utc(&self) -> String {
        self.started_utc.clone()
    }

    pub(crate) fn load_average_start(&self) -> [f64; 3] {
        self.load_average_start
    }

    /// FIXED_ENV differences between the run's first complete record on this CPU and now.
    pub(crate) fn changed_since_first_record(&self, run_dir: &Path) -> Vec<String> {
        let cpu = self.environment.get("cpu_number").cloned();
        let mut records = crate::record::run_dir::list_records(run_dir);
        records.sort_by(|a, b| a.1.started_utc.cmp(&b.1.started_utc));
        let first = records.iter().find(|(_, r)| {
            r.status == "complete" && r.environment.get("cpu_number").cloned() == cpu
        });
        match first {
            Some((_, r)) => crate::host::fixed_env_diff(&r.environment, &self.environment)
                .iter()
                .map(ToString::to_string)
                .collect(),
            None => Vec::new(),
        }
    }
}
