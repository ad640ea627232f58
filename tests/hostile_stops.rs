//! A stopped worker is a fault at once (issue 20, item 3): a candidate that stops itself inside
//! `CryptHash` (`SIGSTOP`) or stops a process it started and waits for it would otherwise hold
//! its worker until the job's deadline (900 s for a KAT). The job-control stops (`SIGTSTP`,
//! `SIGTTIN`, `SIGTTOU`) do not stop a worker at all: it leads a session of its own, an
//! orphaned process group, for which the kernel discards them. Through the real binary's `kat`, `hash` and `run`, each command
//! must end long before that deadline, name the stop, and leave no process behind.

mod common;
use common::hostile as support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use support::*;

/// Far beyond what each command needs, far below the 900 s a stopped KAT used to wait.
const BOUND: Duration = Duration::from_secs(120);

/// A candidate whose `CryptHash` runs `body` first (the fixture's digest follows).
fn stopping_library(dir: &Path, name: &str, body: &str) -> PathBuf {
    let prelude = "#include <signal.h>\n#include <unistd.h>\n#include <sys/wait.h>";
    let source = common::cc::candidate_source("hash-20", name, 256, body, prelude);
    common::cc::build_library(dir, name, &source)
}

/// Stops itself with `signal` on its first call.
fn stops_itself(dir: &Path, signal: &str) -> PathBuf {
    let name = format!("stop{}", signal.to_lowercase());
    stopping_library(dir, &name, &format!("raise({signal});"))
}

/// Starts a child that stops itself, and waits for the child to end (it never does).
fn stops_its_child(dir: &Path) -> PathBuf {
    let body = "pid_t c = fork(); if (c == 0) { raise(SIGSTOP); _exit(0); } \
                if (c > 0) waitpid(c, 0, 0);";
    stopping_library(dir, "stopchild", body)
}

fn kat(lib: &Path, out: &Path, m: &str) -> std::process::Output {
    let args = [
        "kat",
        "--lib",
        path_str(lib),
        "--label",
        "stopper-256",
        "--digest-bits",
        "256",
        "--out",
        path_str(out),
    ];
    run_bounded(command(&args, m, &[]), BOUND).0
}

#[test]
fn kat_of_a_candidate_that_stops_itself_is_a_crash_at_once_and_job_control_stops_it_not() {
    let tmp = tempfile::tempdir().unwrap();
    for signal in ["SIGSTOP", "SIGTSTP", "SIGTTIN", "SIGTTOU"] {
        let lib = stops_itself(tmp.path(), signal);
        let m = marker(&format!("stop-kat-{signal}"));
        let _sweep = Sweep(m.clone());
        let o = kat(&lib, &tmp.path().join(signal), &m);
        if signal != "SIGSTOP" {
            // Discarded by the kernel: the KAT runs through (no reference: NOKAT, 2).
            assert_eq!(o.status.code(), Some(2), "{signal}: {}", text(&o));
            assert_none_left(&m);
            continue;
        }
        // CRASH is exit code 7: the documented code of the status, not a new one.
        assert_eq!(o.status.code(), Some(7), "{signal}: {}", text(&o));
        let want = format!(
            " CRASH the worker stopped itself ({signal}) inside the candidate in KAT_2_12_"
        );
        assert!(
            String::from_utf8_lossy(&o.stdout).contains(&want),
            "{}",
            text(&o)
        );
        assert_none_left(&m);
    }
}

#[test]
fn kat_of_a_candidate_whose_child_stops_is_a_crash_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = stops_its_child(tmp.path());
    let m = marker("stop-child-kat");
    let _sweep = Sweep(m.clone());
    let o = kat(&lib, &tmp.path().join("out"), &m);
    assert_eq!(o.status.code(), Some(7), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains(" CRASH a process the candidate started (pid ")
            && stdout.contains(") is stopped (state T) in KAT_2_12_"),
        "{}",
        text(&o)
    );
    assert_none_left(&m);
}

#[test]
fn hash_of_a_candidate_that_stops_itself_names_the_stop() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = stops_itself(tmp.path(), "SIGSTOP");
    let m = marker("stop-hash");
    let _sweep = Sweep(m.clone());
    let args = [
        "hash",
        "--lib",
        path_str(&lib),
        "--digest-bits",
        "256",
        "--hex",
        "616263",
    ];
    let (o, _) = run_bounded(command(&args, &m, &[]), BOUND);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("the worker stopped itself (SIGSTOP) inside the candidate"),
        "{}",
        text(&o)
    );
    assert_none_left(&m);
}

/// Measures: run it under `flock /tmp/cyclescope-measure.lock`.
#[test]
fn run_of_a_candidate_that_stops_itself_fails_its_job_as_a_crash() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = stops_itself(tmp.path(), "SIGSTOP");
    let run = tmp.path().join("run");
    let m = marker("stop-run");
    let _sweep = Sweep(m.clone());
    let args = labelled_run(path_str(&lib), "stopper-256", path_str(&run), &[]);
    let (o, _) = run_bounded(command(&args, &m, &[]), BOUND);
    assert!(!o.status.success(), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("KAT stopper-256: CRASH the worker stopped itself (SIGSTOP)"),
        "{}",
        text(&o)
    );
    assert!(
        stderr.contains("FAILED")
            && stderr.contains("CRASH")
            && stderr.contains("the worker stopped itself (SIGSTOP) inside the candidate"),
        "{}",
        text(&o)
    );
    assert_none_left(&m);
}
