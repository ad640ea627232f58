//! One library for the whole run (issue 30, item 6), through the real binary: a run of an
//! honest fixture (`tests/fixtures/hostile/proof_honest.c`) whose file is replaced by a
//! constant-answer one (`swap_constant.c`) the moment its KAT verdict is printed — renamed over
//! it, or copied over it in place — measures and hashes the bytes it read at its start in every
//! record, and `validate` passes; a record whose library hash is not `build.json`'s fails
//! `validate`, which names both hashes. Words, hashes and statuses are asserted, and one
//! figure only where noise cannot reach: a call that reads 1 KiB does not take a few nanoseconds.

mod common;
use common::hostile as support;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use sha2::Digest;
use support::*;

const LABEL: &str = "onelib";

/// How the library is replaced once its KAT verdict is out.
#[derive(Clone, Copy)]
enum Swap {
    /// A new file renamed over the path (a new inode).
    Rename,
    /// The same file overwritten in place, as `cp` does (same inode, new bytes).
    Overwrite,
}

fn sha256_hex(path: &Path) -> String {
    hex::encode(sha2::Sha256::digest(std::fs::read(path).unwrap()))
}

fn records(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(records(&p));
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Runs the honest fixture at three lengths, replacing its file by `swap` as soon as the KAT
/// line is on stderr; returns the run folder, the original hash and the run's stderr.
fn run_with_swap(tmp: &Path, swap: Swap) -> (PathBuf, String, String) {
    let lib = build_fixture("proof_honest", tmp);
    let wrong_dir = tmp.join("wrong");
    std::fs::create_dir_all(&wrong_dir).unwrap();
    let wrong = build_fixture("swap_constant", &wrong_dir);
    let original = sha256_hex(&lib);
    assert_ne!(original, sha256_hex(&wrong));
    let out = tmp.join("run");
    // Named from the run's folder: the records then carry no absolute path for `validate`.
    let mut args = labelled_run(
        "libproof_honest.so",
        LABEL,
        "run",
        &["--no-baselines", "--no-reference-jobs"],
    );
    let at = args.iter().position(|a| *a == "--lengths").unwrap();
    args[at + 1] = "64,256,1024";
    let m = marker("one-library");
    let _sweep = Sweep(m.clone());
    let mut child = command(&args, &m, &[])
        .current_dir(tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cyclescope starts");
    let mut stderr = child.stderr.take().unwrap();
    let wrong_hash = sha256_hex(&wrong);
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        let mut swapped = false;
        loop {
            let n = match stderr.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            seen.extend_from_slice(&buf[..n]);
            // The verdict line, `KAT onelib: <status> …` (progress lines have no colon).
            if !swapped && String::from_utf8_lossy(&seen).contains(&format!("KAT {LABEL}: ")) {
                match swap {
                    Swap::Rename => {
                        let next = lib.with_extension("next");
                        std::fs::copy(&wrong, &next).unwrap();
                        std::fs::rename(&next, &lib).unwrap();
                    }
                    Swap::Overwrite => {
                        let o = std::process::Command::new("cp")
                            .arg(&wrong)
                            .arg(&lib)
                            .output()
                            .unwrap();
                        assert!(o.status.success(), "{o:?}");
                    }
                }
                swapped = true;
            }
        }
        (String::from_utf8_lossy(&seen).into_owned(), swapped, lib)
    });
    let queue: u64 = common::SUITE_LOCK_WAIT_S.parse().unwrap();
    let status = wait_bounded(&mut child, Duration::from_secs(queue + 300));
    let (text, swapped, lib) = reader.join().unwrap();
    assert!(swapped, "no KAT verdict line on stderr:\n{text}");
    // The swap happened: the path now holds the constant library.
    assert_eq!(sha256_hex(&lib), wrong_hash, "{text}");
    assert!(status.success(), "status {status:?}\n{text}");
    assert_none_left(&m);
    (out, original, text)
}

