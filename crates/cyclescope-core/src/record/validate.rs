//! `cyclescope validate`: the harness's `validate.py` rules (spec §5.5) applied to a run
//! directory or a published dataset — recompute every statistic from the raw trials (exact
//! counts, `rel_tol = 1e-9`), cross-check records against `build.json` and the KAT logs, and
//! refuse absolute home/tmp paths. Reads only; never repairs anything.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::read::{
    EntryKind, JOURNAL_LIMIT, JSON_LIMIT, LOG_LIMIT, list_dir, read_inside, reason_of, record_files,
};
use super::safe_path::PathError;
use crate::measure::stats::{Trial, loop_stats};

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub(crate) path: PathBuf,
    pub(crate) message: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

#[derive(Debug, Default)]
pub struct Validation {
    pub records: usize,
    pub complete: usize,
    pub kat_logs: usize,
    pub files_scanned: usize,
    pub findings: Vec<Finding>,
}

impl Validation {
    pub fn ok(&self) -> bool {
        self.findings.is_empty()
    }
    fn fail(&mut self, path: &Path, message: impl Into<String>) {
        self.findings.push(Finding {
            path: path.to_path_buf(),
            message: message.into(),
        });
    }
}

/// `math.isclose(a, b, rel_tol=1e-9)`.
pub(crate) fn isclose(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// `(?<![\w.])/(home|tmp|root|Users)/` — an absolute path into a home or temp folder.
pub(crate) fn absolute_home_path(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    for dir in ["/home/", "/tmp/", "/root/", "/Users/"] {
        let mut from = 0;
        while let Some(i) = text[from..].find(dir) {
            let at = from + i;
            let prev = at.checked_sub(1).map(|p| bytes[p]);
            if !prev.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.') {
                return Some(at);
            }
            from = at + 1;
        }
    }
    None
}

/// Why a folder cannot be validated at all.
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    #[error("{path} is not a run directory or dataset (no campaign.json); nothing to validate")]
    NotARun { path: PathBuf },
    #[error("{path} is not a directory")]
    NotADirectory { path: PathBuf },
    #[error("cannot validate: {0}")]
    Unsafe(#[from] PathError),
}

/// Validates the run directory or dataset at `root`. A folder without `campaign.json` is
/// refused rather than found "valid" for want of anything to check.
pub fn validate(root: &Path) -> Result<Validation, ValidateError> {
    if !root.is_dir() {
        return Err(ValidateError::NotADirectory {
            path: root.to_path_buf(),
        });
    }
    match read_inside(root, Path::new("campaign.json"), JSON_LIMIT) {
        Ok(_) => {}
        Err(PathError::Missing { .. }) => {
            return Err(ValidateError::NotARun {
                path: root.to_path_buf(),
            });
        }
        Err(e) => return Err(e.into()),
    }
    let mut v = Validation::default();
    scan_paths(root, Path::new(""), &mut v);
    let build = match read_inside(root, Path::new("build.json"), JSON_LIMIT) {
        Ok(b) => match serde_json::from_slice::<Value>(&b) {
            Ok(b) => Some(b),
            Err(e) => {
                v.fail(Path::new("build.json"), format!("not readable JSON: {e}"));
                None
            }
        },
        Err(PathError::Missing { .. }) => None,
        Err(e) => {
            v.fail(Path::new("build.json"), reason_of(&e));
            None
        }
    };
    let (record_files, unreadable) = record_files(root);
    for u in unreadable {
        v.fail(&u.path, u.reason);
    }
    let mut checked_logs = std::collections::BTreeSet::new();
    for (rel, bytes) in record_files {
        let rec = match serde_json::from_slice::<Value>(&bytes) {
            Ok(r) => r,
            Err(e) => {
                v.fail(&rel, format!("not readable JSON: {e}"));
                continue;
            }
        };
        v.records += 1;
        check_record(&rel, &rec, &mut v);
        let cand = rec["candidate"].as_str().unwrap_or_default();
        let label = rec["label"].as_str().unwrap_or_default();
        let key = format!("{cand}/{label}");
        match build.as_ref().map(|b| &b["instances"][&key]) {
            None => v.fail(&rel, "no build.json next to the records"),
            Some(Value::Null) => v.fail(&rel, format!("{key} is not in build.json")),
            Some(entry) => {
                for field in ["library", "kat_log"] {
                    if entry[field] != rec[field] {
                        v.fail(
                            &rel,
                            format!(
                                "{field} differs from build.json ({} vs {})",
                                rec[field], entry[field]
                            ),
                        );
                    }
                }
                if checked_logs.insert(key.clone()) {
                    check_kat_log(root, &key, entry, &mut v);
                }
            }
        }
    }
    Ok(v)
}

