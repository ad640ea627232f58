//! Verdicts that survive load: every run here measures while a real busy loop runs on the
//! measurement CPU, so every guide mean is disturbed (doubled, or marked ⚠). `compare` then
//! judges on the uninterrupted-call means: two builds 4.9× apart in their work are called
//! apart at every length, both ways round, and two identical builds are never called
//! different. Only verdicts are asserted, never a figure.

mod common;

use common::measurement_cpu;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// A library whose every message byte costs `rounds` dependent mixing steps.
fn build(dir: &Path, name: &str, rounds: u32) -> PathBuf {
    let body = format!(
        "static volatile uint64_t sink; uint64_t s = 0x9e3779b97f4a7c15ull; \
         for (unsigned long long i = 0; i < msg_len_bits / 8; i++) {{ s ^= msg[i]; \
         for (int r = 0; r < {rounds}; r++) {{ s = (s << 7 | s >> 57) + 0x632be59bd9b4e019ull; \
         __asm__ volatile(\"\" : \"+r\"(s)); }} }} sink = s;"
    );
    let source = common::cc::candidate_source("MIX", "MIX-256", 256, &body, "");
    common::cc::build_library_with(dir, name, &source, &["-O2"])
}

fn run(lib: &Path, out: &Path) {
    let o = common::cyclescope()
        .args(["run", "--lib"])
        .arg(lib)
        .args([
            "--no-baselines",
            "--no-reference-jobs",
            "--lengths",
            "64,1024",
            "--trials",
            "5",
            "--trial-target",
            "0.02",
            "--allow-unfixed-host",
            "--allow-kat-fail",
            "--cpu",
            &measurement_cpu().to_string(),
        ])
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::output_text(&o));
}

fn verdicts(a: &Path, b: &Path) -> Vec<(String, String)> {
    let o = common::cyclescope()
        .arg("compare")
        .args([a, b])
        .arg("--json")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::output_text(&o));
    let rows: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
    rows.iter()
        .map(|r| {
            (
                r["verdict"].as_str().unwrap_or_default().to_string(),
                r.to_string(),
            )
        })
        .collect()
}

#[test]
fn under_a_busy_loop_a_large_difference_is_called_and_identical_builds_are_not() {
    let tmp = tempfile::tempdir().unwrap();
    let lib_a = build(tmp.path(), "MIXA-256", 10);
    let lib_same = build(tmp.path(), "MIXS-256", 10);
    let lib_b = build(tmp.path(), "MIXB-256", 49);
    let mut hog = common::busy_loop_on(measurement_cpu());
    let runs: Vec<PathBuf> = ["a", "same", "b"]
        .iter()
        .map(|n| tmp.path().join(n))
        .collect();
    for (lib, out) in [&lib_a, &lib_same, &lib_b].into_iter().zip(&runs) {
        run(lib, out);
    }
    let _ = hog.kill();
    let _ = hog.wait();
    let slower = verdicts(&runs[0], &runs[2]);
    let faster = verdicts(&runs[2], &runs[0]);
    assert_eq!(slower.len(), 2, "{slower:?}");
    let called = slower
        .iter()
        .map(|v| (v, "slower"))
        .chain(faster.iter().map(|v| (v, "faster")));
    for ((verdict, row), want) in called {
        assert_eq!(verdict, want, "{row}");
    }
    for (v, row) in verdicts(&runs[0], &runs[1]) {
        assert!(
            v == "within_noise" || v == "doubtful",
            "two identical builds were called different: {row}"
        );
    }
}
