//! `cyclescope validate`: the harness's `validate.py` rules (spec §5.5) applied to a run
//! directory or a published dataset — every record through the one record check (`check`:
//! statistics recomputed from the raw trials, exact counts, `rel_tol = 1e-9`, the typed
//! schema), then the dataset's rules: records cross-checked against `build.json` and the KAT
//! logs, absolute home/tmp paths refused, and (beyond the harness) files in the generated KAT
//! text that the generator does not write named (`katgen`). Reads only; never repairs anything.

mod katgen;

use std::path::{Path, PathBuf};

use serde_json::Value;

pub use super::check::Finding;
use super::check::check_records;
use super::read::{
    EntryKind, JOURNAL_LIMIT, JSON_LIMIT, LOG_LIMIT, list_dir, read_inside, reason_of,
};
use super::safe_path::PathError;

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
        self.findings.push(Finding::new(path, message));
    }
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
    katgen::check(root, &mut v);
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
    let mut checked_logs = std::collections::BTreeSet::new();
    for checked in check_records(root) {
        v.findings.extend(checked.findings);
        // What is JSON counts as a record; the build.json rules read it as JSON, as the
        // harness does, whether the schema accepts it or not.
        let Some(rec) = checked.value else {
            continue;
        };
        let rel = checked.path;
        v.records += 1;
        v.complete += usize::from(checked.complete);
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
                // The bytes measured are the bytes the KAT passed: a record whose library
                // hash is not build.json's measured another library.
                if !entry["library_sha256"].is_null()
                    && entry["library_sha256"] != rec["library_sha256"]
                {
                    v.fail(
                        &rel,
                        format!(
                            "library_sha256 {} differs from build.json's {}: the record \
                             measured other bytes than the KAT checked",
                            rec["library_sha256"], entry["library_sha256"]
                        ),
                    );
                }
                if checked_logs.insert(key.clone()) {
                    check_kat_log(root, &key, entry, &mut v);
                }
            }
        }
    }
    Ok(v)
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
}
