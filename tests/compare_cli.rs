//! `cyclescope compare` end to end on two run directories written from the published hash-05
//! records: A holds them as published, B the same jobs with figures changed on purpose — one
//! job twice as fast, one twice as slow, one untouched, one counted by another counter — so
//! each verdict is produced by data built to deserve it, not by a run compared with itself.

mod common;

use std::path::Path;

use serde_json::{Value, json};

use common::published::{compare, counted_by, published, published_of, scaled, write, write_of};

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

    // Both folders hold the published campaign.json, so both read as published datasets:
    // `--all` shows the job only B has.
    let o = common::cyclescope()
        .arg("compare")
        .args([&a, &b])
        .arg("--all")
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("| `")).collect();
    // In label, then length order; A keeps the published means.
    assert_eq!(
        rows,
        [
            "| `uHash-1024` | 1024 B | 4.07 M | 4.07 M | 1.00× | – | not comparable: different cycle counters, and no clean baseline pseudoXOF of this width and length in both runs to compare the × pseudoXOF ratios |",
            "| `uHash-512` | 32 B | 61.6 k | 123.1 k | 2.00× | 2.00× [1.15, 3.48] | slower (beyond run-to-run noise) |",
            "| `uHash-512` | 1024 B | 671.7 k | 335.8 k | 0.50× | – | doubtful (⚠ B: 5 kept trial(s) disturbed after 3 attempts (clock 1.35 GHz below 95 % of the fixed clock): stop other work on the measurement CPU and measure again; no robust figure on both sides to judge on) |",
            "| `uHash-768` | 32 B | – | 92.5 k | (ratio –) | – | only in B |",
            "| `uHash-768` | 1024 B | 1.55 M | 1.55 M | 1.00× | 1.00× [0.57, 1.74] | within noise |",
        ],
        "{out}"
    );
}

