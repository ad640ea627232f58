//! A library that forges the conformance checks' outcomes on the worker protocol, end to end
//! through the real binary: `tests/fixtures/conform/forge_alignment.c` is wrong off a 16-byte
//! boundary and, at its first unaligned call (inside `alignment`), writes `pass` for that
//! check and every one after it, then `done`. The engine judges every outcome from the digests
//! behind it (`conform::verdict`), so `kat` must not say PASS, `run` must not measure it, and
//! a second `run` must not reuse a cached pass.

mod common;

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use common::conform::harness_tree;

const NAME: &str = "forge_alignment";

/// cyclescope in `dir`, its tuning journal (and so its KAT cache) under `dir/data`.
fn run_in(dir: &Path, args: &[&str]) -> Output {
    common::cyclescope()
        .args(args)
        .current_dir(dir)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .output()
        .expect("running cyclescope")
}

#[test]
fn a_forged_alignment_pass_is_tampered_and_never_measured_or_cached() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let tree = harness_tree(dir, NAME);
    let scan = tree.to_str().unwrap();

    let o = run_in(dir, &["kat", "--json", "--out", "k1", "--scan", scan]);
    let text = common::output_text(&o);
    let objects: Vec<Value> = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("kat --json printed no JSON list ({e}):\n{text}"));
    let [obj] = objects.as_slice() else {
        panic!("one instance expected:\n{text}");
    };
    let status = obj["status"].as_str().unwrap_or_default();
    let detail = obj["detail"].as_str().unwrap_or_default();
    // The files pass: the forgery is the only thing between this library and PASS.
    assert!(
        status == "TAMPERED" || (status == "NONCONFORM" && detail.starts_with("alignment: ")),
        "a forged pass must not stand: {status} {detail}\n{text}"
    );
    assert_ne!(o.status.code(), Some(0), "{text}");

    let run = |out: &str| -> String {
        let o = run_in(dir, &common::quick_scan_run(scan, out));
        let text = common::output_text(&o);
        assert_ne!(o.status.code(), Some(0), "{text}");
        assert!(
            !text.contains(&format!("done {NAME} @")),
            "the forger was not timed:\n{text}"
        );
        assert!(
            text.contains(&format!("{NAME} not measured: KAT ")),
            "run says why it held the forger back:\n{text}"
        );
        text
    };
    run("r1");
    let second = run("r2");
    assert!(
        !second.contains(&format!("KAT {NAME}: PASS cached")),
        "no pass was cached for the forger:\n{second}"
    );
}
