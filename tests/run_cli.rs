//! `cyclescope run` end to end with the real binary and real worker processes: records that
//! the validator accepts, SIGKILL followed by `--resume`, no namespace holder outliving a
//! killed engine, and a resume refused when the host changed (faults in the candidate are
//! `run_faults.rs`). Short trial targets keep it quick; nothing here asserts on timings.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::output_text as text;
use common::runs::{cyclescope, record, validate};
use cyclescope_core::vocabulary::RecordStatus;

#[test]
fn run_measures_writes_valid_records_and_prints_the_table() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let o = cyclescope(
        &[
            "run",
            "pseudoXOF-512",
            "sm3hash-256",
            "--no-reference-jobs",
            "--lengths",
            "32,1024",
            "--trial-target",
            "0.02",
            "--trials",
            "3",
            "--out",
            run.to_str().unwrap(),
            "--allow-unfixed-host",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("| instance | message | mean cycles | cycles/byte | mean time | MB/s | n |"),
        "{out}"
    );
    assert!(out.contains("| `pseudoXOF-512` | 1024 B |"), "{out}");
    // Every mean carries its 95 % confidence interval; a ⚠ is explained under the table.
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("| `")).collect();
    assert_eq!(rows.len(), 4, "{out}");
    for row in &rows {
        let mean = row.split(" | ").nth(2).unwrap_or_default();
        assert!(mean.contains(" ±") && mean.contains(" %"), "{row}");
        if mean.ends_with('⚠') {
            let label = row.split('`').nth(1).unwrap_or_default();
            assert!(
                out.lines().any(|l| l.starts_with(&format!("⚠ `{label}` "))),
                "{out}"
            );
        }
    }
    for (label, len) in [
        ("pseudoXOF-512", 32),
        ("pseudoXOF-512", 1024),
        ("sm3hash-256", 32),
        ("sm3hash-256", 1024),
    ] {
        let r = record(&run, "iccs", label, len);
        assert_eq!(r.status, RecordStatus::Complete);
        assert!(r.kat.is_pass());
        assert_eq!(r.trials.len(), 3);
        assert!(r.mean_cycles.unwrap() > 0.0);
        let extra = r.cyclescope.as_ref().unwrap();
        assert!(extra.cycle_source.is_some());
        assert!(
            extra.per_call.unwrap().samples > 0,
            "per-call samples were taken"
        );
        assert!(extra.histogram_v2_base64.is_some());
        assert_eq!(r.processes.len(), 3, "one process per trial");
    }
    validate(&run);
    assert!(run.join("journal.jsonl").is_file());
    assert!(run.join("kat/iccs/pseudoXOF-512.log").is_file());
}

#[test]
fn sigkill_mid_run_then_resume_finishes_with_every_record_valid() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let mut child = common::cyclescope()
        .args([
            "run",
            "pseudoXOF-256",
            "pseudoXOF-1024",
            "--lengths",
            "32,1024,4096",
            "--trial-target",
            "0.05",
            "--trials",
            "3",
            "--out",
            run.to_str().unwrap(),
            "--allow-unfixed-host",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let records = || cyclescope_core::record::run_dir::list_records(&run);
    while records().is_empty() {
        assert!(Instant::now() < deadline, "no record appeared");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it could be killed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before: Vec<(PathBuf, Vec<u8>)> = records()
        .into_iter()
        .map(|(p, _)| {
            let bytes = std::fs::read(run.join(&p)).unwrap();
            (p, bytes)
        })
        .collect();
    assert!(before.len() < 6, "killed before the end");

    let o = cyclescope(&["run", "--resume", run.to_str().unwrap()], &[]);
    assert!(o.status.success(), "{}", text(&o));
    let after = records();
    assert_eq!(after.len(), 6, "{}", text(&o));
    assert!(after.iter().all(|(_, r)| r.status.is_complete()));
    for (p, bytes) in before {
        assert_eq!(
            std::fs::read(run.join(&p)).unwrap(),
            bytes,
            "{} was rewritten",
            p.display()
        );
    }
    validate(&run);
}

/// The first process of a worker's PID namespace (its holder) among the children of `parent`:
/// pid 1 of a namespace below this one (`NSpid` ends in 1).
fn namespace_holders(parent: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            let field = |name: &str| {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix(name))
                    .map(|v| v.split_whitespace().map(str::to_string).collect::<Vec<_>>())
                    .unwrap_or_default()
            };
            let nspid = field("NSpid:");
            field("PPid:") == [parent.to_string()]
                && nspid.len() > 1
                && nspid.last().is_some_and(|p| p == "1")
        })
        .collect()
}