fn check_record(rel: &Path, r: &Value, v: &mut Validation) {
    if r["environment"].as_object().is_none_or(|e| e.is_empty()) {
        v.fail(rel, "environment missing");
    }
    let status = serde_json::from_value::<crate::vocabulary::RecordStatus>(r["status"].clone());
    if !status.is_ok_and(|s| s.is_complete()) {
        return;
    }
    v.complete += 1;
    let trials: Vec<Trial> = match serde_json::from_value(r["trials"].clone()) {
        Ok(t) => t,
        Err(e) => return v.fail(rel, format!("trials unreadable: {e}")),
    };
    let planned = r["plan"]["trials"].as_u64().unwrap_or(0);
    if trials.len() as u64 != planned {
        v.fail(rel, format!("{} trials, plan says {planned}", trials.len()));
    }
    let n: u64 = trials.iter().map(|t| t.measurements).sum();
    if r["measurements"].as_u64() != Some(n) {
        v.fail(
            rel,
            format!("measurements {} != Σ trials {n}", r["measurements"]),
        );
    }
    if r["guide_100_measurements_met"].as_bool() != Some(n >= 100) {
        v.fail(rel, "guide_100_measurements_met disagrees with the count");
    }
    let bytes = r["input_bytes"].as_u64().unwrap_or(0);
    let Some(s) = loop_stats(&trials, bytes) else {
        return v.fail(rel, "complete record without measurements");
    };
    let expect = [
        ("mean_seconds", Some(s.mean_seconds)),
        ("median_trial_seconds", Some(s.median_trial_seconds)),
        ("mean_cycles", s.mean_cycles),
        ("operations_per_second", Some(s.operations_per_second)),
        ("throughput_MB_per_second", Some(s.throughput_mb_per_second)),
    ];
    for (field, want) in expect {
        match (r[field].as_f64(), want) {
            (Some(got), Some(want)) if isclose(got, want) => {}
            (None, None) if r[field].is_null() => {}
            (got, want) => v.fail(rel, format!("{field} = {got:?}, recomputed {want:?}")),
        }
    }
}

fn check_kat_log(root: &Path, key: &str, entry: &Value, v: &mut Validation) {
    let Some(log) = entry["kat_log"].as_str() else {
        return v.fail(Path::new("build.json"), format!("{key} has no kat_log"));
    };
    let text = match read_inside(root, Path::new(log), LOG_LIMIT) {
        Ok(t) => t,
        Err(PathError::Missing { .. }) => {
            return v.fail(Path::new(log), format!("KAT log of {key} is missing"));
        }
        Err(e) => {
            return v.fail(
                Path::new(log),
                format!("KAT log of {key}: {}", reason_of(&e)),
            );
        }
    };
    v.kat_logs += 1;
    use sha2::Digest;
    let digest = hex::encode(sha2::Sha256::digest(&text));
    if entry["kat_log_sha256"].as_str() != Some(digest.as_str()) {
        v.fail(
            Path::new(log),
            "SHA-256 differs from build.json kat_log_sha256",
        );
    }
    let text = String::from_utf8_lossy(&text);
    let last = text
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("RESULT "))
        .and_then(|rest| rest.split_whitespace().nth(2));
    if last != entry["kat"].as_str() {
        v.fail(
            Path::new(log),
            format!("last RESULT is {last:?}, build.json says {}", entry["kat"]),
        );
    }
}

/// The absolute-path rule over every text file of the run (generated KAT text excluded: it is
/// hex, and large). Links are named, not followed; files are read with the size limits.
fn scan_paths(root: &Path, rel: &Path, v: &mut Validation) {
    let Ok(entries) = list_dir(root, rel) else {
        return;
    };
    for (name, kind) in entries {
        let rel = rel.join(&name);
        match kind {
            EntryKind::Dir if name.as_os_str() == "katgen" => {}
            EntryKind::Dir => scan_paths(root, &rel, v),
            EntryKind::Link => v.fail(&rel, reason_of(&PathError::Symlink { path: rel.clone() })),
            EntryKind::Other => scan_file(root, &rel, v),
        }
    }
}

fn scan_file(root: &Path, rel: &Path, v: &mut Validation) {
    let ext = rel.extension().and_then(|x| x.to_str()).unwrap_or("");
    let limit = match ext {
        "json" | "log" | "md" => JSON_LIMIT,
        "jsonl" => JOURNAL_LIMIT,
        _ => return,
    };
    let bytes = match read_inside(root, rel, limit) {
        Ok(b) => b,
        Err(e) => return v.fail(rel, reason_of(&e)),
    };
    let text = String::from_utf8_lossy(&bytes);
    v.files_scanned += 1;
    if let Some(at) = absolute_home_path(&text) {
        let end = (at + 40).min(text.len());
        let snippet = text.get(at..end).unwrap_or("").lines().next().unwrap_or("");
        v.fail(rel, format!("absolute path {snippet:?}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_path_rule_matches_the_harness_regex() {
        assert!(absolute_home_path("x /home/u/lib.so").is_some());
        assert!(absolute_home_path("\"/tmp/a\"").is_some());
        assert!(absolute_home_path("performance/home/x").is_none());
        assert!(absolute_home_path("a./tmp/x").is_none());
        assert!(absolute_home_path("runs/tmp/x").is_none());
    }

    #[test]
    fn isclose_is_relative() {
        assert!(isclose(6.6309994799999995e-06, 6.63099948e-06));
        assert!(!isclose(1.0, 1.000001));
    }
}
