//! A plan out of proportion is refused before the run is opened (issue 20, item 3): 100 000
//! lengths in a config, a message past 1 MiB on `--lengths`, a sweep of thousands of points.
//! Each refusal says how long the plan would take at least and how to run it anyway, leaves
//! no run directory content (no journal, no campaign.json), and comes at once; with
//! `--allow-large-plan` the long message is measured. The last test measures: run this file
//! under `flock /tmp/cyclescope-measure.lock`.

mod common;
use common::hostile as support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use support::*;

/// Far beyond what a refusal needs.
const BOUND: Duration = Duration::from_secs(60);

/// Reads its whole message, so its 2 MiB figure is plausible (a library that skips it is refused).
fn candidate(dir: &Path) -> PathBuf {
    let source = common::cc::candidate_source(
        "hash-20",
        "plain256",
        256,
        common::cc::READ_WHOLE_MESSAGE,
        "",
    );
    common::cc::build_library(dir, "plain256", &source)
}

/// The run directory holds nothing the run would have written.
fn assert_not_opened(run: &Path) {
    for name in ["journal.jsonl", "campaign.json", "records"] {
        assert!(!run.join(name).exists(), "{} was written", name);
    }
}

fn assert_refused(o: &std::process::Output, want: &str) {
    assert!(!o.status.success(), "{}", text(o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("the plan is out of proportion: "),
        "{}",
        text(o)
    );
    assert!(stderr.contains(want), "{}", text(o));
    assert!(stderr.contains("it would take at least "), "{}", text(o));
    assert!(stderr.contains("--allow-large-plan"), "{}", text(o));
}

#[test]
fn a_config_with_100000_lengths_is_refused_before_the_run_opens() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = candidate(tmp.path());
    let lengths: Vec<String> = (1..=100_000).map(|l: u64| l.to_string()).collect();
    let cfg = tmp.path().join("many.toml");
    std::fs::write(
        &cfg,
        format!(
            "[settings]\nlengths = [{}]\n\n[[candidate]]\nid = \"hash-20\"\nalgorithm = \"Plain\"\n\
             [[candidate.instance]]\nlabel = \"plain-256\"\nlibrary = {lib:?}\ndigest_bits = 256\n",
            lengths.join(", ")
        ),
    )
    .unwrap();
    let run = tmp.path().join("run");
    let m = marker("many-lengths");
    let _sweep = Sweep(m.clone());
    let args = [
        "run",
        "plain-256",
        "--config",
        path_str(&cfg),
        "--out",
        path_str(&run),
        "--allow-unfixed-host",
        "--no-reference-jobs",
    ];
    let (o, _) = run_bounded(command(&args, &m, &[]), BOUND);
    // 100 000 jobs × the guide's 5 trials × 1 s.
    assert_refused(
        &o,
        "100000 jobs (1 instance(s) × 100000 length(s)), more than 1000",
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("at least 138 h 53 min"),
        "{}",
        text(&o)
    );
    assert_not_opened(&run);
    assert_none_left(&m);
}

#[test]
fn a_sweep_of_thousands_of_points_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = candidate(tmp.path());
    let run = tmp.path().join("sweep");
    let m = marker("sweep-points");
    let _sweep = Sweep(m.clone());
    let args = [
        "sweep",
        "--lib",
        path_str(&lib),
        "--digest-bits",
        "256",
        "--step",
        "1",
        "--max-bytes",
        "4096",
        "--no-guide-lengths",
        "--out",
        path_str(&run),
    ];
    let (o, _) = run_bounded(command(&args, &m, &[]), BOUND);
    assert_refused(
        &o,
        "4096 jobs (1 instance(s) × 4096 length(s)), more than 1000",
    );
    assert_not_opened(&run);
}

/// Measures.
#[test]
fn a_message_past_a_mebibyte_needs_the_flag_and_is_measured_with_it() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = candidate(tmp.path());
    let m = marker("long-message");
    let _sweep = Sweep(m.clone());
    let two_mib = (2u64 << 20).to_string();
    let run = |dir: &Path, extra: &[&str]| {
        let mut args = vec![
            "run",
            "--lib",
            path_str(&lib),
            "--label",
            "plain-256",
            "--digest-bits",
            "256",
            "--lengths",
            &two_mib,
            "--trials",
            "1",
            "--trial-target",
            "0.001",
            "--out",
            path_str(dir),
            "--allow-unfixed-host",
            "--allow-kat-fail",
            "--no-reference-jobs",
        ];
        args.extend(extra);
        run_bounded(command(&args, &m, &[]), Duration::from_secs(180)).0
    };
    let refused = tmp.path().join("refused");
    let o = run(&refused, &[]);
    assert_refused(&o, "a 2048 KiB message, longer than 1024 KiB");
    assert_not_opened(&refused);

    let allowed = tmp.path().join("allowed");
    let o = run(&allowed, &["--allow-large-plan"]);
    let record = allowed.join("records/hash-20/plain-256__hash_2097152.json");
    let r: serde_json::Value = serde_json::from_slice(
        &std::fs::read(&record).unwrap_or_else(|e| panic!("{e}: {}", text(&o))),
    )
    .unwrap();
    assert_eq!(r["status"], "complete", "{}", text(&o));
    assert_none_left(&m);
}
