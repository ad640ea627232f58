//! Deadlines that fit the work (issue 20, item 3): a candidate whose first call is fast and
//! every later call slow is planned from that first call, so its trials run far past the plan.
//! The run must say so on stderr while the trial runs ("trial 1/2: 2 s, expected …"), kill
//! the trial at a deadline drawn from the plan (seconds, not the harness's 300 s floor), and
//! still write a record the validator accepts. Measures: run under
//! `flock /tmp/cyclescope-measure.lock`.

mod common;
use common::hostile as support;

use std::time::Duration;

use support::*;

/// Far beyond what the run needs now, far below the 300 s one trial used to be allowed.
const BOUND: Duration = Duration::from_secs(150);

#[test]
fn a_trial_slower_than_its_plan_is_shown_and_killed_at_the_plans_deadline() {
    let tmp = tempfile::tempdir().unwrap();
    // Fast on the first call of each process (the calibration's only call), 50 ms after.
    let body = "static int calls; if (calls++ > 0) usleep(50000);";
    let source =
        common::cc::candidate_source("hash-20", "slow256", 256, body, "#include <unistd.h>");
    let lib = common::cc::build_library(tmp.path(), "slow256", &source);
    let run = tmp.path().join("run");
    let m = marker("slow-after-first");
    let _sweep = Sweep(m.clone());
    // Its KAT would take minutes at 50 ms a call: cut short, and measured regardless.
    let extra = ["--kat-timeout", "2", "--no-reference-jobs"];
    let args = labelled_run(path_str(&lib), "slow-256", path_str(&run), &extra);
    let (o, _) = run_bounded(command(&args, &m, &[]), BOUND);
    assert!(!o.status.success(), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    // Shown while it ran, with the plan's expectation beside it.
    let overdue = stderr
        .lines()
        .find(|l| l.starts_with("slow-256 @ 64 B: trial 1/2: ") && l.contains(", expected "))
        .unwrap_or_else(|| panic!("no overdue line: {}", text(&o)));
    assert!(overdue.ends_with("far past its plan"), "{overdue}");

    let record = run.join("records/hash-20/slow-256__hash_64.json");
    let r: serde_json::Value = serde_json::from_slice(
        &std::fs::read(&record).unwrap_or_else(|e| panic!("{e}: {}", text(&o))),
    )
    .unwrap();
    let failure = r["cyclescope"]["failure"].as_str().unwrap_or_default();
    assert!(failure.starts_with("TIMEOUT"), "{r}");
    // The plan's deadline: ten times its estimate, at least 5 s — not 300 s and more.
    let deadline = r["plan"]["timeout_per_process_s"].as_f64().unwrap();
    assert!((5.0..60.0).contains(&deadline), "{r}");

    let (v, _) = run_bounded(
        command(&["validate", path_str(&run)], &m, &[]),
        Duration::from_secs(60),
    );
    // The library lives in a temporary folder, which the evidence names as it is: the only
    // complaint allowed. The record's fields and values pass.
    let report = String::from_utf8_lossy(&v.stdout);
    let other: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("FAIL") && !l.contains("absolute path"))
        .collect();
    assert!(other.is_empty(), "{}", text(&v));
    assert!(report.contains("1 record(s)"), "{}", text(&v));
    assert_none_left(&m);
}
