//! `cyclescope run` end to end with faults in the candidate: the real fault-injection library
//! (posing as pseudoXOF-256 beside the real one) fails one job while the campaign finishes the
//! others, a candidate that prints is measured with its output kept apart, and the kernel's CPU
//! limit stops a runaway candidate. Nothing here asserts on timings.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::output_text as text;
use common::runs::{cyclescope, record, validate};
use cyclescope_core::vocabulary::RecordStatus;

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
