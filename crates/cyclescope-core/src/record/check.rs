//! The one check of a record that every tool reading records applies: `validate` prints its
//! findings, `report` and `merge` refuse a record that has any (naming file and finding),
//! `compare` gives its job no verdict. So a record one tool rejects, every tool rejects, in the
//! same words. The rules are the record's own: readable JSON, the harness's rules (spec §5.5:
//! the statistics recomputed from the raw trials), cyclescope's typed schema (its additions
//! included, so a malformed `cyclescope.failure` is found), and names fit to be file names.
//! What needs the rest of the dataset (build.json, KAT logs, absolute paths) stays in
//! `validate`. Reads only; never repairs a record.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::read::record_files;
use super::schema::{Additions, TimingRecord};
use crate::measure::stats::{Trial, loop_stats};
use crate::name::SafeName;
use crate::vocabulary::RecordStatus;

/// One broken rule, naming the file (relative to the run directory) it was found in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub(crate) path: PathBuf,
    pub(crate) message: String,
}

impl Finding {
    pub(crate) fn new(path: &Path, message: impl Into<String>) -> Self {
        Self {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }

    /// The file, relative to the run directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The rule it breaks.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

/// A record file as the check saw it: what could be read of it, and what is wrong with it.
#[derive(Debug, Clone)]
pub struct CheckedRecord {
    /// Relative to the run directory.
    pub path: PathBuf,
    /// The file as JSON, when it is JSON.
    pub(crate) value: Option<Value>,
    /// The file as a timing record, when it is one (valid or not).
    pub(crate) record: Option<TimingRecord>,
    /// True when its status says `complete` (the harness rules on figures apply then).
    pub(crate) complete: bool,
    /// Every rule it breaks; empty for a valid record.
    pub findings: Vec<Finding>,
}

impl CheckedRecord {
    fn nothing_yet(path: &Path) -> Self {
        Self {
            path: path.to_path_buf(),
            value: None,
            record: None,
            complete: false,
            findings: Vec::new(),
        }
    }

    /// A file under `records/` that could not even be read (a link, too large, not a file).
    pub(crate) fn unreadable(path: &Path, reason: impl Into<String>) -> Self {
        let mut c = Self::nothing_yet(path);
        c.findings.push(Finding::new(path, reason));
        c
    }

    /// The record, when it breaks no rule.
    pub fn valid(&self) -> Option<&TimingRecord> {
        self.record.as_ref().filter(|_| self.findings.is_empty())
    }

    /// The record, when it breaks no rule.
    pub fn into_valid(self) -> Option<TimingRecord> {
        self.record.filter(|_| self.findings.is_empty())
    }

    /// The job the file says it measured (label, message bytes), read from its JSON so that
    /// even a record the schema refuses can be named by its job.
    pub fn job(&self) -> Option<(String, u64)> {
        let v = self.value.as_ref()?;
        Some((v["label"].as_str()?.to_string(), v["input_bytes"].as_u64()?))
    }
}

/// Every file under `records/` of the run directory or dataset at `root`, checked, sorted by
/// path; the files that cannot be read are there too, with the reason as their finding.
pub fn check_records(root: &Path) -> Vec<CheckedRecord> {
    let (files, unreadable) = record_files(root);
    let mut out: Vec<CheckedRecord> = files
        .iter()
        .map(|(rel, bytes)| check_record(rel, bytes))
        .collect();
    out.extend(
        unreadable
            .into_iter()
            .map(|u| CheckedRecord::unreadable(&u.path, u.reason)),
    );
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// The record check: the findings of the record file `rel` whose bytes are `bytes`.
pub(crate) fn check_record(rel: &Path, bytes: &[u8]) -> CheckedRecord {
    let mut checked = CheckedRecord::nothing_yet(rel);
    let value = match serde_json::from_slice::<Value>(bytes) {
        Ok(v) => v,
        Err(e) => {
            checked
                .findings
                .push(Finding::new(rel, format!("not readable JSON: {e}")));
            return checked;
        }
    };
    let mut fail = |message: String| checked.findings.push(Finding::new(rel, message));
    let complete = harness_rules(&value, &mut fail);
    let record = match typed(value) {
        Ok((value, record)) => {
            for (what, name) in [
                ("candidate id", &record.candidate),
                ("label", &record.label),
            ] {
                if let Err(e) = SafeName::new(what, name) {
                    fail(e.to_string());
                }
            }
            checked.value = Some(value);
            Some(record)
        }
        Err((value, why)) => {
            fail(format!("not a timing record: {why}"));
            checked.value = Some(value);
            None
        }
    };
    checked.record = record;
    checked.complete = complete;
    checked
}

/// The record as the typed schema reads it, or why it does not, with the field to blame
/// named when one can be found (`cyclescope.failure: a failure reads …`). The JSON is handed
/// back either way.
fn typed(mut value: Value) -> Result<(Value, TimingRecord), (Value, String)> {
    let e = match TimingRecord::deserialize(&value) {
        Ok(r) => return Ok((value, r)),
        Err(e) => e,
    };
    let why = match blame::<TimingRecord>(&mut value) {
        Some(k) if k == "cyclescope" => match blame::<Additions>(&mut value["cyclescope"]) {
            Some(inner) => format!("cyclescope.{inner}: {e}"),
            None => format!("cyclescope: {e}"),
        },
        Some(k) => format!("{k}: {e}"),
        None => e.to_string(),
    };
    Err((value, why))
}

/// The key of the object `value` whose value `T` refuses: the one without which `T` either
/// reads the object or only misses that very key. Keys are taken out and put back, not
/// copied, so a large record costs one read per key at most.
fn blame<T: DeserializeOwned>(value: &mut Value) -> Option<String> {
    let keys: Vec<String> = value.as_object()?.keys().cloned().collect();
    for k in keys {
        let taken = value.as_object_mut()?.remove(&k)?;
        let verdict = T::deserialize(&*value);
        value.as_object_mut()?.insert(k.clone(), taken);
        match verdict {
            Ok(_) => return Some(k),
            Err(e) if e.to_string() == format!("missing field `{k}`") => return Some(k),
            Err(_) => {}
        }
    }
    None
}

/// `math.isclose(a, b, rel_tol=1e-9)`.
pub(crate) fn isclose(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// The harness's rules on one record (`validate.py`); true when its status is `complete`.
fn harness_rules(r: &Value, fail: &mut impl FnMut(String)) -> bool {
    if r["environment"].as_object().is_none_or(|e| e.is_empty()) {
        fail("environment missing".into());
    }
    let status = serde_json::from_value::<RecordStatus>(r["status"].clone());
    if !status.is_ok_and(|s| s.is_complete()) {
        return false;
    }
    let trials: Vec<Trial> = match serde_json::from_value(r["trials"].clone()) {
        Ok(t) => t,
        Err(e) => {
            fail(format!("trials unreadable: {e}"));
            return true;
        }
    };
    let planned = r["plan"]["trials"].as_u64().unwrap_or(0);
    if trials.len() as u64 != planned {
        fail(format!("{} trials, plan says {planned}", trials.len()));
    }
    let n: u64 = trials.iter().map(|t| t.measurements).sum();
    if r["measurements"].as_u64() != Some(n) {
        fail(format!(
            "measurements {} != Σ trials {n}",
            r["measurements"]
        ));
    }
    if r["guide_100_measurements_met"].as_bool() != Some(n >= 100) {
        fail("guide_100_measurements_met disagrees with the count".into());
    }
    let bytes = r["input_bytes"].as_u64().unwrap_or(0);
    let Some(s) = loop_stats(&trials, bytes) else {
        fail("complete record without measurements".into());
        return true;
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
            (got, want) => fail(format!("{field} = {got:?}, recomputed {want:?}")),
        }
    }
    true
}

#[cfg(test)]
mod tests;
