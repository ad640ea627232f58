//! A dataset as the report pages see it: a cyclescope run directory or a published harness
//! dataset (`campaign.json`, `build.json`, `records/`). Owns reading those files for the
//! report and the questions the pages ask of them (environment, measuring CPU, per-instance
//! evidence). Never writes anything and never interprets side files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::name::SafeName;
use crate::record::TimingRecord;
use crate::record::check::{CheckedRecord, Finding, check_records};
use crate::record::read::{JSON_LIMIT, read_inside};
use crate::record::safe_path::PathError;

/// Why pages cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a run directory or harness dataset (no campaign.json)")]
    NotADataset { path: PathBuf },
    #[error(
        "{root}: {files} file(s) under records/ cannot be used (`cyclescope validate` names the \
         same), so what is made of it would be wrong or incomplete:\n  {}",
        .findings.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n  ")
    )]
    UnreadableRecords {
        root: PathBuf,
        files: usize,
        findings: Vec<Finding>,
    },
    #[error("{0}")]
    Unsafe(#[from] PathError),
    #[error("{path} is malformed: {detail}")]
    Malformed { path: PathBuf, detail: String },
    #[error(transparent)]
    Figure(#[from] super::figures::FigureError),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    NotOwned(#[from] crate::owned::OwnedError),
    #[error(
        "{published}: no job in common with {dataset} (no hash instance measured at the same \
         length in both): nothing to put beside the published figures"
    )]
    NoJobInCommon {
        published: PathBuf,
        dataset: PathBuf,
    },
    #[error(transparent)]
    Page(#[from] super::published_page::PageError),
}

/// The error naming the records of `root` that the record check rejected, every finding.
pub(crate) fn rejected_records(root: &Path, rejected: Vec<CheckedRecord>) -> ReportError {
    ReportError::UnreadableRecords {
        root: root.to_path_buf(),
        files: rejected.len(),
        findings: rejected.into_iter().flat_map(|c| c.findings).collect(),
    }
}

/// One instance's evidence: its build entry (or what its records say) and its records,
/// sorted by message length.
#[derive(Debug, Clone)]
pub struct InstanceEvidence {
    pub(crate) candidate: String,
    pub label: String,
    pub(crate) variant: String,
    pub(crate) flags: String,
    /// The compiler flags its library was built with (build.json, else its records).
    pub(crate) build_flags: String,
    /// The compiler that built its library (build.json's `compiler`, else what its KAT log
    /// names), when known.
    pub(crate) compiler: Option<String>,
    pub(crate) kat: crate::kat::KatVerdict,
    pub(crate) digest_bits: Option<u64>,
    pub elf_load_bytes: Option<u64>,
    pub(crate) kat_log: Option<String>,
    pub(crate) kat_log_sha256: Option<String>,
    pub(crate) records: Vec<(PathBuf, TimingRecord)>,
}

impl InstanceEvidence {
    /// The record at one message length.
    pub(crate) fn at(&self, bytes: u64) -> Option<&TimingRecord> {
        self.records
            .iter()
            .map(|(_, r)| r)
            .find(|r| r.input_bytes == bytes)
    }
}

/// The files of one dataset, read once.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// The folder it was read from (KAT logs are looked up inside it).
    pub(crate) root: PathBuf,
    pub(crate) campaign: Map<String, Value>,
    pub(crate) build: Map<String, Value>,
    pub(crate) records: Vec<(PathBuf, TimingRecord)>,
}

impl Dataset {
    /// Reads `campaign.json`, `build.json` (optional) and every record under `records/`.
    /// A record the record check rejects (a link, truncated, not a record, figures that do
    /// not follow from its trials, a name unfit for a file) is an error naming every such
    /// file and finding: pages silently missing a row, or showing a false one, would
    /// misreport the run.
    pub fn open(root: &Path) -> Result<Self, ReportError> {
        let (dataset, rejected) = Self::read(root)?;
        if !rejected.is_empty() {
            return Err(rejected_records(root, rejected));
        }
        Ok(dataset)
    }

