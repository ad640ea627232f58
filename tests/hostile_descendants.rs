//! A candidate's descendants cannot hang the tool (issue 10, item 1): libraries that fork in
//! their constructor or in `CryptHash` and leave the child holding the worker's pipes, that
//! close every descriptor and hang, or that never finish loading, through the real binary's
//! `list --lib`, `hash`, `kat` and `run`. Each command must end within a generous bound (the
//! harness's own watchdog, not a timing target), say what happened, and leave no process
//! carrying the test's marker.

mod common;
use common::hostile as support;

use std::time::Duration;

use support::*;

/// Far beyond what each command needs, far below "forever".
const BOUND: Duration = Duration::from_secs(20);

#[test]
fn list_answers_for_a_library_that_forks_in_its_constructor() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = build_fixture("fork_in_constructor", tmp.path());
    let m = marker("fork-ctor-list");
    let _sweep = Sweep(m.clone());
    let cmd = command(
        &[
            "list",
            "--lib",
            path_str(&lib),
            "--digest-bits",
            "256",
            "--json",
        ],
        &m,
        &[],
    );
    let (o, _) = run_bounded(cmd, BOUND);
    assert!(o.status.success(), "{}", text(&o));
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(rows[0]["loads"], true, "{}", text(&o));
    assert_none_left(&m);
}

/// A child that calls `setsid` would leave the worker's process group and outlive the group
/// kill; the worker's seccomp filter stops it there.
#[test]
fn a_descendant_cannot_leave_the_workers_process_group() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = build_fixture("fork_setsid", tmp.path());
    let m = marker("fork-setsid-list");
    let _sweep = Sweep(m.clone());
    let cmd = command(
        &["list", "--lib", path_str(&lib), "--digest-bits", "256"],
        &m,
        &[],
    );
    let (o, _) = run_bounded(cmd, BOUND);
    assert!(o.status.success(), "{}", text(&o));
    // The group is gone once `list` answers; an escaped child would still be here.
    std::thread::sleep(Duration::from_millis(300));
    assert_none_left(&m);
}

#[test]
fn a_constructor_that_hangs_is_reported_within_seconds() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = build_fixture("hang_in_constructor", tmp.path());
    let m = marker("hang-ctor-list");
    let _sweep = Sweep(m.clone());
    let cmd = command(
        &["list", "--lib", path_str(&lib), "--digest-bits", "256"],
        &m,
        &[],
    );
    let (o, _) = run_bounded(cmd, BOUND);
    assert!(!o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("did not answer within 5 s"), "{}", text(&o));
    assert_none_left(&m);
}

#[test]
fn hash_answers_for_a_library_that_forks_in_crypthash() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = build_fixture("fork_in_crypthash", tmp.path());
    let m = marker("fork-call-hash");
    let _sweep = Sweep(m.clone());
    let cmd = command(
        &[
            "hash",
            "--lib",
            path_str(&lib),
            "--digest-bits",
            "32",
            "--hex",
            "616263",
        ],
        &m,
        &[],
    );
    let (o, _) = run_bounded(cmd, BOUND);
    assert!(o.status.success(), "{}", text(&o));
    // The fixture's "digest" is the message, zero-padded.
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "61626300");
    assert_none_left(&m);
}

fn kat_args<'a>(lib: &'a str, out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "kat",
        "--lib",
        lib,
        "--label",
        "hostile-256",
        "--digest-bits",
        "256",
        "--out",
        out,
    ];
    args.extend(extra);
    args
}

#[test]
fn kat_finishes_for_libraries_that_fork() {
    for fixture in ["fork_in_crypthash", "fork_in_constructor"] {
        let tmp = tempfile::tempdir().unwrap();
        let lib = build_fixture(fixture, tmp.path());
        let out = tmp.path().join("out");
        let m = marker(fixture);
        let _sweep = Sweep(m.clone());
        let cmd = command(&kat_args(path_str(&lib), path_str(&out), &[]), &m, &[]);
        let (o, _) = run_bounded(cmd, BOUND);
        // No reference for this fixture: the job ends NOKAT (exit 2), having written its files.
        assert_eq!(o.status.code(), Some(2), "{fixture}: {}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains(" NOKAT "),
            "{}",
            text(&o)
        );
        assert_none_left(&m);
    }
}

#[test]
fn kat_of_a_library_that_closes_its_descriptors_and_hangs_times_out() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = build_fixture("close_fds_then_hang", tmp.path());
    let out = tmp.path().join("out");
    let m = marker("close-hang-kat");
    let _sweep = Sweep(m.clone());
    let cmd = command(
        &kat_args(path_str(&lib), path_str(&out), &["--timeout", "3"]),
        &m,
        &[],
    );
    let (o, _) = run_bounded(cmd, BOUND);
    assert_eq!(o.status.code(), Some(6), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains(" TIMEOUT timeout after 3 s in KAT_2_12_"),
        "{}",
        text(&o)
    );
    assert_none_left(&m);
}

/// The forking library's run ends with a record: a figure, or — as the fresh-message probe's
/// clock charges the probe process the copy-on-write faults its fork leaves behind (every page
/// written after the fork is copied) — a PROBEFAIL naming that cost. Never a hang.
#[test]
fn run_measures_a_library_that_forks_and_fails_one_that_closes_and_hangs() {
    let tmp = tempfile::tempdir().unwrap();
    for (fixture, complete) in [("fork_in_crypthash", true), ("close_fds_then_hang", false)] {
        let lib = build_fixture(fixture, tmp.path());
        let run = tmp.path().join(format!("run-{fixture}"));
        let m = marker(fixture);
        let _sweep = Sweep(m.clone());
        let cmd = command(
            &labelled_run(
                path_str(&lib),
                "hostile-256",
                path_str(&run),
                &["--kat-timeout", "3", "--timeout-cap", "3"],
            ),
            &m,
            &[],
        );
        let (o, _) = run_bounded(cmd, Duration::from_secs(40));
        // The run also measures pseudoXOF-256 as its × pseudoXOF reference (records/iccs/).
        let records: Vec<_> = walk(&run.join("records"))
            .into_iter()
            .filter(|p| !p.starts_with(run.join("records/iccs")))
            .collect();
        assert_eq!(records.len(), 1, "{fixture}: {}", text(&o));
        let r: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&records[0]).unwrap()).unwrap();
        let failure = r["cyclescope"]["failure"].as_str().unwrap_or_default();
        if complete && !failure.starts_with("PROBEFAIL") {
            assert!(o.status.success(), "{fixture}: {}", text(&o));
            assert_eq!(r["status"], "complete", "{fixture}: {r}");
        } else if complete {
            assert!(
                failure.contains("ns of CPU time by the kernel's clock"),
                "{r}"
            );
        } else {
            assert!(!o.status.success(), "{fixture}: {}", text(&o));
            assert!(failure.starts_with("TIMEOUT"), "{fixture}: {r}");
        }
        assert_none_left(&m);
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
    out
}
