//! The suite's own rule for measuring: no two tests measure on one CPU at once. Every
//! cyclescope a test starts shares one CPU-lock folder and queues for a busy CPU
//! (`common::suite_locks`); this file proves the queue with two real runs, and holds every test
//! file to starting cyclescope (directly or through tmux) only through `tests/common`.

mod common;

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

fn start_run(out: &Path, target: &str) -> Child {
    common::cyclescope()
        .args([
            "run",
            "pseudohash-512",
            "--no-reference-jobs",
            "--lengths",
            "1024",
            "--trials",
            "2",
            "--trial-target",
            target,
            "--allow-unfixed-host",
            "--cpu",
            "0",
            "--out",
            out.to_str().unwrap(),
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting cyclescope")
}

/// Polls `what` every 20 ms until it holds, failing after `limit`.
fn wait_for(limit: Duration, why: &str, mut what: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !what() {
        assert!(Instant::now() < deadline, "{why}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_second_run_on_a_busy_cpu_waits_for_the_first_and_then_measures() {
    let tmp = tempfile::tempdir().unwrap();
    let (a_dir, b_dir) = (tmp.path().join("a"), tmp.path().join("b"));
    let mut a = start_run(&a_dir, "1");
    let a_pid = a.id();
    let lock = common::suite_lock_dir().join(".cpu0.lock");
    let holder = format!("pid {a_pid}\n");
    // A may itself queue behind another test binary's run (a second CI clone).
    wait_for(
        Duration::from_secs(1800),
        "the first run never took CPU 0",
        || std::fs::read_to_string(&lock).is_ok_and(|t| t.starts_with(&holder)),
    );
    let b = start_run(&b_dir, "0.01");
    // A run creates its folder only once it holds its CPUs: B's folder appears after A ended.
    wait_for(
        Duration::from_secs(1800),
        "the second run never started",
        || b_dir.join("campaign.json").exists(),
    );
    let a_ended = a.try_wait().unwrap();
    let a_out = a.wait_with_output().unwrap();
    let b_out = b.wait_with_output().unwrap();
    assert!(
        a_ended.is_some(),
        "B measured while A held CPU 0\n{}",
        common::output_text(&b_out)
    );
    assert!(a_out.status.success(), "{}", common::output_text(&a_out));
    assert!(b_out.status.success(), "{}", common::output_text(&b_out));
    let told = String::from_utf8_lossy(&b_out.stderr);
    // Whom it waits for when the wait starts, and that it ended when it did: the free line
    // comes after the waiting line (B may first queue behind another test's run as well).
    let waiting = format!("waiting for CPU 0 — held by PID {a_pid} (");
    let at = told.find(&waiting);
    assert!(
        at.is_some() && told.contains("· up to 1800 s (CYCLESCOPE_LOCK_WAIT)"),
        "B says whom it waits for: {told}"
    );
    let after = &told[at.unwrap_or(0)..];
    assert!(
        after.contains("CPU 0 free after ") && after.contains("run finished"),
        "B says when CPU 0 came free: {told}"
    );
}

#[test]
fn a_bad_wait_is_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let o = common::cyclescope()
        .env(cyclescope_core::cpu::lock::LOCK_WAIT_ENV, "soon")
        .args([
            "run",
            "sm3hash-256",
            "--no-reference-jobs",
            "--lengths",
            "32",
            "--allow-unfixed-host",
        ])
        .arg("--out")
        .arg(tmp.path().join("run"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{}", common::output_text(&o));
    assert!(
        err.contains(
            "CYCLESCOPE_LOCK_WAIT must be a whole number of seconds from 0 to 86400, not `soon`"
        ),
        "{err}"
    );
    assert!(
        !tmp.path().join("run/campaign.json").exists(),
        "no run was opened"
    );
}

/// Lines that start cyclescope, or a tmux server whose programs inherit its environment, without
/// the suite's locks. `tmux -V` starts nothing and is allowed.
fn unlocked_starts(text: &str) -> Vec<String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            let l = l.trim();
            let starts_cyclescope = l.contains("Command::new(")
                && ["CARGO_BIN_EXE", "(EXE)", "(bin)", "(bin())", "exe())"]
                    .iter()
                    .any(|p| l.contains(p));
            let starts_tmux = l.contains("Command::new(\"tmux\")")
                && !l.contains("suite_locks(")
                && !l.contains(".arg(\"-V\")");
            starts_cyclescope || starts_tmux
        })
        .map(|(i, l)| format!("{}: {}", i + 1, l.trim()))
        .collect()
}

#[test]
fn every_test_starts_cyclescope_under_the_suite_locks() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files = vec![];
    for dir in [root.clone(), root.join("common")] {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "rs") {
                files.push(e.path());
            }
        }
    }
    assert!(files.len() > 40, "found the test files: {files:?}");
    let mut found = vec![];
    for f in &files {
        if f.ends_with("common/mod.rs") || f.ends_with("suite_locks.rs") {
            continue;
        }
        for l in unlocked_starts(&std::fs::read_to_string(f).unwrap()) {
            found.push(format!("{}:{l}", f.display()));
        }
    }
    assert!(
        found.is_empty(),
        "start them through tests/common: {found:#?}"
    );
    // The rule itself catches both kinds.
    assert_eq!(
        unlocked_starts("let c = Command::new(EXE);\nCommand::new(\"tmux\").args(x)").len(),
        2
    );
}