    /// Like [`Dataset::open`], but the records the check rejects are handed back beside the
    /// dataset (which holds only the valid ones), for a caller that names them itself.
    pub fn read(root: &Path) -> Result<(Self, Vec<CheckedRecord>), ReportError> {
        let campaign_path = root.join("campaign.json");
        let bytes = match read_inside(root, Path::new("campaign.json"), JSON_LIMIT) {
            Ok(b) => b,
            Err(PathError::Missing { .. }) => {
                return Err(ReportError::NotADataset {
                    path: root.to_path_buf(),
                });
            }
            Err(e) => return Err(e.into()),
        };
        let campaign = parse_object(&campaign_path, &bytes)?;
        let build_path = root.join("build.json");
        let build = match read_inside(root, Path::new("build.json"), JSON_LIMIT) {
            Ok(bytes) => parse_object(&build_path, &bytes)?
                .get("instances")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            Err(PathError::Missing { .. }) => Map::new(),
            Err(e) => return Err(e.into()),
        };
        if let Some(id) = campaign.get("system_id").and_then(Value::as_str) {
            SafeName::new("system_id", id).map_err(|e| ReportError::Malformed {
                path: campaign_path.clone(),
                detail: e.to_string(),
            })?;
        }
        let (valid, rejected): (Vec<_>, Vec<_>) = check_records(root)
            .into_iter()
            .partition(|c| c.valid().is_some());
        let records = valid
            .into_iter()
            .filter_map(|c| Some((c.path.clone(), c.into_valid()?)))
            .collect();
        Ok((
            Self {
                root: root.to_path_buf(),
                campaign,
                build,
                records,
            },
            rejected,
        ))
    }

    /// Every record, with its path relative to the dataset.
    pub fn into_records(self) -> Vec<(PathBuf, TimingRecord)> {
        self.records
    }

    /// `system_id` of the campaign (a cyclescope run names its host there).
    pub(crate) fn system_id(&self) -> Option<&str> {
        self.campaign.get("system_id").and_then(Value::as_str)
    }

    /// True for a harness dataset (no cyclescope request in campaign.json).
    pub(crate) fn is_harness(&self) -> bool {
        !self.campaign.contains_key("cyclescope")
    }

    /// The host as the pages describe it: the campaign's environment at its end (the state
    /// the timing ran in), else at its start, else the first record's.
    pub fn environment(&self) -> Map<String, Value> {
        ["environment_at_end", "environment_at_start"]
            .iter()
            .filter_map(|k| self.campaign.get(*k).and_then(Value::as_object))
            .find(|env| !env.is_empty())
            .cloned()
            .or_else(|| self.records.first().map(|(_, r)| r.environment.clone()))
            .unwrap_or_default()
    }

    /// The CPU the pages name: the lowest shard CPU of a harness campaign, cyclescope's
    /// measurement CPU, else the first record's.
    pub(crate) fn measuring_cpu(&self) -> Option<u64> {
        let shard_min = self
            .campaign
            .get("shard_cpus")
            .and_then(Value::as_object)
            .and_then(|m| m.values().filter_map(Value::as_u64).min());
        shard_min
            .or_else(|| {
                self.campaign
                    .get("cyclescope")
                    .and_then(|c| c.get("cpu"))
                    .and_then(Value::as_u64)
            })
            .or_else(|| {
                self.records
                    .first()
                    .and_then(|(_, r)| r.environment.get("cpu_number"))
                    .and_then(Value::as_u64)
            })
    }

    /// The catalog's algorithm name of a candidate in a cyclescope run.
    pub(crate) fn catalog_algorithm(&self, candidate: &str) -> Option<String> {
        self.campaign
            .get("cyclescope")
            .and_then(|c| c.get("instances"))
            .and_then(Value::as_array)?
            .iter()
            .filter(|i| i.get("candidate").and_then(Value::as_str) == Some(candidate))
            .find_map(|i| i.get("algorithm").and_then(Value::as_str))
            .map(str::to_string)
    }

