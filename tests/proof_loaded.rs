//! The fresh-message probe's rule at the shortest calls, under load: the loop's own cost is
//! measured in a process with no candidate and allowed for (`measure::proof::PROBE_LOOP_MARGIN`)
//! instead of a fixed 150 ns, and the bundled baselines still keep every figure while a real
//! busy loop shares the measurement CPU. The load starts only once the run holds that CPU's
//! lock, so it never lands on another test's measurement. Only statuses are asserted.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::measurement_cpu;

/// How long the run may take, queueing behind other tests' runs included (a hang, not a
/// timing target).
fn bound() -> Duration {
    let queue: u64 = common::SUITE_LOCK_WAIT_S.parse().unwrap();
    Duration::from_secs(queue + 600)
}

/// Every record below `dir`.
fn records(dir: &Path) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(records(&p));
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap());
        }
    }
    out
}

#[test]
fn the_bundled_baselines_keep_their_figures_at_short_lengths_with_a_busy_loop_on_the_cpu() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let mut child = common::cyclescope()
        .args([
            "run",
            "sm3hash-256",
            "pseudohash-512",
            "pseudoXOF-512",
            "--lengths",
            "8,32,64,1024",
            "--trials",
            "2",
            "--trial-target",
            "0.01",
            "--allow-unfixed-host",
            "--out",
        ])
        .arg(&run)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The load, from the moment this run holds the measurement CPU to its end.
    let cpu = measurement_cpu();
    let ours = format!("{} (", child.id());
    let started = Instant::now();
    let mut hog = loop {
        if child.try_wait().unwrap().is_some() {
            break None;
        }
        assert!(started.elapsed() < bound(), "the run did not end");
        let held = cyclescope_core::cpu::lock::holder(&common::suite_lock_dir(), cpu);
        if held.is_some_and(|h| h.starts_with(&ours)) {
            break Some(common::busy_loop_on(cpu));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let o = child.wait_with_output().unwrap();
    let loaded = hog.is_some();
    if let Some(h) = hog.as_mut() {
        let _ = h.kill();
        let _ = h.wait();
    }
    let out = common::output_text(&o);
    assert!(loaded, "the run ended before it held its CPU: {out}");
    assert!(o.status.success(), "{out}");
    let records = records(&run.join("records"));
    // Twelve jobs, and the reference instance's where the run adds them.
    assert!(records.len() >= 12, "{out}");
    for r in &records {
        assert_eq!(r["status"], "complete", "{r}\n{out}");
        assert!(r["cyclescope"]["failure"].is_null(), "{r}");
    }
}
