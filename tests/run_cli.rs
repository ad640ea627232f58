//! `cyclescope run` end to end with the real binary, real worker processes and the real
//! fault-injection library: records that the validator accepts, faults that fail one job while
//! the campaign finishes the others, SIGKILL followed by `--resume`, and a resume refused when
//! the host changed. Short trial targets keep it quick; nothing here asserts on timings.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use cyclescope_core::record::TimingRecord;
use cyclescope_core::vocabulary::RecordStatus;

fn cyclescope(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = common::cyclescope();
    c.args(args).current_dir(env!("CARGO_MANIFEST_DIR"));
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("running cyclescope")
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn record(run: &Path, cand: &str, label: &str, bytes: u64) -> TimingRecord {
    let p = run.join(format!("records/{cand}/{label}__hash_{bytes}.json"));
    serde_json::from_slice(&std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .unwrap()
}

fn validate(run: &Path) {
    let o = cyclescope(&["validate", run.to_str().unwrap()], &[]);
    assert!(o.status.success(), "{}", text(&o));
}

/// A config with the faulty library posing as pseudoXOF-256 (so its KAT passes against the
/// bundled manifest) next to the real pseudoXOF-256.
fn fault_config(dir: &Path) -> PathBuf {
    let faulty = cyclescope_core::catalog::bundled_library("faulty");
    let manifest = common::faulty_manifest(dir);
    let cfg = dir.join("faults.toml");
    std::fs::write(
        &cfg,
        format!(
            "[settings]\ntrials = 2\ntrial_target_s = 0.01\n\n\
             [[candidate]]\nid = \"fixture\"\nalgorithm = \"Faulty\"\nkat_manifest = {manifest:?}\n\
             [[candidate.instance]]\nlabel = \"faulty-256\"\nlibrary = {faulty:?}\ndigest_bits = 256\nkat_name = \"pseudoXOF-256\"\n\n\
             [[candidate]]\nid = \"iccs\"\nalgorithm = \"ICCS hash helpers\"\nvariant = \"iccs-baseline\"\nkat_manifest = {manifest:?}\n\
             [[candidate.instance]]\nlabel = \"pseudoXOF-256\"\nlibrary = \"bundled:pseudoxof\"\ndigest_bits = 256\n"
        ),
    )
    .unwrap();
    cfg
}

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

/// The faults fire at 1000 B: a length the trials measure and that neither the KAT nor the
/// KAT gate's conformance sample hashes, so the library passes the gate and fails its trials.
fn run_with_fault(mode: &str) -> (tempfile::TempDir, Output) {
    // Below the working folder, so the evidence names the config's files by relative paths.
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let cfg = fault_config(tmp.path());
    let run = tmp.path().join("run");
    let o = cyclescope(
        &[
            "--config",
            cfg.to_str().unwrap(),
            "run",
            "faulty-256",
            "pseudoXOF-256",
            "--lengths",
            "32,1000",
            "--out",
            run.to_str().unwrap(),
            "--allow-unfixed-host",
            // Every worker, the KAT's among them, is killed after this: long enough for the
            // KAT and conformance of pseudoXOF-256 on a loaded machine (5 s was not), short
            // enough that the hanging fault is not waited out for long.
            "--timeout-cap",
            "20",
        ],
        &[("FAULTY_MODE", mode)],
    );
    (tmp, o)
}

#[test]
fn each_fault_fails_its_job_and_the_campaign_finishes_the_others() {
    for (mode, reason) in [
        ("segv@1000", "CRASH: worker killed by SIGSEGV"),
        ("abort@1000", "CRASH: worker killed by SIGABRT"),
        ("hang@1000", "TIMEOUT"),
        ("error@1000", "CRYPTOFAIL: CryptHash returned -3"),
        ("overflow@1000", "OVERFLOW"),
        ("exit@1000", "CRASH: worker exited with status 3"),
    ] {
        let (tmp, o) = run_with_fault(mode);
        let run = tmp.path().join("run");
        assert_eq!(o.status.code(), Some(1), "{mode}: {}", text(&o));
        let failed = record(&run, "fixture", "faulty-256", 1000);
        assert_eq!(failed.status, RecordStatus::FailedOrPartial, "{mode}");
        let why = failed
            .cyclescope
            .as_ref()
            .and_then(|a| a.failure.as_ref())
            .map(ToString::to_string)
            .unwrap_or_default();
        assert!(why.starts_with(reason), "{mode}: {why}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("FAILED faulty-256 @ 1000 B"),
            "{mode}: {}",
            text(&o)
        );
        // The other jobs of the campaign finished.
        for (cand, label, len) in [
            ("fixture", "faulty-256", 32),
            ("iccs", "pseudoXOF-256", 32),
            ("iccs", "pseudoXOF-256", 1000),
        ] {
            let r = record(&run, cand, label, len);
            assert_eq!(
                r.status,
                RecordStatus::Complete,
                "{mode}: {label} @ {len} B: {:?}\n{}",
                r.cyclescope.as_ref().and_then(|a| a.failure.as_ref()),
                text(&o)
            );
        }
        validate(&run);
    }
}

#[test]
fn a_candidate_that_prints_is_measured_and_its_output_kept_apart() {
    let (tmp, o) = run_with_fault("stdout");
    assert!(o.status.success(), "{}", text(&o));
    let r = record(&tmp.path().join("run"), "fixture", "faulty-256", 32);
    assert_eq!(r.status, RecordStatus::Complete);
    assert!(
        r.processes
            .iter()
            .any(|p| p.stderr.contains("candidate chatter on stdout")),
        "the candidate's stdout is captured with its stderr"
    );
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains("chatter"),
        "{}",
        text(&o)
    );
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
fn the_kernel_cpu_limit_stops_a_runaway_candidate_without_any_timeout() {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let cfg = fault_config(tmp.path());
    let run = tmp.path().join("run");
    let o = cyclescope(
        &[
            "--config",
            cfg.to_str().unwrap(),
            "run",
            "faulty-256",
            "--lengths",
            "1000",
            "--out",
            run.to_str().unwrap(),
            "--allow-unfixed-host",
            "--max-cpu-seconds",
            "1",
        ],
        &[("FAULTY_MODE", "hang@1000")],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let r = record(&run, "fixture", "faulty-256", 1000);
    let why = r
        .cyclescope
        .and_then(|a| a.failure)
        .map(|f| f.to_string())
        .unwrap_or_default();
    assert!(why.contains("SIGXCPU") || why.contains("SIGKILL"), "{why}");
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
