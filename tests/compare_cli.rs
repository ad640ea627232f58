//! `cyclescope compare` end to end on two run directories written from the published hash-05
//! records: A holds them as published, B the same jobs with figures changed on purpose — one
//! job twice as fast, one twice as slow, one untouched, one counted by another counter — so
//! each verdict is produced by data built to deserve it, not by a run compared with itself.

mod common;

use std::path::Path;

use serde_json::{Value, json};

use cyclescope_core::record::pyjson::to_py_json;

fn published(name: &str) -> Value {
    let path = common::arm_1().join("records/hash-05").join(name);
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

fn write(run: &Path, name: &str, record: &Value) {
    let dir = run.join("records/hash-05");
    std::fs::create_dir_all(&dir).unwrap();
    // A run directory is known by its campaign.json: the published dataset's serves both.
    let campaign = run.join("campaign.json");
    if !campaign.exists() {
        std::fs::copy(common::arm_1().join("campaign.json"), &campaign).unwrap();
    }
    std::fs::write(dir.join(name), to_py_json(record).unwrap()).unwrap();
}

/// The record with every cycle figure multiplied by `factor` (trials, mean, median).
fn scaled(mut r: Value, factor: f64) -> Value {
    for t in r["trials"].as_array_mut().unwrap() {
        t["cycles"] = json!((t["cycles"].as_f64().unwrap() * factor).round() as u64);
    }
    for k in ["mean_cycles", "median_trial_cycles"] {
        r[k] = json!(r[k].as_f64().unwrap() * factor);
    }
    r
}

/// The record as a cyclescope run counting with `source` would have written it.
fn counted_by(mut r: Value, source: &str) -> Value {
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

#[test]
fn compare_names_faster_slower_noise_and_not_comparable() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let jobs = [
        ("uHash-512__hash_1024.json", 0.5, None),
        ("uHash-512__hash_32.json", 2.0, None),
        ("uHash-768__hash_1024.json", 1.0, None),
        ("uHash-1024__hash_1024.json", 1.0, Some("tsc")),
    ];
    for (name, factor, source) in jobs {
        let r = published(name);
        write(&a, name, &r);
        let changed = scaled(r, factor);
        let changed = match source {
            Some(s) => counted_by(changed, s),
            None => changed,
        };
        write(&b, name, &changed);
    }
    // A job only B has.
    write(
        &b,
        "uHash-768__hash_32.json",
        &published("uHash-768__hash_32.json"),
    );

    let o = std::process::Command::new(env!("CARGO_BIN_EXE_cyclescope"))
        .arg("compare")
        .args([&a, &b])
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("| `")).collect();
    // In label, then length order; A keeps the published means.
    assert_eq!(
        rows,
        [
            "| `uHash-1024` | 1024 B | 4.07 M | 4.07 M | 1.00× | not comparable: different cycle counters |",
            "| `uHash-512` | 32 B | 61.6 k | 123.1 k | 2.00× | slower (beyond both 95 % CIs) |",
            "| `uHash-512` | 1024 B | 671.7 k | 335.8 k | 0.50× | faster (beyond both 95 % CIs) |",
            "| `uHash-768` | 32 B | – | 92.5 k | (ratio –) | only in B |",
            "| `uHash-768` | 1024 B | 1.55 M | 1.55 M | 1.00× | within noise |",
        ],
        "{out}"
    );
}

#[test]
fn compare_refuses_a_folder_without_records() {
    let tmp = tempfile::tempdir().unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_cyclescope"))
        .arg("compare")
        .arg(common::arm_1())
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("is not a run directory or harness dataset (no campaign.json)"),
        "{err}"
    );
}
