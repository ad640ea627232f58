//! Every failure status of the KAT gate, produced by the real fault-injection library
//! (`libfaulty.so`, pseudoXOF unless `FAULTY_MODE` says otherwise) through the real binary:
//! the candidate's fault is contained in the worker, classified, logged, and returned as the
//! exit code of a `cyclescope` process that itself ends normally. Faults are triggered on
//! short messages (`@N`) so each test stays fast.

mod common;

use common::kat as support;

use std::path::Path;
use std::process::Output;

use support::*;

/// `cyclescope kat --lib libfaulty.so` as a 256-bit instance named like pseudoXOF-256, so a
/// manifest written from the real pseudoXOF-256 applies.
fn faulty_kat(
    mode: Option<&str>,
    manifest: Option<&Path>,
    extra: &[&str],
) -> (Output, tempfile::TempDir) {
    let out = tempfile::tempdir().unwrap();
    // The run folder one level down: its runs folder (where the KAT pool keeps `.cpu<N>.lock`)
    // is then the test's own, not the shared temporary folder.
    let run = out.path().join("run");
    let lib = faulty();
    let mut args = vec![
        "--lib",
        path_str(&lib),
        "--label",
        "pseudoXOF-256",
        "--digest-bits",
        "256",
        "--kat-name",
        "pseudoXOF-256",
        "--out",
        path_str(&run),
    ];
    if let Some(m) = manifest {
        args.extend(["--manifest", path_str(m)]);
    }
    args.extend(extra);
    (kat(&args, mode), out)
}

/// The one RESULT line, and a check that the exit code is the status index.
fn result(o: &Output, code: i32) -> String {
    let lines = results(o);
    assert_eq!(
        lines.len(),
        1,
        "stdout: {}\nstderr: {}",
        stdout(o),
        stderr(o)
    );
    assert_eq!(o.status.code(), Some(code), "{lines:?}\n{}", stderr(o));
    lines[0].clone()
}

fn log(out: &tempfile::TempDir) -> String {
    log_of(&out.path().join("run"), "fixture", "pseudoXOF-256")
}

#[test]
fn segv_is_a_crash_named_by_its_signal() {
    let (o, out) = faulty_kat(Some("segv@1"), None, &[]);
    let line = result(&o, 7);
    assert_eq!(
        line,
        "RESULT fixture pseudoXOF-256 CRASH signal=SIGSEGV in KAT_2_12_pseudoXOF-256.txt"
    );
    assert!(log(&out).ends_with(&format!("{line}\n")));
}

#[test]
fn abort_and_exit_are_crashes() {
    let (o, _out) = faulty_kat(Some("abort@2"), None, &[]);
    assert!(result(&o, 7).contains(" CRASH signal=SIGABRT "));
    let (o, _out) = faulty_kat(Some("exit@2"), None, &[]);
    assert!(result(&o, 7).contains(" CRASH exit=3 "));
}

#[test]
fn a_hang_is_killed_at_the_timeout() {
    let (o, _out) = faulty_kat(Some("hang@1"), None, &["--timeout", "1.5"]);
    let line = result(&o, 6);
    assert!(line.contains(" TIMEOUT timeout after "), "{line}");
}

#[test]
fn a_write_past_the_digest_is_an_overflow() {
    let (o, out) = faulty_kat(Some("overflow@1"), None, &[]);
    let line = result(&o, 4);
    assert!(line.ends_with("OVERFLOW KAT_2_12_pseudoXOF-256.txt: CryptHash wrote outside its digest buffer for msg_len=8 bits (guard bytes changed)"), "{line}");
    assert!(log(&out).contains("\ninstance    = pseudoXOF-256\n"));
}

#[test]
fn an_error_return_is_a_cryptofail() {
    let (o, _out) = faulty_kat(Some("error@2"), None, &[]);
    let line = result(&o, 3);
    assert!(
        line.ends_with(
            "CRYPTOFAIL KAT_2_12_pseudoXOF-256.txt: CryptHash returned -3 for msg_len=16 bits"
        ),
        "{line}"
    );
}

#[test]
fn a_wrong_digest_is_a_mismatch_and_chatter_is_harmless() {
    // The manifest of the correct output, written by the real pseudoXOF-256.
    let tmp = tempfile::tempdir().unwrap();
    let manifest = tmp.path().join("pseudoxof-256.sha256");
    let o = kat(
        &[
            "pseudoXOF-256",
            "--out",
            path_str(&tmp.path().join("ref")),
            "--write-manifest",
            path_str(&manifest),
        ],
        None,
    );
    assert!(manifest.is_file(), "{}", stderr(&o));

    let (o, _out) = faulty_kat(Some("wrong@3"), Some(&manifest), &[]);
    let line = result(&o, 1);
    assert!(
        line.contains(" MISMATCH KAT_2_12_pseudoXOF-256.txt: sha256 "),
        "{line}"
    );
    assert!(line.contains(" != manifest "), "{line}");

    // Without a fault the fixture is pseudoXOF: printing to stdout does not disturb the worker.
    let (o, out) = faulty_kat(Some("stdout@4"), Some(&manifest), &[]);
    assert_eq!(result(&o, 0), "RESULT fixture pseudoXOF-256 PASS");
    assert_eq!(log(&out).matches("\nmanifest ").count(), 2);
}

#[test]
fn a_file_without_a_manifest_entry_is_nokat() {
    let tmp = tempfile::tempdir().unwrap();
    let manifest = tmp.path().join("other.sha256");
    std::fs::write(
        &manifest,
        format!("{} strict other/KAT_2_12_other.txt\n", "0".repeat(64)),
    )
    .unwrap();
    let (o, _out) = faulty_kat(None, Some(&manifest), &[]);
    let line = result(&o, 2);
    assert!(
        line.contains(" NOKAT KAT_2_12_pseudoXOF-256.txt: no manifest entry"),
        "{line}"
    );
}

#[test]
fn a_text_file_is_a_loadfail() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = tmp.path().join("libx.so");
    std::fs::write(&lib, "this is not a shared object\n").unwrap();
    let o = kat(
        &[
            "--lib",
            path_str(&lib),
            "--digest-bits",
            "256",
            "--out",
            path_str(&tmp.path().join("run")),
        ],
        None,
    );
    let line = result(&o, 5);
    assert!(
        line.starts_with("RESULT adhoc x LOADFAIL library "),
        "{line}"
    );
    assert!(line.contains("not an ELF"), "{line}");
    let log = log_of(&tmp.path().join("run"), "adhoc", "x");
    assert!(log.starts_with("library     = libx.so\n"), "{log}");
}
