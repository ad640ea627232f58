//! The A/A property of `compare`: two runs of the same library give no faster/slower verdict,
//! also when the machine is loaded. The second run measures while a real busy loop runs on
//! the measurement CPU: its figures come out slower, disturbed or both; such a row is doubtful,
//! or judged on the uninterrupted calls, each run taken to stray with the host by at least
//! `HOST_RUN_STRAY` (two CI runs read sm3hash-256 at 64 B 1.46× and 0.75× apart here, each
//! with a tight interval, when a run's offset was taken to be its trials' spread).
//! (How a host slower for a whole run was called "slower" before is shown deterministically
//! with published records in `compare_cli.rs`; here noise decides how the old rule would read.)

mod common;

use common::measurement_cpu;

use std::path::Path;

use serde_json::Value;

fn run(out: &Path) {
    let o = common::cyclescope()
        .args([
            "run",
            "pseudoXOF-512",
            "sm3hash-256",
            "--no-reference-jobs",
            "--lengths",
            "64,1024",
            "--trials",
            "5",
            "--trial-target",
            "0.02",
            "--allow-unfixed-host",
            "--cpu",
            &measurement_cpu().to_string(),
        ])
        .arg("--out")
        .arg(out)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::output_text(&o));
}

#[test]
fn two_runs_of_one_library_read_no_difference_even_with_a_busy_loop_on_the_cpu() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    run(&a);
    // The load: a busy loop pinned to the measurement CPU for the whole second run.
    let mut hog = common::busy_loop_on(measurement_cpu());
    run(&b);
    let _ = hog.kill();
    let _ = hog.wait();
    let o = common::cyclescope()
        .arg("compare")
        .args([&a, &b])
        .arg("--json")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::output_text(&o));
    let rows: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(rows.len(), 4, "{rows:?}");
    for r in &rows {
        let v = r["verdict"].as_str().unwrap();
        assert!(
            v == "within_noise" || v == "doubtful",
            "an A/A row was given a verdict: {r}"
        );
    }
}
