//! Results a library cannot forge (issue 10, item 3): a library that writes worker messages to
//! the protocol descriptor — a KAT pass for files it never wrote, trials of ten cycles per call
//! — through the real binary. The lines it writes are not the worker's, so the job ends
//! TAMPERED (its own KAT status, exit code 8; a `TAMPERED:` failure in the record), named in
//! the log and the record, and nothing forged is believed; a forgery meant for a kind of worker
//! that no longer hosts a candidate has nowhere to run.

mod common;
use common::hostile as support;

use std::path::Path;
use std::time::Duration;

use support::*;

const BOUND: Duration = Duration::from_secs(30);

/// The manifest digest of `<label>/<file>` in the bundled manifest.
fn manifest_digest(name: &str) -> String {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("kat/iccs/kat.sha256");
    let text = std::fs::read_to_string(manifest).unwrap();
    text.lines()
        .find(|l| l.ends_with(name))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("{name} is in the bundled manifest"))
        .to_string()
}

/// `kat` of the forger, as `FORGE_WHEN` says, with the bundled manifest and the manifest's own
/// digests to forge.
fn forged_kat(tmp: &Path, when: &str, m: &str) -> (std::process::Output, String) {
    let lib = build_fixture("forge_protocol", tmp);
    let out = tmp.join(format!("out-{when}"));
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("kat/iccs/kat.sha256");
    let s12 = manifest_digest("pseudoXOF-256/KAT_2_12_pseudoXOF-256.txt");
    let s23 = manifest_digest("pseudoXOF-256/KAT_2_23_pseudoXOF-256.txt");
    let cmd = command(
        &[
            "kat",
            "--lib",
            path_str(&lib),
            "--label",
            "pseudoXOF-256",
            "--digest-bits",
            "256",
            "--kat-name",
            "pseudoXOF-256",
            "--manifest",
            path_str(&manifest),
            "--out",
            path_str(&out),
        ],
        m,
        &[
            ("FORGE_WHEN", when),
            ("FORGE_SHA_2_12", &s12),
            ("FORGE_SHA_2_23", &s23),
        ],
    );
    let (o, _) = run_bounded(cmd, BOUND);
    let log = walk(&out.join("kat"), "log");
    let log = std::fs::read_to_string(&log[0]).unwrap();
    (o, log)
}

/// The `RESULT` line `kat` printed (empty when none).
fn result_line(o: &std::process::Output) -> String {
    let stdout = String::from_utf8_lossy(&o.stdout);
    let line = stdout.lines().find(|l| l.starts_with("RESULT "));
    line.unwrap_or_default().to_string()
}

/// The forger writes the files' `file_done` lines and `done` wherever its job names `kat`: the
/// checks' worker of checks' version 6 and before, where that forged a PASS. No worker of a
/// KAT job names it now (every call is a trial worker's table job), so the forgery has no
/// process to run in, and the library's own digests give its verdict.
#[test]
fn a_kat_pass_forged_for_a_kat_worker_has_no_worker_to_be_written_in() {
    let tmp = tempfile::tempdir().unwrap();
    let m = marker("forge-kat");
    let _sweep = Sweep(m.clone());
    let (o, log) = forged_kat(tmp.path(), "kat", &m);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let line = result_line(&o);
    assert!(
        line.contains(" MISMATCH KAT_2_12_pseudoXOF-256.txt"),
        "{}",
        text(&o)
    );
    assert!(log.contains("RESULT adhoc pseudoXOF-256 MISMATCH"), "{log}");
    assert_none_left(&m);
}

/// The same forgery in the KAT's table jobs (`FORGE_WHEN=measure`: the trial worker's): lines
/// the job does not hold end the job TAMPERED (exit code 8), and nothing forged is believed.
#[test]
fn a_kat_whose_table_job_forges_its_lines_is_tampered() {
    let tmp = tempfile::tempdir().unwrap();
    let m = marker("forge-kat-table");
    let _sweep = Sweep(m.clone());
    let (o, log) = forged_kat(tmp.path(), "measure", &m);
    assert_eq!(o.status.code(), Some(8), "{}", text(&o));
    let line = result_line(&o);
    assert!(line.contains(" TAMPERED "), "{}", text(&o));
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains(" PASS"),
        "{}",
        text(&o)
    );
    assert!(log.ends_with(&format!("{line}\n")), "{line}\n{log}");
    assert_none_left(&m);
}

#[test]
fn forged_trials_are_tampered_and_no_complete_record_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = build_fixture("forge_protocol", tmp.path());
    let run = tmp.path().join("run");
    let m = marker("forge-trial");
    let _sweep = Sweep(m.clone());
    let cmd = command(
        &[
            "run",
            "--lib",
            path_str(&lib),
            "--label",
            "forge-256",
            "--digest-bits",
            "256",
            "--lengths",
            "1024",
            "--trials",
            "2",
            "--trial-target",
            "0.01",
            "--out",
            path_str(&run),
            "--allow-unfixed-host",
            "--allow-kat-fail",
            // Only the forger's own records: no pseudoXOF reference job beside them.
            "--no-reference-jobs",
        ],
        &m,
        &[("FORGE_WHEN", "measure")],
    );
    let (o, _) = run_bounded(cmd, BOUND);
    assert!(!o.status.success(), "{}", text(&o));
    let records = walk(&run.join("records"), "json");
    assert_eq!(records.len(), 1, "{}", text(&o));
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&records[0]).unwrap()).unwrap();
    assert_ne!(r["status"], "complete", "{r}");
    let failure = r["cyclescope"]["failure"].as_str().unwrap_or_default();
    assert!(
        failure.starts_with("TAMPERED: a protocol line the worker did not write"),
        "{r}"
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("TAMPERED"),
        "{}",
        text(&o)
    );
    // The harness's validator must not accept the run as a measurement of the library.
    let v = command(&["validate", path_str(&run)], &m, &[]);
    let (v, _) = run_bounded(v, BOUND);
    assert!(!v.status.success(), "{}", text(&v));
    assert!(
        String::from_utf8_lossy(&v.stdout).contains("(0 complete)"),
        "{}",
        text(&v)
    );
    assert_none_left(&m);
}

fn walk(dir: &Path, ext: &str) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p, ext));
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
    out
}
