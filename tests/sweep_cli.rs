//! `cyclescope sweep` end to end, real measurements through the real binary: the cost model
//! must find the structure of SM3 on the bundled `sm3hash-256` (64-byte blocks, 9 bytes of
//! padding: the 0x80 marker and the 64-bit length) and of a C fixture built here with a known
//! structure unlike SM3's (32-byte blocks, 5 bytes of padding, a fixed part of two blocks'
//! work). They assert structure, never timings: the lengths are few but the block steps are
//! large against the noise, and each point is the per-call 1st percentile, which a busy host
//! does not move (see `PointStatistic`).

mod common;

use std::path::Path;

use serde_json::Value;

fn sweep(dir: &Path, args: &[&str]) -> Value {
    let mut all = vec![
        "sweep",
        "--out",
        "run",
        "--allow-unfixed-host",
        "--json",
        "--no-guide-lengths",
        "--max-bytes",
        "256",
        "--max-trials",
        "4",
        "--precision",
        "0.02",
    ];
    all.extend_from_slice(args);
    let out = common::cyclescope_in(dir, &all);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "sweep failed: {stderr}");
    let printed: Value = serde_json::from_slice(&out.stdout).expect("--json prints sweep.json");
    let stored: Value =
        serde_json::from_slice(&std::fs::read(dir.join("run/sweep.json")).unwrap()).unwrap();
    assert_eq!(printed, stored, "stdout and sweep.json agree");
    printed
}

fn model(sweep: &Value) -> &Value {
    let m = &sweep["instances"][0]["model"];
    assert!(
        m.is_object(),
        "no model: {}",
        sweep["instances"][0]["unfitted"]
    );
    m
}

/// Every interval holds its estimate, and the per-block cost is positive.
fn assert_intervals(m: &Value) {
    for k in ["fixed_cycles", "cycles_per_block", "cycles_per_byte"] {
        let (v, lo, hi) = (
            m[k]["value"].as_f64().unwrap(),
            m[k]["low"].as_f64().unwrap(),
            m[k]["high"].as_f64().unwrap(),
        );
        assert!(lo <= v && v <= hi, "{k}: {v} not in [{lo}, {hi}]");
    }
    assert!(m["cycles_per_block"]["low"].as_f64().unwrap() > 0.0, "{m}");
}

#[test]
fn sm3_blocks_of_64_bytes_and_a_9_byte_threshold_are_found() {
    let t = tempfile::tempdir().unwrap();
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("config.toml");
    let s = sweep(
        t.path(),
        &["sm3hash-256", "--config", config.to_str().unwrap()],
    );
    let m = model(&s);
    assert_eq!(m["block_bytes"], 64, "{m}");
    assert_eq!(m["padding_bytes"], 9, "{m}");
    assert_eq!(
        m["padding_alternatives"],
        serde_json::json!([]),
        "refined: {m}"
    );
    assert_intervals(m);
    // The byte-by-byte lengths around the first boundary (55 → 56 bytes) were measured.
    let lengths: Vec<u64> = s["instances"][0]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["input_bytes"].as_u64().unwrap())
        .collect();
    assert!(
        lengths.contains(&55) && lengths.contains(&56),
        "{lengths:?}"
    );
    assert!(
        t.path()
            .join("run/records/iccs/sm3hash-256__hash_55.json")
            .is_file()
    );
}

#[test]
fn a_fixture_with_32_byte_blocks_and_a_5_byte_threshold_is_found() {
    let t = tempfile::tempdir().unwrap();
    let prelude = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sweep/blocks32.c"),
    )
    .unwrap();
    let source = common::cc::candidate_source(
        "blocks32",
        "blocks32-256",
        256,
        "blocks32_work(msg, msg_len_bits);",
        &prelude,
    );
    let lib = common::cc::build_library(t.path(), "blocks32", &source);
    let s = sweep(
        t.path(),
        &["--lib", lib.to_str().unwrap(), "--allow-kat-fail"],
    );
    let m = model(&s);
    assert_eq!(
        (m["block_bytes"].as_u64(), m["padding_bytes"].as_u64()),
        (Some(32), Some(5)),
        "{m}"
    );
    assert_intervals(m);
    // The fixed part runs twice a block's chain: the ratio is structure, not speed (the
    // call itself adds a little, hence the band).
    let ratio = m["fixed_cycles"]["value"].as_f64().unwrap()
        / m["cycles_per_block"]["value"].as_f64().unwrap();
    assert!(
        (1.6..2.6).contains(&ratio),
        "fixed/per-block = {ratio}: {m}"
    );
}