/// Every record: complete, the original bytes' hash, an honest figure at 1 KiB.
fn assert_original_everywhere(out: &Path, original: &str, text: &str) {
    let recs = records(&out.join("records"));
    assert_eq!(recs.len(), 3, "{recs:?}\n{text}");
    for r in &recs {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(r).unwrap()).unwrap();
        assert_eq!(v["library_sha256"], original, "{}: {v}", r.display());
        assert_eq!(v["status"], "complete", "{}: {v}\n{text}", r.display());
        assert!(v["cyclescope"]["failure"].is_null(), "{v}");
    }
    assert!(!text.contains("CRYPTOFAIL"), "{text}");
    let build: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("build.json")).unwrap()).unwrap();
    let entry = build["instances"]
        .as_object()
        .and_then(|i| i.values().next())
        .cloned()
        .unwrap_or_default();
    assert_eq!(entry["library_sha256"], original, "{build}");
    let o = common::cyclescope()
        .args(["validate", path_str(out)])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::output_text(&o));
}

/// The mean seconds a call of the record at `bytes`.
fn mean_seconds_at(out: &Path, bytes: u64) -> f64 {
    records(&out.join("records"))
        .iter()
        .find_map(|r| {
            let v: serde_json::Value = serde_json::from_slice(&std::fs::read(r).ok()?).ok()?;
            (v["input_bytes"].as_u64() == Some(bytes))
                .then(|| v["mean_seconds"].as_f64())
                .flatten()
        })
        .unwrap_or_else(|| panic!("no mean_seconds in the {bytes}-byte record"))
}

#[test]
fn a_library_renamed_over_after_its_kat_is_not_what_the_run_measures() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, original, text) = run_with_swap(tmp.path(), Swap::Rename);
    assert_original_everywhere(&out, &original, &text);
    // About ten cycles a byte read, microseconds a call: the constant library answers in a
    // few nanoseconds, which no noise turns into a tenth of a microsecond.
    let s = mean_seconds_at(&out, 1024);
    assert!(s > 1e-7, "{s} s a call at 1 KiB\n{text}");
}

#[test]
fn a_library_overwritten_in_place_after_its_kat_is_not_what_the_run_measures() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, original, text) = run_with_swap(tmp.path(), Swap::Overwrite);
    assert_original_everywhere(&out, &original, &text);
}

#[test]
fn validate_names_both_hashes_when_a_record_is_not_of_the_kat_checked_library() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = build_fixture("proof_honest", tmp.path());
    assert!(lib.ends_with("libproof_honest.so"));
    let out = tmp.path().join("run");
    let args = labelled_run(
        "libproof_honest.so",
        LABEL,
        "run",
        &["--no-baselines", "--no-reference-jobs"],
    );
    let m = marker("one-library-validate");
    let _sweep = Sweep(m.clone());
    let queue: u64 = common::SUITE_LOCK_WAIT_S.parse().unwrap();
    let started = Instant::now();
    let mut cmd = command(&args, &m, &[]);
    cmd.current_dir(tmp.path());
    let (o, _) = run_bounded(cmd, Duration::from_secs(queue + 300));
    assert!(o.status.success(), "{}", text(&o));
    assert!(started.elapsed() < Duration::from_secs(queue + 300));
    let recs = records(&out.join("records"));
    assert_eq!(recs.len(), 1);
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&recs[0]).unwrap()).unwrap();
    let original = v["library_sha256"].as_str().unwrap().to_string();
    let forged = "0".repeat(64);
    v["library_sha256"] = serde_json::Value::String(forged.clone());
    std::fs::write(&recs[0], serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    let o = common::cyclescope()
        .args(["validate", path_str(&out)])
        .output()
        .unwrap();
    let said = common::output_text(&o);
    assert!(!o.status.success(), "{said}");
    assert!(said.contains(&forged) && said.contains(&original), "{said}");
    assert!(said.contains("library_sha256"), "{said}");
}
