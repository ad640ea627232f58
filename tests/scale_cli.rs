//! Campaigns at scale with the real binary and real workers: a run on both CPUs of this
//! machine, two `--shard` processes joined by `merge` into a dataset that `validate` and
//! `report` accept, `merge`'s refusals on run directories built from a real shard, and a
//! second process refused on a CPU the first one holds. Short trial targets; no timings are
//! asserted.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::output_text;
use serde_json::Value;

/// The tests measure on this machine's CPUs: one at a time, or each disturbs the others.
static CPUS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn cpus() -> std::sync::MutexGuard<'static, ()> {
    CPUS.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn cyclescope(args: &[&str]) -> Output {
    common::cyclescope()
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("running cyclescope")
}

fn ok(args: &[&str]) -> Output {
    let o = cyclescope(args);
    assert!(o.status.success(), "{args:?}\n{}", output_text(&o));
    o
}

fn json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .unwrap()
}

fn records(run: &Path) -> Vec<Value> {
    let mut out = Vec::new();
    for cand in std::fs::read_dir(run.join("records")).unwrap() {
        for f in std::fs::read_dir(cand.unwrap().path()).unwrap() {
            out.push(json(&f.unwrap().path()));
        }
    }
    out
}

const LABELS: [&str; 4] = [
    "sm3hash-256",
    "pseudoXOF-256",
    "pseudoXOF-512",
    "pseudohash-512",
];

/// The arguments of a quick run of the four labels into `out` with `extra` flags.
fn quick_args(out: &Path, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["run"];
    args.extend(LABELS);
    args.extend([
        "--lengths",
        "32,1024",
        "--trial-target",
        "0.01",
        "--trials",
        "2",
        "--allow-unfixed-host",
        "--out",
        out.to_str().unwrap(),
    ]);
    args.extend(extra);
    args.into_iter().map(String::from).collect()
}