/// An engine killed outright (SIGKILL, no handler runs) while its workers run leaves no holder
/// of their PID namespaces behind: each reads end-of-file on its lifeline and ends, whenever
/// in its life the kill came. As root every worker has such a namespace, so one must be seen.
#[test]
fn an_engine_killed_outright_leaves_no_namespace_holder_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let mut child = common::cyclescope()
        .args([
            "run",
            "pseudoXOF-256",
            "--no-reference-jobs",
            "--lengths",
            "32,1024,4096,16384",
            "--trial-target",
            "0.05",
            "--trials",
            "5",
            "--out",
            tmp.path().join("run").to_str().unwrap(),
            "--allow-unfixed-host",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let root = nix::unistd::geteuid().is_root();
    let deadline = Instant::now() + Duration::from_secs(120);
    let holders = loop {
        let seen = namespace_holders(child.id());
        if !seen.is_empty() || child.try_wait().unwrap().is_some() || Instant::now() > deadline {
            break seen;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(
        !root || !holders.is_empty(),
        "no namespace holder was seen while the run ran"
    );
    // A process's start time, None once it has ended (gone, or a zombie waiting for a reaper).
    let start_of = |pid: u32| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let fields: Vec<String> = stat
            .rsplit(')')
            .next()?
            .split_whitespace()
            .map(str::to_string)
            .collect();
        (fields.first()? != "Z")
            .then(|| fields.get(19).cloned())
            .flatten()
    };
    let started: Vec<(u32, Option<String>)> = holders.iter().map(|&p| (p, start_of(p))).collect();
    let gone = Instant::now() + Duration::from_secs(20);
    loop {
        let left: Vec<u32> = started
            .iter()
            .filter(|(pid, start)| start.is_some() && start_of(*pid) == *start)
            .map(|(pid, _)| *pid)
            .collect();
        if left.is_empty() {
            break;
        }
        if Instant::now() > gone {
            for pid in &left {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(*pid as i32),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            panic!("namespace holders outlived their engine: {left:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn resume_refuses_a_changed_host() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let o = cyclescope(
        &[
            "run",
            "sm3hash-256",
            "--no-reference-jobs",
            "--lengths",
            "32",
            "--trial-target",
            "0.01",
            "--trials",
            "1",
            "--out",
            run.to_str().unwrap(),
            "--allow-unfixed-host",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    let p = run.join("records/iccs/sm3hash-256__hash_32.json");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    v["environment"]["cpu_model"] = serde_json::json!("Some Other CPU");
    std::fs::write(&p, cyclescope_core::record::pyjson::to_py_json(&v).unwrap()).unwrap();
    let o = cyclescope(&["run", "--resume", run.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("host changed") && err.contains("cpu_model"),
        "{err}"
    );
}

#[test]
fn an_unfixed_host_is_refused_without_the_flag() {
    let tmp = tempfile::tempdir().unwrap();
    let o = cyclescope(
        &[
            "run",
            "sm3hash-256",
            "--no-reference-jobs",
            "--lengths",
            "32",
            "--out",
            tmp.path().join("run").to_str().unwrap(),
            "--host-root",
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/host/untuned-laptop")
                .to_str()
                .unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("refusing to measure on an unfixed host"),
        "{}",
        text(&o)
    );
}

#[test]
fn adaptive_mode_stops_when_the_confidence_interval_is_tight_and_stays_valid() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let o = cyclescope(
        &[
            "run",
            "sm3hash-256",
            "--no-reference-jobs",
            "--lengths",
            "32,4096",
            "--adaptive",
            "0.02",
            "--max-trials",
            "12",
            "--trial-target",
            "0.02",
            "--out",
            run.to_str().unwrap(),
            "--allow-unfixed-host",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    for len in [32, 4096] {
        let r = record(&run, "iccs", "sm3hash-256", len);
        let extra = r.cyclescope.as_ref().unwrap();
        assert_eq!(extra.mode, "adaptive");
        assert_eq!(extra.adaptive_precision, Some(0.02));
        let k = r.trials.len() as u32;
        assert_eq!(r.plan.trials, k, "the plan states the trials actually run");
        assert!((3..=12).contains(&k), "{k} trials");
        let ci = extra.trial_spread.unwrap().ci95_relative;
        assert!(
            ci <= 0.02 || k == 12,
            "stopped at {k} trials with a CI of {ci}"
        );
    }
    validate(&run);
    let campaign: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("campaign.json")).unwrap()).unwrap();
    assert_eq!(campaign["cyclescope"]["adaptive"]["precision"], 0.02);
}

#[test]
fn run_json_carries_the_interval_and_the_doubts_of_each_job() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let o = cyclescope(
        &[
            "run",
            "sm3hash-256",
            "--no-reference-jobs",
            "--lengths",
            "32,128",
            "--trial-target",
            "0.02",
            "--trials",
            "3",
            "--out",
            run.to_str().unwrap(),
            "--allow-unfixed-host",
            "--json",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).expect("JSON rows");
    assert_eq!(rows.len(), 2);
    for row in rows {
        let ci = row["ci95_relative"].as_f64().expect("a CI beside the mean");
        assert!(ci >= 0.0, "{row}");
        // The same doubts the record gives under the core's rule, each with its kind.
        let bytes = row["input_bytes"].as_u64().unwrap();
        let summary = record(&run, "iccs", "sm3hash-256", bytes).summary();
        assert_eq!(
            row["doubts"],
            serde_json::to_value(&summary.doubts).unwrap()
        );
        for d in row["doubts"].as_array().expect("a list of doubts") {
            assert!(d["doubt"].is_string(), "{d}");
        }
    }
}

#[test]
fn a_figure_timed_without_a_passing_kat_says_so_in_the_table() {
    // An ad-hoc library with no manifest: its KAT is NOKAT, it is timed with --allow-kat-fail,
    // and the table names that beside its figure and under it.
    let tmp = tempfile::tempdir().unwrap();
    let source = common::cc::candidate_source("hash-94", "NOKAT-256", 256, "", "");
    let lib = common::cc::build_library(tmp.path(), "NOKAT-256", &source);
    let out = tmp.path().join("run");
    let args = common::quick_run(lib.to_str().unwrap(), out.to_str().unwrap(), true);
    let o = common::cyclescope_in(tmp.path(), &args);
    let text = common::output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("| `NOKAT-256` NOKAT | 32 B | "), "{text}");
    assert!(
        stdout.contains("KAT NOKAT `NOKAT-256` 32 B: timed without a passing KAT"),
        "{text}"
    );
}
