//! The SUPERCOP ABI through the real binary, on a C fixture built at test time that exports the
//! same toy hash as `CryptHash` and as `crypto_hash`: both ABIs give the same digests, both are
//! measured by the same engine, and `supercop-checksum` equals what an independent C program
//! (our own code of the try.c procedure, linked straight to the fixture) prints.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::output_text;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/supercop")
        .join(name)
}

fn library(dir: &Path) -> PathBuf {
    let source = std::fs::read_to_string(fixture("twoabi.c")).unwrap();
    common::cc::build_library(dir, "twoabi", &source)
}

fn cyclescope(dir: &Path, args: &[&str]) -> std::process::Output {
    common::cyclescope_in(dir, args)
}

fn lib_args<'a>(lib: &'a Path, abi: &'a str) -> Vec<&'a str> {
    vec![
        "--lib",
        lib.to_str().unwrap(),
        "--abi",
        abi,
        "--digest-bits",
        "256",
    ]
}

#[test]
fn both_abis_give_the_same_digests() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = library(tmp.path());
    let long = "a5".repeat(300);
    for hex in ["", "616263", long.as_str()] {
        let digests: Vec<String> = ["iccs", "supercop"]
            .iter()
            .map(|abi| {
                let mut args = vec!["hash"];
                args.extend(lib_args(&lib, abi));
                args.extend(["--hex", hex]);
                let o = cyclescope(tmp.path(), &args);
                assert!(o.status.success(), "{}", output_text(&o));
                String::from_utf8_lossy(&o.stdout).trim().to_string()
            })
            .collect();
        assert_eq!(digests[0].len(), 64, "{digests:?}");
        assert_eq!(digests[0], digests[1], "message {hex}");
    }
    // A message ending mid-byte has no SUPERCOP form: refused, not rounded.
    let mut args = vec!["hash"];
    args.extend(lib_args(&lib, "supercop"));
    args.extend(["--hex", "ff", "--bits", "3"]);
    let o = cyclescope(tmp.path(), &args);
    assert!(!o.status.success(), "{}", output_text(&o));
    assert!(output_text(&o).contains("-100"), "{}", output_text(&o));
}

#[test]
fn a_library_without_the_symbol_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let only_iccs = common::cc::build_library(
        tmp.path(),
        "onlyiccs",
        &common::cc::candidate_source("hash-99", "onlyiccs-256", 256, "", ""),
    );
    let mut args = vec!["list"];
    args.extend(lib_args(&only_iccs, "supercop"));
    let o = cyclescope(tmp.path(), &args);
    assert!(
        output_text(&o).contains("has no symbol crypto_hash"),
        "{}",
        output_text(&o)
    );
}

#[test]
fn the_checksums_match_an_independent_c_program() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = library(tmp.path());
    let checker = tmp.path().join("checker");
    let o = Command::new("cc")
        .args(["-O1", "-o"])
        .arg(&checker)
        .arg(fixture("checksum.c"))
        .arg(fixture("twoabi.c"))
        .output()
        .expect("cc builds the checker");
    assert!(o.status.success(), "{}", output_text(&o));
    let o = Command::new(&checker).output().unwrap();
    assert!(o.status.success());
    let expected: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(expected.len(), 2);
    for abi in ["supercop", "iccs"] {
        let mut args = vec!["supercop-checksum"];
        args.extend(lib_args(&lib, abi));
        let o = cyclescope(tmp.path(), &args);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{}", output_text(&o));
        assert!(
            out.contains(&format!("twoabi [{abi}] checksumsmall {}", expected[0]))
                && out.contains(&format!("twoabi [{abi}] checksumbig   {}", expected[1])),
            "{abi}: {out}\nexpected {expected:?}"
        );
    }
    // A published value that differs is shown and fails the command.
    let mut args = vec!["supercop-checksum"];
    args.extend(lib_args(&lib, "supercop"));
    let wrong = "0".repeat(64);
    args.extend([
        "--expect-small",
        expected[0].as_str(),
        "--expect-big",
        &wrong,
    ]);
    let o = cyclescope(tmp.path(), &args);
    let out = output_text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("(matches)") && out.contains("(MISMATCH: expected 000"),
        "{out}"
    );
}

#[test]
fn both_abis_are_measured_by_the_engine_and_the_record_says_which() {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let lib = library(tmp.path());
    for abi in ["iccs", "supercop"] {
        let out = tmp.path().join(format!("run-{abi}"));
        let mut args = vec!["run"];
        args.extend(lib_args(&lib, abi));
        args.extend([
            "--lengths",
            "64",
            "--trials",
            "2",
            "--trial-target",
            "0.01",
            "--allow-unfixed-host",
            "--allow-kat-fail",
            "--out",
            out.to_str().unwrap(),
        ]);
        let o = cyclescope(tmp.path(), &args);
        assert!(o.status.success(), "{}", output_text(&o));
        let rec: serde_json::Value = serde_json::from_slice(
            &std::fs::read(out.join("records/adhoc/twoabi__hash_64.json")).unwrap(),
        )
        .unwrap();
        assert!(rec["mean_cycles"].as_f64().unwrap() > 0.0, "{rec:#}");
        let recorded = &rec["cyclescope"]["abi"];
        match abi {
            "supercop" => assert_eq!(recorded, "supercop"),
            _ => assert!(recorded.is_null(), "ICCS records stay as they were"),
        }
        let v = cyclescope(tmp.path(), &["validate", out.to_str().unwrap()]);
        assert!(v.status.success(), "{}", output_text(&v));
    }
    let mut args = vec!["list"];
    args.extend(lib_args(&lib, "supercop"));
    let o = cyclescope(tmp.path(), &args);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", output_text(&o));
    assert!(
        out.lines()
            .any(|l| l.contains("twoabi") && l.contains("supercop")),
        "{out}"
    );
}
