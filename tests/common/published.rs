//! Run folders for the `compare` tests (`compare_cli.rs`, `compare_published.rs`), built from the
//! published arm_1 records: a record read as published, changed on purpose (scaled, or as a
//! cyclescope run counting with another counter would have written it) and written into a
//! run folder; and `cyclescope compare` itself.

use std::path::Path;

use serde_json::{Value, json};

use cyclescope_core::record::pyjson::to_py_json;

/// The published hash-05 record `name`.
pub fn published(name: &str) -> Value {
    published_of("hash-05", name)
}

/// The published record `name` of `candidate`.
pub fn published_of(candidate: &str, name: &str) -> Value {
    let path = super::arm_1().join("records").join(candidate).join(name);
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

/// Writes `record` as hash-05's `name` into run folder `run`.
pub fn write(run: &Path, name: &str, record: &Value) {
    write_of(run, "hash-05", name, record)
}

/// Writes `record` as `candidate`'s `name` into run folder `run`, with the dataset's
/// campaign.json beside it the first time.
pub fn write_of(run: &Path, candidate: &str, name: &str, record: &Value) {
    let dir = run.join("records").join(candidate);
    std::fs::create_dir_all(&dir).unwrap();
    // A run directory is known by its campaign.json: the published dataset's serves both.
    let campaign = run.join("campaign.json");
    if !campaign.exists() {
        std::fs::copy(super::arm_1().join("campaign.json"), &campaign).unwrap();
    }
    std::fs::write(dir.join(name), to_py_json(record).unwrap()).unwrap();
}

/// The record with every cycle figure multiplied by `factor` (trials, mean, median).
pub fn scaled(mut r: Value, factor: f64) -> Value {
    for t in r["trials"].as_array_mut().unwrap() {
        t["cycles"] = json!((t["cycles"].as_f64().unwrap() * factor).round() as u64);
    }
    for k in ["mean_cycles", "median_trial_cycles"] {
        r[k] = json!(r[k].as_f64().unwrap() * factor);
    }
    r
}

/// The record as a cyclescope run counting with `source` would have written it.
pub fn counted_by(mut r: Value, source: &str) -> Value {
    r["cyclescope"] = json!({
        "version": "0.1.0", "mode": "guide", "cycle_source": source,
        "reference_cycles": true, "per_call_source": source, "timer_overhead_ticks": 40.0,
        "per_call": null, "per_call_by_process": [], "trial_spread": null,
        "preempted_ns_by_trial": [], "histogram_v2_base64": null, "elf_load_bytes": null,
        "measurement_cpu": 1, "worker": "cyclescope-worker", "tui_attached": false,
        "host_problems": [], "failure": null
    });
    r
}

/// `cyclescope compare` with `args`, to its end.
pub fn compare(args: &[&std::ffi::OsStr]) -> std::process::Output {
    super::cyclescope()
        .arg("compare")
        .args(args)
        .output()
        .unwrap()
}
