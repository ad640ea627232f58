//! The outcome of one KAT job as the engine keeps it: the verdict of each generated file,
//! the job's status and log, and what can be derived from them (the RESULT line, manifest
//! entries for `--write-manifest`, the verified `KAT_2_12` vector).

use std::path::{Path, PathBuf};

use crate::kat::KatStatus;
use crate::kat::generate::{KatFile, Written};
use crate::kat::log;
use crate::kat::manifest::{CanonicalMode, ManifestEntry};

/// One generated file and its verdict.
#[derive(Debug, Clone)]
pub struct FileReport {
    pub(crate) file: KatFile,
    /// `KAT_2_12_<kat name>.txt`.
    pub(crate) name: String,
    /// Where it was generated.
    pub(crate) path: PathBuf,
    pub(crate) written: Written,
    pub(crate) status: KatStatus,
    pub(crate) detail: String,
}

/// The outcome of a KAT job.
#[derive(Debug, Clone)]
pub struct KatReport {
    /// The `RESULT` line's id and instance name.
    pub id: String,
    pub(crate) instance: String,
    pub label: String,
    pub status: KatStatus,
    pub(crate) detail: String,
    pub(crate) files: Vec<FileReport>,
    /// The conformance checks' outcomes (empty when the worker never got to them).
    pub conformance: Vec<crate::conform::CheckResult>,
    pub(crate) log_path: PathBuf,
    /// The end of the worker's stderr (the candidate's own prints, panics of the worker).
    pub stderr_tail: String,
    /// The most memory the worker held, by its control group's account (None without one).
    pub peak_memory_bytes: Option<u64>,
    /// The CPU time of all that ran in the worker's control group (None without an account).
    pub cpu_time: Option<std::time::Duration>,
}

impl KatReport {
    /// What the checker said (the first difference, the missing reference, …).
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// The KAT log this job wrote.
    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// Every vector of this job's `KAT_2_12` file (0 to 4096 bits) and its `KAT_2_23` file
    /// (three of 2^23 bits), each file's when its whole text matched its reference
    /// (`kat::known`).
    pub(crate) fn known_answers(&self) -> Vec<crate::kat::known::KnownAnswer> {
        let passed = |file: KatFile| {
            self.files
                .iter()
                .find(|f| f.file == file && f.status == KatStatus::Pass)
        };
        let mut all = passed(KatFile::Kat2_12)
            .map(|f| crate::kat::known::read_all(&f.path))
            .unwrap_or_default();
        all.extend(
            passed(KatFile::Kat2_23)
                .map(|f| crate::kat::known::read_partial(&f.path))
                .unwrap_or_default(),
        );
        all
    }

    /// `RESULT <id> <instance> <STATUS> <detail>`.
    pub fn result_line(&self) -> String {
        log::result_line(&self.id, &self.instance, self.status, &self.detail)
    }

    /// Manifest entries for the files this job generated completely (`--write-manifest`):
    /// from the trusted reference file of a `--kat-dir` when there is one (mode chosen by
    /// its content), else `strict` from the generated text.
    pub fn manifest_entries(&self, kat_dir: Option<&Path>) -> Vec<ManifestEntry> {
        self.files
            .iter()
            .map(|f| {
                let reference = kat_dir.and_then(|d| {
                    let path = crate::kat::manifest::find_reference(d, &self.label, &f.name)?;
                    let text = std::fs::read(&path).ok()?;
                    let name = format!("{}/{}", self.label, f.name);
                    Some(crate::kat::manifest::entry_for_reference(&text, name))
                });
                reference.unwrap_or_else(|| ManifestEntry {
                    sha256: f.written.sha256(CanonicalMode::Strict),
                    mode: CanonicalMode::Strict,
                    count: None,
                    name: format!("{}/{}", self.label, f.name),
                })
            })
            .collect()
    }
}
