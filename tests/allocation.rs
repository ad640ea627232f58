//! Runs inside an allocation: the real binary started under `taskset`, which hands it the same
//! affinity mask a Slurm job's binding or cgroup cpuset does. The default measurement CPU is
//! the last CPU it was given, a CPU outside the mask is refused by name (also where widening
//! the mask would have been allowed), a lone CPU is shared with the engine and recorded so,
//! and `check` reports the allowed CPUs. Needs two CPUs; short trials, no timings asserted.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

/// cyclescope started by `taskset -c CPUS`, under the suite's CPU locks.
fn under_taskset(cpus: &str, args: &[&str]) -> Output {
    let mut cmd = Command::new("taskset");
    common::suite_locks(&mut cmd)
        .args(["-c", cpus, env!("CARGO_BIN_EXE_cyclescope")])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("running taskset (util-linux)")
}

fn two_cpus() {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert!(n >= 2, "these tests need two CPUs; this machine gives {n}");
}

fn quick(out: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "run",
        "sm3hash-256",
        "--no-reference-jobs",
        "--lengths",
        "32",
        "--trials",
        "2",
        "--trial-target",
        "0.01",
        "--allow-unfixed-host",
        "--out",
    ]
    .map(String::from)
    .to_vec();
    args.push(out.to_str().unwrap().to_string());
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .unwrap()
}

#[test]
fn a_cpu_outside_the_allocation_is_refused_by_name() {
    two_cpus();
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let args = quick(&run, &["--cpu", "1"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = under_taskset("0", &args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{}", common::output_text(&o));
    assert!(
        err.contains("CPU 1 is not one this process may run on (allowed: 0, its affinity mask"),
        "{err}"
    );
    assert!(!run.exists(), "nothing was written");
    let args = quick(&run, &["--cpus", "0-1"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let lanes = under_taskset("1", &args);
    assert_eq!(
        lanes.status.code(),
        Some(2),
        "{}",
        common::output_text(&lanes)
    );
    assert!(
        String::from_utf8_lossy(&lanes.stderr)
            .contains("CPU 0 is not one this process may run on (allowed: 1,"),
        "{}",
        common::output_text(&lanes)
    );
}

#[test]
fn a_lone_allowed_cpu_measures_and_is_shared_with_the_engine() {
    two_cpus();
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let args = quick(&run, &[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = under_taskset("0", &args);
    assert!(o.status.success(), "{}", common::output_text(&o));
    let c = json(&run.join("campaign.json"));
    assert_eq!(c["cyclescope"]["cpus"], serde_json::json!([0]), "{c}");
    assert_eq!(c["cyclescope"]["engine_shared_cpu"], true, "{c}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no CPU is left for cyclescope itself: it shares CPU(s) 0 with the trials")
            && err.contains("this process may use CPU(s) 0:"),
        "{err}"
    );
}

#[test]
fn the_default_cpu_is_the_last_allowed_and_the_engine_steps_onto_another() {
    two_cpus();
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let args = quick(&run, &[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = under_taskset("0-1", &args);
    assert!(o.status.success(), "{}", common::output_text(&o));
    let c = json(&run.join("campaign.json"));
    assert_eq!(c["cyclescope"]["cpus"], serde_json::json!([1]), "{c}");
    assert_eq!(c["cyclescope"]["engine_shared_cpu"], false, "{c}");
}

fn allocation_row(cpus: &str, cpu: &str) -> Value {
    let o = under_taskset(cpus, &["check", "--cpu", cpu, "--json"]);
    let doc: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", common::output_text(&o)));
    doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "allocation")
        .cloned()
        .unwrap_or_else(|| panic!("no allocation row: {doc}"))
}

#[test]
fn check_reports_the_allowed_cpus_and_where_the_siblings_are() {
    two_cpus();
    let row = allocation_row("1", "1");
    let value = row["value"].as_str().unwrap();
    assert!(
        value.starts_with("allowed CPUs 1 (sched_getaffinity); "),
        "{row}"
    );
    let siblings =
        std::fs::read_to_string("/sys/devices/system/cpu/cpu1/topology/thread_siblings_list")
            .unwrap_or_default();
    if siblings.trim() == "1" {
        assert_eq!(row["status"], "pass", "{row}");
        assert!(value.ends_with("CPU 1 has no SMT sibling"), "{row}");
    } else {
        // On an SMT machine CPU 1's siblings are all outside a one-CPU allocation.
        assert_eq!(row["status"], "warn", "{row}");
        assert!(
            value.contains("inside the allocation: none, outside it: "),
            "{row}"
        );
    }
    let o = under_taskset("0", &["check", "--json"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        doc["cpu"], 0,
        "check's default CPU is the allocation's last"
    );
    let both = allocation_row("0-1", "1");
    assert!(
        both["value"]
            .as_str()
            .unwrap()
            .starts_with("allowed CPUs 0-1 (sched_getaffinity); "),
        "{both}"
    );
}

#[test]
fn lanes_from_the_allocation_leave_its_first_core_to_the_engine() {
    two_cpus();
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let args = quick(&run, &["--cpus", "allowed"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = under_taskset("0-1", &args);
    assert!(o.status.success(), "{}", common::output_text(&o));
    let c = json(&run.join("campaign.json"));
    assert_eq!(c["cyclescope"]["cpus"], serde_json::json!([1]), "{c}");
    assert_eq!(c["cyclescope"]["engine_shared_cpu"], false, "{c}");
}
