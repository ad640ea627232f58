//! Long KAT jobs through the real binary: `kat --loop` of two instances runs each job on a CPU
//! it locked (the suite's lock folder, where every measuring test queues), both pass against the
//! committed manifest, and with every other CPU measuring they share the one left, one after
//! another, never the CPUs that are measuring.

mod common;

use common::kat as support;

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use serde_json::Value;
use support::*;

const LABELS: [&str; 2] = ["pseudoXOF-256", "pseudoXOF-384"];

/// `kat --loop --json` of both instances into `out`: the exit status and each job's object.
fn loop_kats(out: &Path) -> (Option<i32>, Vec<Value>, String) {
    let o = kat(
        &[
            LABELS[0],
            LABELS[1],
            "--loop",
            "--json",
            "--out",
            path_str(out),
        ],
        None,
    );
    let objects: Vec<Value> = serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&o), stderr(&o)));
    (o.status.code(), objects, stderr(&o))
}

/// Both jobs passed, in the order asked, their KAT_Loop text matching the manifest.
fn assert_both_pass(out: &Path, objects: &[Value], err: &str) {
    let labels: Vec<&str> = objects
        .iter()
        .map(|o| o["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, LABELS, "{err}");
    for (o, label) in objects.iter().zip(LABELS) {
        assert_eq!(o["status"], "PASS", "{o}\n{err}");
        let log = log_of(out, "iccs", label);
        assert!(
            log.contains(&format!(" strict KAT_Loop_{label}.txt\n")),
            "{log}"
        );
        assert!(log.ends_with(" PASS \n"), "{log}");
        // Root on a machine with cgroups (CI): the worker's peak memory, read from its group.
        if nix::unistd::geteuid().is_root() && Path::new("/sys/fs/cgroup").exists() {
            let peak = o["peak_memory_bytes"].as_u64().unwrap_or(0);
            assert!(peak > 1 << 20, "{o}");
            assert!(log.contains("\nmemory  peak "), "{log}");
        }
        // And its CPU time, the group's account of every thread and process in it.
        if common::cgroup_cpu_accounted() {
            let cpu = o["cpu_time_s"].as_f64().unwrap_or(0.0);
            assert!(cpu > 0.0, "{o}");
            assert!(log.contains("\ncpu     "), "{log}");
        }
    }
}

#[test]
fn two_loop_jobs_both_pass_each_on_a_cpu_it_locked() {
    let out = tempfile::tempdir().unwrap();
    let (code, objects, err) = loop_kats(&out.path().join("kat"));
    assert_eq!(code, Some(0), "{err}");
    assert_both_pass(&out.path().join("kat"), &objects, &err);
    let allowed = cyclescope_core::cpu::allowed();
    for o in &objects {
        let cpu = o["cpu"].as_u64().expect("a long job names its CPU") as usize;
        assert!(allowed.contains(&cpu), "{o}");
        assert!(
            err.contains(&format!(
                "KAT of {} on CPU {cpu}",
                o["label"].as_str().unwrap()
            )),
            "{err}"
        );
    }
}

#[test]
fn with_the_other_cpus_measuring_both_jobs_run_on_the_free_one() {
    // This test measures on every CPU but the first, as another test of the suite would: it
    // queues for their locks in the suite's folder.
    let allowed = cyclescope_core::cpu::allowed();
    let (free, busy) = allowed.split_first().expect("a CPU");
    let holder = tempfile::tempdir().unwrap();
    let run = holder.path().join("measuring");
    let held = cyclescope_core::cpu::lock::lock_all(
        &common::suite_lock_dir(),
        busy,
        &run,
        Duration::from_secs(common::SUITE_LOCK_WAIT_S.parse().unwrap()),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let (code, objects, err) = loop_kats(&out.path().join("kat"));
    drop(held);
    assert_eq!(code, Some(0), "{err}");
    assert_both_pass(&out.path().join("kat"), &objects, &err);
    for o in &objects {
        assert_eq!(o["cpu"].as_u64(), Some(*free as u64), "{o}\n{err}");
    }
}
