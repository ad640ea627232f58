//! No orphans (issue 10, item 2): SIGINT or SIGTERM to `run` while a worker measures or runs a
//! KAT, and to `kat`, stop the workers at once, write the cancelled state, and leave a run that
//! `--resume` finishes. The candidate is the real fault-injection library hanging on purpose
//! (`FAULTY_MODE=hang@N`); every process the test starts carries a marker, and none may remain.

mod common;
use common::hostile as support;

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use support::*;

/// How long a signalled command may take to wind down (generous: a bound, not a target).
const WIND_DOWN: Duration = Duration::from_secs(20);
/// How long the workers may take to appear on a busy machine.
const START: Duration = Duration::from_secs(120);

/// Starts `cyclescope <args>` with its output in files (nothing blocks on a full pipe).
fn start(args: &[&str], marker: &str, env: &[(&str, &str)], logs: &Path) -> Child {
    let mut c = command(args, marker, env);
    c.stdout(Stdio::from(
        std::fs::File::create(logs.join("stdout")).unwrap(),
    ))
    .stderr(Stdio::from(
        std::fs::File::create(logs.join("stderr")).unwrap(),
    ));
    c.spawn().expect("cyclescope starts")
}

fn logs(dir: &Path) -> String {
    let read = |n: &str| std::fs::read_to_string(dir.join(n)).unwrap_or_default();
    format!(
        "--- stdout\n{}\n--- stderr\n{}",
        read("stdout"),
        read("stderr")
    )
}

fn signal(child: &Child, sig: Signal) {
    kill(Pid::from_raw(child.id() as i32), sig).expect("signalling cyclescope");
}

fn state(run: &Path) -> String {
    let c: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("campaign.json")).unwrap()).unwrap();
    c["cyclescope"]["state"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn assert_cancelled(run: &Path, logs_dir: &Path) {
    assert_eq!(state(run), "cancelled", "{}", logs(logs_dir));
    let journal = std::fs::read_to_string(run.join("journal.jsonl")).unwrap();
    let last = journal.lines().last().unwrap_or_default();
    assert!(last.contains("\"cancelled\":true"), "{journal}");
}

fn run_args<'a>(cfg: &'a str, run: &'a str, lengths: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        "faulty-256",
        "--config",
        cfg,
        "--lengths",
        lengths,
        "--out",
        run,
        "--allow-unfixed-host",
    ]
}

fn resume(run: &Path, marker: &str) {
    let cmd = command(&["run", "--resume", path_str(run)], marker, &[]);
    let (o, _) = run_bounded(cmd, Duration::from_secs(180));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(state(run), "finished");
}

#[test]
fn sigint_while_measuring_stops_the_worker_and_resume_finishes() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = fault_config(tmp.path());
    let run = tmp.path().join("run");
    let m = marker("sigint-measure");
    let _sweep = Sweep(m.clone());
    // 1000 B: a length neither the KAT nor its conformance sample hashes (the gate passes).
    let args = run_args(path_str(&cfg), path_str(&run), "32,1000");
    let mut child = start(&args, &m, &[("FAULTY_MODE", "hang@1000")], tmp.path());
    // The first process to hang at 1000 B: the job's reference digest or its trial worker.
    wait_for_process(&m, "comm=faulty-hang", START);
    signal(&child, Signal::SIGINT);
    let status = wait_bounded(&mut child, WIND_DOWN);
    assert!(!status.success(), "{}", logs(tmp.path()));
    assert_cancelled(&run, tmp.path());
    assert!(
        logs(tmp.path()).contains("--resume"),
        "{}",
        logs(tmp.path())
    );
    assert_none_left(&m);
    resume(&run, &m);
    for len in [32, 1000] {
        let p = run.join(format!("records/fixture/faulty-256__hash_{len}.json"));
        let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        assert_eq!(r["status"], "complete", "{r}");
    }
    assert_none_left(&m);
}

#[test]
fn sigterm_during_the_kat_gate_stops_the_kat_worker_and_resume_finishes() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = fault_config(tmp.path());
    let run = tmp.path().join("run");
    let m = marker("sigterm-kat-gate");
    let _sweep = Sweep(m.clone());
    let args = run_args(path_str(&cfg), path_str(&run), "32");
    let mut child = start(&args, &m, &[("FAULTY_MODE", "hang@1")], tmp.path());
    wait_for_process(&m, "comm=faulty-hang", START);
    signal(&child, Signal::SIGTERM);
    let status = wait_bounded(&mut child, WIND_DOWN);
    assert!(!status.success(), "{}", logs(tmp.path()));
    assert_cancelled(&run, tmp.path());
    assert_none_left(&m);
    resume(&run, &m);
    assert_none_left(&m);
}

#[test]
fn sigint_to_kat_stops_its_worker() {
    let tmp = tempfile::tempdir().unwrap();
    let faulty = cyclescope_core::catalog::bundled_library("faulty");
    let out = tmp.path().join("out");
    let m = marker("sigint-kat");
    let _sweep = Sweep(m.clone());
    let args = [
        "kat",
        "--lib",
        path_str(&faulty),
        "--label",
        "faulty-256",
        "--digest-bits",
        "256",
        "--out",
        path_str(&out),
    ];
    let mut child = start(&args, &m, &[("FAULTY_MODE", "hang@1")], tmp.path());
    wait_for_process(&m, "comm=faulty-hang", START);
    signal(&child, Signal::SIGINT);
    let status = wait_bounded(&mut child, WIND_DOWN);
    assert_eq!(status.code(), Some(130), "{}", logs(tmp.path()));
    assert!(
        logs(tmp.path()).contains("cancelled"),
        "{}",
        logs(tmp.path())
    );
    assert_none_left(&m);
}
