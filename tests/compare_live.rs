//! `cyclescope compare --live` end to end with the real binary on two bundled instances: KAT,
//! calibration and interleaved trials in real worker processes. Asserts the structure and that
//! each interval holds its ratio — never a timing figure (a shared VM decides those).

mod common;

use std::path::Path;

use serde_json::Value;

/// The repository: its config.toml names the bundled instances.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn live(dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "compare",
        "--live",
        "--allow-unfixed-host",
        "--trial-target",
        "0.005",
        "--timeout-cap",
        "120",
    ];
    args.extend_from_slice(extra);
    common::cyclescope_in(dir, &args)
}

#[test]
fn two_bundled_instances_get_a_ratio_inside_its_interval_and_a_record_each() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("ab");
    let o = live(
        root(),
        &[
            "sm3hash-256",
            "pseudoXOF-512",
            "--pairs",
            "3",
            "--lengths",
            "64,1024",
            "--json",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let text = common::output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    let v: Value = serde_json::from_slice(&o.stdout).expect(&text);
    assert_eq!(
        (v["a"]["label"].as_str(), v["b"]["label"].as_str()),
        (Some("sm3hash-256"), Some("pseudoXOF-512"))
    );
    // The figures say what measured them.
    assert!(
        v["measured_by"]
            .as_str()
            .unwrap_or("")
            .starts_with("cycles: "),
        "{text}"
    );
    let rows = v["lengths"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{text}");
    for (row, len) in rows.iter().zip([64, 1024]) {
        assert_eq!(row["input_bytes"], len);
        let r = &row["ratio"];
        assert_eq!(r["pairs"], 3, "{text}");
        let (lo, mid, hi) = (
            r["ci95_low"].as_f64().unwrap(),
            r["ratio"].as_f64().unwrap(),
            r["ci95_high"].as_f64().unwrap(),
        );
        assert!(0.0 < lo && lo <= mid && mid <= hi, "{text}");
        assert!(
            row["verdict"].is_string() && row["problem"].is_null(),
            "{text}"
        );
        assert!(row["a_mean_cycles"].as_f64().unwrap() > 0.0);
    }
    // Each side's interleaved trials are its ordinary record: three single-trial processes.
    for label in ["sm3hash-256", "pseudoXOF-512"] {
        for len in [64, 1024] {
            let p = out.join(format!("records/iccs/{label}__hash_{len}.json"));
            let rec: Value = serde_json::from_slice(&std::fs::read(&p).expect(&text)).unwrap();
            assert_eq!(rec["plan"]["trials"], 3);
            assert_eq!(rec["trials"].as_array().unwrap().len(), 3);
            assert_eq!(rec["processes"].as_array().unwrap().len(), 3);
        }
    }
    // The run validates by the harness's rules.
    let o = common::cyclescope_in(tmp.path(), &["validate", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", common::output_text(&o));
}

#[test]
fn the_table_names_both_sides_and_the_statistic() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("ab");
    let o = live(
        root(),
        &[
            "pseudoXOF-256",
            "pseudoXOF-512",
            "--pairs",
            "2",
            "--lengths",
            "32",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let text = common::output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("A = iccs/pseudoXOF-256") && stdout.contains("B = iccs/pseudoXOF-512"),
        "{text}"
    );
    assert!(
        stdout.contains("| 32 B |")
            && stdout.contains("geometric mean")
            && stdout.contains("\ncycles: "),
        "{text}"
    );
}

#[test]
fn bad_pairs_and_the_same_instance_twice_are_refused_before_measuring() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("ab");
    let o = live(
        root(),
        &["sm3hash-256", "sm3hash-256", "--out", out.to_str().unwrap()],
    );
    let text = common::output_text(&o);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert!(text.contains("same instance"), "{text}");
    assert!(!out.exists(), "a refused comparison leaves no folder");
    let o = live(root(), &["sm3hash-256", "pseudoXOF-512", "--pairs", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(common::output_text(&o).contains("pairs"));
    // Live options without --live are refused by the parser.
    let o = common::cyclescope_in(tmp.path(), &["compare", "a", "b", "--pairs", "3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(common::output_text(&o).contains("--live"));
}

#[test]
fn one_source_instance_under_two_flag_sets_is_compared_by_its_builds() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("ab");
    let src = root().join("tests/fixtures/submissions/fixhash");
    let o = common::cyclescope()
        .args([
            "compare",
            "--live",
            "FIXH-256",
            "FIXH-256",
            "--src",
            src.to_str().unwrap(),
            "--cflags-a",
            "-O0",
            "--cflags-b",
            "-O2",
            "--pairs",
            "2",
            "--lengths",
            "64",
            "--trial-target",
            "0.005",
            "--allow-unfixed-host",
            "--json",
            "--out",
            out.to_str().unwrap(),
        ])
        .current_dir(tmp.path())
        // The builds go to a cache of this test's own.
        .env("XDG_CACHE_HOME", tmp.path().join("cache"))
        .output()
        .unwrap();
    let text = common::output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    let v: Value = serde_json::from_slice(&o.stdout).expect(&text);
    // Same label, the candidate id names each build; both passed the submission's KAT.
    assert_eq!(v["a"]["label"], "FIXH-256");
    assert_eq!(v["b"]["label"], "FIXH-256");
    assert_eq!(v["a"]["candidate"], "fixhash+O0", "{text}");
    assert_eq!(v["b"]["candidate"], "fixhash+O2", "{text}");
    assert_eq!(text.matches("KAT FIXH-256: PASS").count(), 2, "{text}");
    let r = &v["lengths"][0]["ratio"];
    assert_eq!(r["pairs"], 2, "{text}");
    assert!(r["ci95_low"].as_f64() <= r["ratio"].as_f64(), "{text}");
    assert!(r["ratio"].as_f64() <= r["ci95_high"].as_f64(), "{text}");
    for id in ["fixhash+O0", "fixhash+O2"] {
        assert!(
            out.join(format!("records/{id}/FIXH-256__hash_64.json"))
                .is_file(),
            "{text}"
        );
    }
}

#[test]
fn an_aa_calibration_measures_one_instance_against_itself_and_reports_its_false_positives() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("aa");
    let o = live(
        root(),
        &[
            "pseudoXOF-512",
            "pseudoXOF-512",
            "--aa",
            "--pairs",
            "3",
            "--lengths",
            "32,64",
            "--json",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let text = common::output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    let v: Value = serde_json::from_slice(&o.stdout).expect(&text);
    assert_eq!(
        (v["a"]["candidate"].as_str(), v["b"]["candidate"].as_str()),
        (Some("iccs+A"), Some("iccs+B"))
    );
    let aa = &v["aa_calibration"];
    assert_eq!(aa["lengths_compared"], 2, "{v}");
    let fp = aa["false_positives"].as_u64().unwrap();
    assert!(fp <= 2, "{v}");
    assert_eq!(aa["false_positive_rate"].as_f64(), Some(fp as f64 / 2.0));
    // Each side's trials are its own record.
    assert!(
        out.join("records/iccs+A/pseudoXOF-512__hash_32.json")
            .is_file()
    );
    assert!(
        out.join("records/iccs+B/pseudoXOF-512__hash_64.json")
            .is_file()
    );
    // A label pair that is not one instance is no A/A calibration.
    let o = live(root(), &["sm3hash-256", "pseudoXOF-512", "--aa"]);
    assert_eq!(o.status.code(), Some(2), "{}", common::output_text(&o));
    assert!(common::output_text(&o).contains("--aa measures one instance against itself"));
}
