//! `--src DIR` on the instance-taking commands, through the real binary, the real compiler
//! and real worker processes: `list`, `kat` and `run` build the submission into the build
//! cache first and work on the result as on any harness tree (`report` reads the run); and
//! the fixture tree builds and passes its KAT with clang as well as gcc.

mod common;

use common::build::*;
use common::output_text;

#[test]
fn list_kat_run_and_report_work_from_sources() {
    let work = tempfile::tempdir().unwrap();
    let src = submissions().join("fixhash");
    let src = src.to_str().unwrap();
    let o = cyclescope(work.path(), &["list", "--src", src, "--id", "hash-99"]);
    let text = output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    for label in ["FIXH-256", "FIXH-512", "FIXH-256-opt", "FIXH-512-opt"] {
        assert!(
            stdout(&o)
                .lines()
                .any(|l| l.starts_with(&format!("hash-99    {label} ")) && l.contains(" yes ")),
            "{label}: {text}"
        );
    }
    // The build went into the cache folder the environment names.
    assert!(work.path().join("cache/cyclescope/build/trees").is_dir());

    let o = cyclescope(
        work.path(),
        &["kat", "--src", src, "--id", "hash-99", "--out", "K"],
    );
    let text = output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert_eq!(stdout(&o).matches(" PASS\n").count(), 4, "{text}");

    let o = cyclescope(
        work.path(),
        &[
            "run",
            "FIXH-256-opt",
            "--src",
            src,
            "--id",
            "hash-99",
            "--profile",
            "harness-default",
            "--lengths",
            "32",
            "--trials",
            "2",
            "--trial-target",
            "0.01",
            "--allow-unfixed-host",
            "--out",
            "R",
        ],
    );
    let text = output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    let record: serde_json::Value = serde_json::from_slice(
        &std::fs::read(
            work.path()
                .join("R/records/hash-99/FIXH-256-opt__hash_32.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(record["kat"], "PASS", "{record}");
    assert_eq!(record["variant"], "optimized");
    assert_eq!(record["flags"], "harness-default");
    assert!(
        record["build_flags"]
            .as_str()
            .unwrap()
            .starts_with("-O2 -fPIC -std=gnu11"),
        "{record}"
    );
    let o = cyclescope(work.path(), &["report", "R", "--out", "P"]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
}

#[test]
fn clang_builds_the_fixture_tree_too() {
    let work = tempfile::tempdir().unwrap();
    let src = submissions().join("fixhash");
    let o = cyclescope(
        work.path(),
        &[
            "build",
            src.to_str().unwrap(),
            "--id",
            "hash-99",
            "--cc",
            "clang",
            "--out",
            "T",
        ],
    );
    let text = output_text(&o);
    assert_eq!(
        o.status.code(),
        Some(0),
        "this test needs clang on PATH (.ci/run installs it): {text}"
    );
    // One verdict line per instance, the verdict ending it (no trailing space).
    let passed = stdout(&o)
        .lines()
        .filter(|l| l.starts_with("KAT ") && l.ends_with(" PASS"))
        .count();
    assert_eq!(passed, 4, "{text}");
    let json = build_json(&work.path().join("T"));
    let compiler = json["instances"]["hash-99/FIXH-256"]["compiler"]
        .as_str()
        .unwrap();
    assert!(compiler.starts_with("clang "), "{compiler}");
    let o = cyclescope(work.path(), &["list", "--scan", "T", "--json"]);
    assert!(
        stdout(&o).contains("\"compiler\": \"clang "),
        "{}",
        output_text(&o)
    );
}