#[test]
fn compare_refuses_a_folder_without_records() {
    let tmp = tempfile::tempdir().unwrap();
    let o = common::cyclescope()
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

/// A and B holding one published job, B's figures scaled by `factor`.
fn pair(dir: &Path, name: &str, factor: f64) -> (std::path::PathBuf, std::path::PathBuf) {
    let (a, b) = (dir.join("a"), dir.join("b"));
    let r = published(name);
    write(&a, name, &r);
    write(&b, name, &scaled(r, factor));
    (a, b)
}

#[test]
fn fail_above_exits_1_only_for_a_slowdown_beyond_both_intervals_and_the_margin() {
    let name = "uHash-512__hash_1024.json";
    // (B / A, margin, exit code): between two runs without baselines each run may stray with
    // the host by 20 % (half-width ×1.74), so 2.5× is about 44 % beyond the noise: it trips
    // 2 % but not 50 %; 10 % slower is within the noise; faster never trips.
    for (factor, margin, code) in [
        (2.5, "2%", 1),
        (2.5, "50%", 0),
        (1.10, "0%", 0),
        (0.5, "0%", 0),
        (1.0, "0.02", 0),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = pair(tmp.path(), name, factor);
        let o = compare(&[
            a.as_os_str(),
            b.as_os_str(),
            "--fail-above".as_ref(),
            margin.as_ref(),
        ]);
        assert_eq!(o.status.code(), Some(code), "{factor} {margin}: {o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            err.contains("REGRESSION uHash-512 @ 1024 B"),
            code == 1,
            "{err}"
        );
    }
    // A bad margin is refused with the form it takes.
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = pair(tmp.path(), name, 1.0);
    let o = compare(&[
        a.as_os_str(),
        b.as_os_str(),
        "--fail-above".as_ref(),
        "lots".as_ref(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("such as 2% or 0.02"));
}

/// The record as if it had run its first trial only, its statistics as the harness computes
/// them from that trial (so the record check accepts it).
fn one_trial(mut r: Value) -> Value {
    let t = r["trials"][0].clone();
    let (n, secs, cycles) = (
        t["measurements"].as_u64().unwrap(),
        t["seconds"].as_f64().unwrap(),
        t["cycles"].as_u64().unwrap(),
    );
    let nf = n as f64;
    let bytes = r["input_bytes"].as_f64().unwrap();
    r["trials"] = json!([t]);
    r["plan"]["trials"] = json!(1);
    r["measurements"] = json!(n);
    r["guide_100_measurements_met"] = json!(n >= 100);
    for k in [
        "mean_seconds",
        "median_trial_seconds",
        "min_trial_seconds",
        "max_trial_seconds",
    ] {
        r[k] = json!(secs / nf);
    }
    for k in ["mean_cycles", "median_trial_cycles"] {
        r[k] = json!(cycles as f64 / nf);
    }
    r["operations_per_second"] = json!(nf / secs);
    r["throughput_MB_per_second"] = json!(bytes * nf / secs / 1e6);
    r
}

#[test]
fn a_job_without_an_interval_is_not_comparable_and_does_not_trip_the_gate() {
    let tmp = tempfile::tempdir().unwrap();
    let name = "uHash-512__hash_32.json";
    let (a, b) = pair(tmp.path(), name, 0.5);
    // B has one trial: no confidence interval, so twice as fast is still no verdict.
    write(&b, name, &one_trial(scaled(published(name), 3.0)));
    let o = compare(&[
        a.as_os_str(),
        b.as_os_str(),
        "--json".as_ref(),
        "--fail-above".as_ref(),
        "0%".as_ref(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let rows: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(rows[0]["verdict"], "not_comparable");
    assert_eq!(
        rows[0]["why"],
        "no confidence interval (fewer than 2 trials)"
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("1 job(s) not comparable"));
}

#[test]
fn csv_and_markdown_hold_the_same_jobs() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = pair(tmp.path(), "uHash-512__hash_1024.json", 2.0);
    let o = compare(&[a.as_os_str(), b.as_os_str(), "--csv".as_ref()]);
    assert!(o.status.success(), "{o:?}");
    let mut r = csv::Reader::from_reader(o.stdout.as_slice());
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (&rows[0][0], &rows[0][1], &rows[0][11]),
        ("uHash-512", "1024", "slower")
    );
    let ratio: f64 = rows[0][6].parse().unwrap();
    assert!((ratio - 2.0).abs() < 1e-6, "{ratio}");
    let o = compare(&[a.as_os_str(), b.as_os_str(), "--markdown".as_ref()]);
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(
        md.contains(
            "| `uHash-512` | 1024 B | 671.7 k | 1.34 M | 2.00× | 2.00× [1.15, 3.48] | slower"
        ),
        "{md}"
    );
    // One format at a time.
    let o = compare(&[
        a.as_os_str(),
        b.as_os_str(),
        "--csv".as_ref(),
        "--json".as_ref(),
    ]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_host_slower_for_a_whole_run_is_no_difference_and_a_real_change_still_shows() {
    // B: the published jobs as a host twice as slow throughout would have measured them — the
    // candidate and the bundled helpers alike — except uHash-512 at 1 KiB, twice as slow again.
    // (Factors of two keep the scaled figures exact, as the record check recomputes them.)
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let jobs = [
        ("hash-05", "uHash-512__hash_32.json", 2.0),
        ("hash-05", "uHash-512__hash_1024.json", 4.0),
        ("iccs", "pseudoXOF-512__hash_32.json", 2.0),
        ("iccs", "pseudoXOF-512__hash_1024.json", 2.0),
        ("iccs", "pseudoXOF-256__hash_32.json", 2.0),
        ("iccs", "pseudoXOF-256__hash_1024.json", 2.0),
    ];
    for (candidate, name, factor) in jobs {
        let r = published_of(candidate, name);
        write_of(&a, candidate, name, &r);
        write_of(&b, candidate, name, &scaled(r, factor));
    }
    let o = compare(&[a.as_os_str(), b.as_os_str(), "--json".as_ref()]);
    assert!(o.status.success(), "{}", common::output_text(&o));
    let rows: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
    let verdict = |label: &str, bytes: u64| {
        let r = rows
            .iter()
            .find(|r| r["instance"] == label && r["message_bytes"] == bytes)
            .unwrap();
        (
            r["verdict"].as_str().unwrap().to_string(),
            r["judged"]["on"].clone(),
        )
    };
    for (label, bytes) in [
        ("uHash-512", 32),
        ("pseudoXOF-512", 32),
        ("pseudoXOF-512", 1024),
        ("pseudoXOF-256", 32),
        ("pseudoXOF-256", 1024),
    ] {
        assert_eq!(
            verdict(label, bytes),
            (
                "within_noise".to_string(),
                Value::from("ratio_to_pseudoxof")
            ),
            "{label} @ {bytes}: {rows:?}"
        );
    }
    assert_eq!(verdict("uHash-512", 1024).0, "slower", "{rows:?}");
}