    /// Evidence per (candidate, label), for instances with records; labels in natural order.
    pub fn instances(&self) -> BTreeMap<String, Vec<InstanceEvidence>> {
        let mut by_key: BTreeMap<(String, String), Vec<(PathBuf, TimingRecord)>> = BTreeMap::new();
        for (path, r) in &self.records {
            by_key
                .entry((r.candidate.clone(), r.label.clone()))
                .or_default()
                .push((path.clone(), r.clone()));
        }
        let mut out: BTreeMap<String, Vec<InstanceEvidence>> = BTreeMap::new();
        for ((candidate, label), mut records) in by_key {
            records.sort_by_key(|(_, r)| r.input_bytes);
            let build = self
                .build
                .get(&format!("{candidate}/{label}"))
                .and_then(Value::as_object);
            let first = &records[0].1;
            let text = |k: &str, fallback: &str| {
                build
                    .and_then(|b| b.get(k))
                    .and_then(Value::as_str)
                    .unwrap_or(fallback)
                    .to_string()
            };
            let kat_log = build
                .and_then(|b| b.get("kat_log"))
                .and_then(Value::as_str)
                .map(str::to_string)
                .or_else(|| first.kat_log.clone());
            let kat_log_sha256 = build
                .and_then(|b| b.get("kat_log_sha256"))
                .and_then(Value::as_str)
                .map(str::to_string)
                .or_else(|| first.kat_log_sha256.clone());
            // The published pages name the profile alone; a cyclescope run names its compiler.
            let compiler = build
                .filter(|_| !self.is_harness())
                .and_then(|b| b.get("compiler"))
                .and_then(Value::as_str)
                .filter(|c| !c.trim().is_empty())
                .map(str::to_string)
                .or_else(|| {
                    (!self.is_harness())
                        .then(|| super::readback::compiler_in_log(&self.root, kat_log.as_deref()))
                        .flatten()
                });
            out.entry(candidate.clone())
                .or_default()
                .push(InstanceEvidence {
                    compiler,
                    variant: text("variant", &first.variant),
                    flags: text("flags", &first.flags),
                    build_flags: text("build_flags", &first.build_flags),
                    kat: build
                        .and_then(|b| b.get("kat"))
                        .and_then(|v| serde_json::from_value(v.clone()).ok())
                        .unwrap_or_else(|| first.kat.clone()),
                    digest_bits: first
                        .sizes
                        .get("digest_bytes")
                        .and_then(Value::as_u64)
                        .map(|b| b * 8),
                    elf_load_bytes: build
                        .and_then(|b| b.get("elf_load_bytes"))
                        .and_then(Value::as_u64)
                        .or_else(|| first.cyclescope.as_ref().and_then(|a| a.elf_load_bytes)),
                    kat_log,
                    kat_log_sha256,
                    candidate: candidate.clone(),
                    label,
                    records,
                });
        }
        for list in out.values_mut() {
            list.sort_by(|a, b| natural_cmp(&a.label, &b.label));
        }
        out
    }
}

fn parse_object(path: &Path, bytes: &[u8]) -> Result<Map<String, Value>, ReportError> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(ReportError::Malformed {
            path: path.to_path_buf(),
            detail: "not a JSON object".into(),
        }),
        Err(e) => Err(ReportError::Malformed {
            path: path.to_path_buf(),
            detail: e.to_string(),
        }),
    }
}

/// Natural order: digit runs compare as numbers (`uHash-512` < `uHash-768` < `uHash-1024`).
pub(crate) fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn parts(s: &str) -> Vec<(String, u128)> {
        let mut out = Vec::new();
        let mut rest = s;
        while !rest.is_empty() {
            let split = rest
                .find(|c: char| c.is_ascii_digit())
                .unwrap_or(rest.len());
            let (text, tail) = rest.split_at(split);
            let end = tail
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(tail.len());
            let (digits, tail) = tail.split_at(end);
            out.push((text.to_lowercase(), digits.parse().unwrap_or(0)));
            rest = tail;
        }
        out
    }
    parts(a).cmp(&parts(b)).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::natural_cmp;

    #[test]
    fn natural_order_compares_numbers_as_numbers() {
        let mut v = vec![
            "uHash-1024",
            "uHash-512",
            "uHash-768",
            "Garnet_512_Cap1024",
            "Garnet_512_Cap640",
        ];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            v,
            [
                "Garnet_512_Cap640",
                "Garnet_512_Cap1024",
                "uHash-512",
                "uHash-768",
                "uHash-1024"
            ]
        );
    }
}