fn quick_run(out: &Path, extra: &[&str]) -> Output {
    let args = quick_args(out, extra);
    cyclescope(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

#[test]
fn a_run_on_both_cpus_writes_valid_records_naming_each_cpu() {
    let _cpus = cpus();
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("two");
    let o = quick_run(&run, &["--cpus", "0-1"]);
    assert!(o.status.success(), "{}", output_text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    // This machine has two CPUs, both measuring: nothing is left for cyclescope, and it says so.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus == 2 {
        assert!(err.contains("no CPU is left for cyclescope"), "{err}");
    }
    ok(&["validate", run.to_str().unwrap()]);
    let recs = records(&run);
    assert_eq!(recs.len(), 8);
    for r in &recs {
        assert_eq!(r["status"], "complete");
        let cpu = &r["cyclescope"]["measurement_cpu"];
        assert_eq!(cpu, &r["environment"]["cpu_number"]);
    }
    let on = |c: u64| {
        recs.iter()
            .filter(|r| r["cyclescope"]["measurement_cpu"] == c)
            .count()
    };
    assert_eq!((on(0), on(1)), (4, 4), "two whole instances per CPU");
    let c = json(&run.join("campaign.json"));
    assert_eq!(c["shards"], 2);
    assert_eq!(c["shard_cpus"]["1/2"], 0);
    assert_eq!(c["cyclescope"]["lanes"].as_array().unwrap().len(), 2);
    let checked: Vec<u64> = c["host_checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["cpu"].as_u64().unwrap())
        .collect();
    assert_eq!(checked, [0, 1], "a host check per measuring CPU");
}

#[test]
fn two_shard_processes_merge_into_a_dataset_that_validates_and_reports() {
    let _cpus = cpus();
    let tmp = tempfile::tempdir().unwrap();
    let (s1, s2) = (tmp.path().join("s1"), tmp.path().join("s2"));
    // Separate processes at once, each on its own CPU, as on two machines.
    let spawn = |out: &Path, shard: &str, cpu: &str| {
        let args = quick_args(out, &["--shard", shard, "--cpu", cpu]);
        common::cyclescope()
            .args(&args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let last = (std::thread::available_parallelism().map_or(1, |n| n.get()) - 1).to_string();
    let (a, b) = (spawn(&s1, "1/2", "0"), spawn(&s2, "2/2", &last));
    for child in [a, b] {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", output_text(&o));
    }
    let labels = |run: &Path| {
        let mut l: Vec<String> = records(run)
            .iter()
            .map(|r| r["label"].as_str().unwrap().to_string())
            .collect();
        l.sort();
        l.dedup();
        l
    };
    let (l1, l2) = (labels(&s1), labels(&s2));
    assert_eq!((l1.len(), l2.len()), (2, 2), "{l1:?} {l2:?}");
    assert!(l1.iter().all(|l| !l2.contains(l)), "disjoint slices");
    assert_eq!(
        json(&s2.join("campaign.json"))["cyclescope"]["shard"],
        "2/2"
    );
    let ds = tmp.path().join("dataset");
    let o = ok(&[
        "merge",
        s1.to_str().unwrap(),
        s2.to_str().unwrap(),
        "--out",
        ds.to_str().unwrap(),
    ]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("8 record(s), 4 KAT log(s)"),
        "{}",
        output_text(&o)
    );
    ok(&["validate", ds.to_str().unwrap()]);
    let pages = tmp.path().join("pages");
    ok(&[
        "report",
        ds.to_str().unwrap(),
        "--out",
        pages.to_str().unwrap(),
    ]);
    let page = |prefix: &str| {
        let name = std::fs::read_dir(pages.join("performance"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .find(|n| n.starts_with(prefix))
            .unwrap_or_else(|| panic!("a {prefix} page"));
        std::fs::read_to_string(pages.join("performance").join(name)).unwrap()
    };
    assert!(page("summary_").contains("## ICCS hash helpers"));
    let method = page("method_");
    assert!(method.contains("8 records (8 complete)"), "{method}");
    let c = json(&ds.join("campaign.json"));
    assert_eq!(c["cyclescope"]["merged_from"].as_array().unwrap().len(), 2);
    assert_eq!(c["cyclescope"]["instances"].as_array().unwrap().len(), 4);

    // Refusals, each on run directories built from the real shards; nothing is written.
    let copy = |from: &Path, to: &Path| {
        let o = Command::new("cp")
            .args(["-r", from.to_str().unwrap(), to.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success());
    };
    let edit_campaign = |run: &Path, f: &dyn Fn(&mut Value)| {
        let p = run.join("campaign.json");
        let mut c = json(&p);
        f(&mut c);
        std::fs::write(&p, serde_json::to_vec_pretty(&c).unwrap()).unwrap();
    };
    let refused = |runs: &[&Path], prefer: Option<&Path>, want: &str| {
        let out = tmp.path().join("refused");
        let mut args: Vec<&str> = vec!["merge"];
        args.extend(runs.iter().map(|r| r.to_str().unwrap()));
        args.extend(["--out", out.to_str().unwrap()]);
        if let Some(p) = prefer {
            args.extend(["--prefer", p.to_str().unwrap()]);
        }
        let o = cyclescope(&args);
        assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want), "want {want:?}\n{}", output_text(&o));
        assert!(!out.exists(), "nothing written on refusal");
    };
    // The same job measured twice with different results.
    let again = tmp.path().join("s1-again");
    copy(&s1, &again);
    let rec = std::fs::read_dir(again.join("records/iccs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut r = json(&rec);
    r["ended_utc"] = "2026-01-01T00:00:00.000000+00:00".into();
    std::fs::write(&rec, serde_json::to_vec(&r).unwrap()).unwrap();
    refused(
        &[&s1, &again],
        None,
        "with different results; keep one with --prefer",
    );
    let preferred = tmp.path().join("preferred");
    ok(&[
        "merge",
        s1.to_str().unwrap(),
        again.to_str().unwrap(),
        "--prefer",
        again.to_str().unwrap(),
        "--out",
        preferred.to_str().unwrap(),
    ]);
    let kept = preferred.join(rec.strip_prefix(&again).unwrap());
    assert_eq!(
        json(&kept)["ended_utc"],
        "2026-01-01T00:00:00.000000+00:00",
        "--prefer keeps that run's record"
    );
    // A fixed host fact differs.
    let other_host = tmp.path().join("s2-other-host");
    copy(&s2, &other_host);
    edit_campaign(&other_host, &|c| {
        c["environment_at_start"]["perf_event_paranoid"] = "-1".into()
    });
    refused(
        &[&s1, &other_host],
        None,
        "differ in fixed facts: perf_event_paranoid",
    );
    // But a different place (host name, CPU) is what shards are for.
    let elsewhere = tmp.path().join("s2-elsewhere");
    copy(&s2, &elsewhere);
    edit_campaign(&elsewhere, &|c| {
        c["environment_at_start"]["hostname"] = "node17".into();
        c["environment_at_start"]["cpu_number"] = 5.into();
    });
    ok(&[
        "merge",
        s1.to_str().unwrap(),
        elsewhere.to_str().unwrap(),
        "--out",
        tmp.path().join("elsewhere-ds").to_str().unwrap(),
    ]);
    // Different planning.
    let replanned = tmp.path().join("s2-replanned");
    copy(&s2, &replanned);
    edit_campaign(&replanned, &|c| {
        c["planning"]["trial_target_s"] = 0.5.into()
    });
    refused(&[&s1, &replanned], None, "were planned differently");
}

#[test]
fn a_second_process_on_a_locked_cpu_is_refused_by_name() {
    let _cpus = cpus();
    let tmp = tempfile::tempdir().unwrap();
    let (first_dir, second_dir) = (tmp.path().join("first"), tmp.path().join("second"));
    // Long enough to be measuring when the second one starts (it is cancelled then).
    let mut first = common::cyclescope()
        .args([
            "run",
            "pseudohash-1024",
            "--no-reference-jobs",
            "--lengths",
            "65536",
            "--trial-target",
            "2",
            "--allow-unfixed-host",
            "--cpu",
            "0",
            "--out",
            first_dir.to_str().unwrap(),
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The suite's lock folder: the first run may queue there behind another test's run.
    let lock = common::suite_lock_dir().join(".cpu0.lock");
    let holder = format!("pid {}\n", first.id());
    let deadline = Instant::now() + Duration::from_secs(1800);
    while !std::fs::read_to_string(&lock).is_ok_and(|t| t.starts_with(&holder)) {
        assert!(Instant::now() < deadline, "the first run never took CPU 0");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Told not to wait, the second one is refused at once.
    let o = common::cyclescope()
        .env_remove(cyclescope_core::cpu::lock::LOCK_WAIT_ENV)
        .args([
            "run",
            "sm3hash-256",
            "--no-reference-jobs",
            "--lengths",
            "32",
            "--allow-unfixed-host",
            "--cpus",
            "0",
            "--out",
            second_dir.to_str().unwrap(),
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(first.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    let status = first.wait().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    assert!(
        err.contains(&format!("CPU 0 is taken: process {} (", first.id())),
        "{err}"
    );
    assert!(err.contains("writing"), "{err}");
    assert!(
        !second_dir.join("campaign.json").exists(),
        "no run folder for the refused run"
    );
    assert!(!status.success(), "the first run was cancelled");
    // Once the first process is gone its lock is too.
    let o = cyclescope(&[
        "run",
        "sm3hash-256",
        "--no-reference-jobs",
        "--lengths",
        "32",
        "--trial-target",
        "0.01",
        "--trials",
        "1",
        "--allow-unfixed-host",
        "--cpu",
        "0",
        "--out",
        second_dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", output_text(&o));
}
