//! Instruction counts the candidate cannot steer: a correct FIXH-256 that switches callgrind's
//! collection off around its work with a valgrind client request
//! (`tests/fixtures/hostile/callgrind_toggle.c`) gets a named refusal from `run --counter
//! instructions` and from `profile`, never a small count; the same hash without the requests
//! (`tests/fixtures/conform/honest.c`) counts as before. Built plain, the request sits in the
//! library's code and is refused before valgrind runs it; built to write it at run time, only
//! callgrind's executed-versus-collected figures can tell. Exact counts under the real
//! valgrind: nothing here depends on a quiet machine. The requests are amd64 code, so the
//! refusals are checked on x86-64 only.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

/// Builds `source` (a fixture file) with the FIXH-256 reference sources into an ngcc-harness
/// tree under `dir`, beside the FIXH KAT manifest; returns the library.
fn fixh_library(dir: &Path, source: &Path, defines: &[&str]) -> PathBuf {
    let conform = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conform");
    let fixh = common::build::submissions().join("fixhash/Reference_Implementation/FIXH-256");
    let lib_dir = dir.join("tree/hash-90/lib");
    std::fs::create_dir_all(&lib_dir).unwrap();
    std::fs::copy(
        conform.join("kat.sha256"),
        dir.join("tree/hash-90/kat.sha256"),
    )
    .unwrap();
    let lib = lib_dir.join("libfixh.so");
    let out = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-O1"])
        .args(defines)
        .arg("-I")
        .arg(&conform)
        .arg("-I")
        .arg(&fixh)
        .arg("-o")
        .arg(&lib)
        .arg(source)
        .arg(fixh.join("fixh.c"))
        .output()
        .unwrap_or_else(|e| panic!("this test builds C fixtures and needs `cc`: {e}"));
    assert!(
        out.status.success(),
        "cc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    lib
}

#[cfg(target_arch = "x86_64")]
fn toggle_source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile/callgrind_toggle.c")
}

fn in_dir(dir: &Path, args: &[&str]) -> Output {
    common::cyclescope()
        .args(args)
        .current_dir(dir)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .output()
        .expect("running cyclescope")
}

/// `run --counter instructions` of the tree under `dir` at 64 B; its output and record.
fn count(dir: &Path) -> (Output, Value) {
    let o = in_dir(
        dir,
        &[
            "run",
            "--scan",
            "tree",
            "--counter",
            "instructions",
            "--allow-unfixed-host",
            "--no-baselines",
            "--lengths",
            "64",
            "--out",
            "run",
        ],
    );
    let p = dir.join("run/records/hash-90/fixh__hash_64.json");
    let record = std::fs::read(&p)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null);
    (o, record)
}

#[cfg(target_arch = "x86_64")]
fn profile(dir: &Path, lib: &Path) -> Output {
    in_dir(
        dir,
        &[
            "profile",
            "--lib",
            lib.to_str().unwrap(),
            "--no-baselines",
            "--length",
            "64",
            "--calls",
            "3",
        ],
    )
}

/// The refusal is in the output and the record, and no count is.
#[cfg(target_arch = "x86_64")]
fn assert_refused(o: &Output, record: &Value, words: &str) {
    let all = common::output_text(o);
    assert!(!o.status.success(), "{all}");
    assert!(all.contains(words), "no {words:?} in:\n{all}");
    // The reference job's count is printed; the candidate's line is its refusal.
    assert!(
        all.lines()
            .any(|l| l.starts_with("FAILED fixh @ 64 B: ") && l.contains(words)),
        "{all}"
    );
    assert!(
        !all.lines()
            .any(|l| l.contains("fixh") && l.contains("instr/call")),
        "a count was printed:\n{all}"
    );
    assert_ne!(record["status"], "complete", "{record}");
    assert!(record["cyclescope"]["instructions"].is_null(), "{record}");
    assert!(
        record["cyclescope"]["failure"]
            .as_str()
            .is_some_and(|f| f.contains(words)),
        "{record}"
    );
}

#[test]
fn the_same_hash_without_requests_still_counts() {
    let t = tempfile::tempdir().unwrap();
    let honest = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conform/honest.c");
    fixh_library(t.path(), &honest, &[]);
    let (o, r) = count(t.path());
    assert!(o.status.success(), "{}", common::output_text(&o));
    assert_eq!(r["status"], "complete", "{r}");
    let ir = r["cyclescope"]["instructions"]["instructions"]
        .as_u64()
        .unwrap();
    // FIXH-256 at 64 B is thousands of instructions a call, not a toggling library's dozens.
    assert!(ir / 3 > 1000, "{r}");
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_library_carrying_client_requests_is_refused_by_name_before_it_runs() {
    let t = tempfile::tempdir().unwrap();
    let lib = fixh_library(t.path(), &toggle_source(), &[]);
    let (o, r) = count(t.path());
    assert_refused(&o, &r, "contains valgrind client requests at offset 0x");
    let p = profile(t.path(), &lib);
    let all = common::output_text(&p);
    assert!(!p.status.success(), "{all}");
    assert!(
        all.contains("contains valgrind client requests at offset 0x"),
        "{all}"
    );
    assert!(!all.contains("instructions per call"), "{all}");
}

#[cfg(target_arch = "x86_64")]
#[test]
fn requests_written_at_run_time_are_refused_from_what_callgrind_saw() {
    let t = tempfile::tempdir().unwrap();
    let lib = fixh_library(t.path(), &toggle_source(), &["-DTOGGLE_AT_RUN_TIME"]);
    let (o, r) = count(t.path());
    assert_refused(
        &o,
        &r,
        "the library issued valgrind client requests that change what callgrind collects",
    );
    assert!(
        r["cyclescope"]["failure"]
            .as_str()
            .is_some_and(|f| f.starts_with("TAMPERED: ")),
        "{r}"
    );
    let p = profile(t.path(), &lib);
    let all = common::output_text(&p);
    assert!(!p.status.success(), "{all}");
    assert!(
        all.contains("valgrind client requests that change what callgrind collects"),
        "{all}"
    );
    assert!(!all.contains("instructions per call"), "{all}");
}
