//! "× pseudoXOF" end to end: `run --json` on bundled instances carries `x_pseudoxof` from the
//! same run's pseudoXOF of the same width; a library whose baseline was not selected gets it
//! measured as a reference job, marked in the printed table, the JSON, the records and
//! campaign.json; `report --csv` carries the same ratio.

mod common;

use std::path::Path;
use std::process::Output;

const QUICK: [&str; 6] = [
    "--lengths",
    "32,1024",
    "--trial-target",
    "0.01",
    "--trials",
    "2",
];

fn cyclescope(args: &[&str]) -> Output {
    common::cyclescope()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .expect("running cyclescope")
}

fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn json_rows(o: &Output) -> Vec<serde_json::Value> {
    serde_json::from_slice(&o.stdout).expect("JSON rows")
}

fn mean(rows: &[serde_json::Value], label: &str, bytes: u64) -> f64 {
    rows.iter()
        .find(|r| r["label"] == label && r["input_bytes"] == bytes)
        .and_then(|r| r["mean_cycles"].as_f64())
        .unwrap_or_else(|| panic!("no {label} {bytes} in {rows:?}"))
}

#[test]
fn run_json_divides_each_instance_by_the_same_width_pseudoxof() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let mut args = vec!["run", "pseudohash-512", "pseudoXOF-512", "--json"];
    args.extend(QUICK);
    args.extend(["--out", run.to_str().unwrap(), "--allow-unfixed-host"]);
    let o = cyclescope(&args);
    ok(&o);
    let rows = json_rows(&o);
    assert_eq!(rows.len(), 4, "both selected: no reference job is added");
    for bytes in [32u64, 1024] {
        let row = rows
            .iter()
            .find(|r| r["label"] == "pseudohash-512" && r["input_bytes"] == bytes)
            .unwrap();
        let want = mean(&rows, "pseudohash-512", bytes) / mean(&rows, "pseudoXOF-512", bytes);
        let got = row["x_pseudoxof"].as_f64().expect("a ratio");
        assert!((got - want).abs() < 1e-9, "{got} vs {want}");
        assert_eq!(row["baseline"], "iccs");
        assert_eq!(row["reference_job"], false);
    }
}

#[test]
fn a_missing_baseline_is_measured_as_a_reference_job_and_marked_everywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let faulty = Path::new(env!("CARGO_BIN_EXE_cyclescope"))
        .parent()
        .unwrap()
        .join("deps/libfaulty.so");
    let faulty = faulty.to_str().unwrap();
    let mut args = vec![
        "run",
        "--lib",
        faulty,
        "--label",
        "X-512",
        "--digest-bits",
        "512",
    ];
    args.extend(QUICK);
    args.extend([
        "--out",
        run.to_str().unwrap(),
        "--allow-unfixed-host",
        "--allow-kat-fail",
    ]);
    let o = cyclescope(&args);
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        out.contains(
            "| instance | message | mean cycles | cycles/byte | mean time | MB/s | n | × pseudoXOF |"
        ),
        "{out}"
    );
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("| `")).collect();
    assert_eq!(rows.len(), 4, "{out}");
    // The ratio's cell by its header: the uninterrupted-call column may follow it.
    let header: Vec<&str> = out
        .lines()
        .find(|l| l.starts_with("| instance |"))
        .unwrap()
        .split(" | ")
        .collect();
    let at = header
        .iter()
        .position(|h| h.trim_end_matches(" |") == "× pseudoXOF")
        .unwrap();
    for row in &rows {
        let ratio = row.split(" | ").nth(at).unwrap().trim_end_matches(" |");
        // A ratio over a doubtful figure carries ⚠ after it.
        assert!(ratio.trim_end_matches(" ⚠").ends_with('×'), "{row}");
    }
    assert!(
        rows.iter()
            .filter(|r| r.starts_with("| `pseudoXOF-512` (reference) |"))
            .count()
            == 2,
        "{out}"
    );
    assert!(
        out.contains("from candidate `iccs`"),
        "the baseline is named: {out}"
    );
    assert!(
        err.contains("reference jobs (baseline `iccs`, for × pseudoXOF): pseudoXOF-512"),
        "{err}"
    );
    assert!(
        err.contains("done pseudoXOF-512 @ 32 B (reference job)"),
        "{err}"
    );
    // The records and the campaign say which jobs were references.
    let rec: serde_json::Value = serde_json::from_slice(
        &std::fs::read(run.join("records/iccs/pseudoXOF-512__hash_32.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(rec["cyclescope"]["reference_job"], true);
    assert_eq!(rec["schema"], 2);
    let campaign: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("campaign.json")).unwrap()).unwrap();
    assert_eq!(campaign["cyclescope"]["reference_jobs"][0], "pseudoXOF-512");
    // The harness's validator rules still accept the run (extra fields only).
    ok(&cyclescope(&["validate", run.to_str().unwrap()]));
    // report --csv: the same ratio from the records.
    let csv_path = tmp.path().join("all.csv");
    let pages = tmp.path().join("pages");
    ok(&cyclescope(&[
        "report",
        run.to_str().unwrap(),
        "--out",
        pages.to_str().unwrap(),
        "--csv",
        csv_path.to_str().unwrap(),
    ]));
    let mut r = csv::Reader::from_path(&csv_path).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let lines: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    assert_eq!(lines.len(), 4);
    for l in &lines {
        let ratio: f64 = l[col("x_pseudoxof")]
            .parse()
            .expect("a ratio in every line");
        let reference = &l[col("instance")] == "pseudoXOF-512";
        assert_eq!(
            &l[col("reference_job")],
            if reference { "true" } else { "false" }
        );
        if reference {
            assert_eq!(ratio, 1.0);
        }
    }
}

#[test]
fn a_helper_whose_baseline_is_not_named_gets_its_reference_job_and_says_why() {
    // sm3hash-256 is one of the baseline's own helpers, yet its × pseudoXOF divides by
    // pseudoXOF-256 like any 256-bit instance's: the run adds that job, and says why.
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let mut args = vec!["run", "sm3hash-256", "--json"];
    args.extend(QUICK);
    args.extend(["--out", run.to_str().unwrap(), "--allow-unfixed-host"]);
    let o = cyclescope(&args);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "reference jobs (baseline `iccs`, for × pseudoXOF): pseudoXOF-256 (sm3hash-256 divides by it)"
        ),
        "{err}"
    );
    let rows = json_rows(&o);
    assert_eq!(
        rows.len(),
        4,
        "sm3hash-256 and its reference job at two lengths: {rows:?}"
    );
    for bytes in [32u64, 1024] {
        let row = rows
            .iter()
            .find(|r| r["label"] == "sm3hash-256" && r["input_bytes"] == bytes)
            .unwrap();
        let want = mean(&rows, "sm3hash-256", bytes) / mean(&rows, "pseudoXOF-256", bytes);
        let got = row["x_pseudoxof"].as_f64().expect("a ratio, not –");
        assert!((got - want).abs() < 1e-9, "{got} vs {want}");
        let reference = rows
            .iter()
            .find(|r| r["label"] == "pseudoXOF-256" && r["input_bytes"] == bytes)
            .unwrap();
        assert_eq!(reference["reference_job"], true);
    }
}
