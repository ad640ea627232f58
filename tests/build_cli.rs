//! `cyclescope build` on the fixture submission trees, through the real binary, the real C
//! compiler and real `dlopen`: the good tree builds all four instances into an ngcc-harness
//! tree whose build.json carries the harness's fields, every library passes its KAT against
//! the manifest made from the shipped KAT files (also through `kat --scan`), the digests are
//! the known ones, and a second build comes from the cache.

mod common;

use common::build::{build_json, cyclescope, stdout, submissions};
use common::output_text;

const FIXH_256_ABC: &str = "fba97b7e5dd3eebfb54ba62c83128e565d2c4a8d0a5c3be4b66b73a85cd0a7af";
const FIXH_256_EMPTY: &str = "d46203df109a76c5ea47b8a255f7b856c37d2d2179399e22cea857240aa9b979";
const FIXH_512_ABC: &str = "e4841a6b736f704b76913a776406c931c7f87bf9c90d6eaf55cdec81667b08098806bc6713377b82a076845a6f23ab6244ab4c6cab4614789e4554ff8a880841";

#[test]
fn the_good_tree_builds_passes_its_kat_and_is_cached() {
    let work = tempfile::tempdir().unwrap();
    let src = submissions().join("fixhash");
    let src = src.to_str().unwrap();
    let o = cyclescope(
        work.path(),
        &["build", src, "--id", "hash-99", "--out", "T"],
    );
    let text = output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(stdout(&o).contains("4 built, 0 cached, 0 failed"), "{text}");
    for label in ["FIXH-256", "FIXH-512", "FIXH-256-opt", "FIXH-512-opt"] {
        // The verdict ends its line: no trailing space after a PASS without detail.
        assert!(
            stdout(&o)
                .lines()
                .any(|l| l == format!("KAT    {label} PASS")),
            "{text}"
        );
        assert!(
            work.path()
                .join(format!("T/hash-99/lib/lib{label}.so"))
                .is_file(),
            "{label}"
        );
    }
    let json = build_json(&work.path().join("T"));
    let e = &json["instances"]["hash-99/FIXH-512-opt"];
    assert_eq!(e["candidate"], "hash-99");
    assert_eq!(e["instance"], "FIXH-512");
    assert_eq!(e["variant"], "optimized");
    assert_eq!(e["flags"], "guide");
    assert_eq!(e["kat"], "PASS");
    assert_eq!(e["library"], "hash-99/lib/libFIXH-512-opt.so");
    assert!(e["compiler"].as_str().unwrap().starts_with("gcc "), "{e}");
    assert!(
        e["build_flags"]
            .as_str()
            .unwrap()
            .starts_with("-std=c99 -Wpedantic")
    );
    assert!(e["elf_load_bytes"].as_u64().unwrap() > 1000, "{e}");
    let lib = std::fs::read(work.path().join("T/hash-99/lib/libFIXH-512-opt.so")).unwrap();
    assert_eq!(e["library_sha256"], sha256_hex(&lib));
    let log = std::fs::read(work.path().join("T").join(e["kat_log"].as_str().unwrap())).unwrap();
    assert_eq!(e["kat_log_sha256"], sha256_hex(&log));
    assert!(String::from_utf8_lossy(&log).ends_with("RESULT hash-99 FIXH-512 PASS \n"));

    // The metadata shim, read through dlopen in a worker: the harness's fields, and the
    // untruncated flags from ngcc_build_flags.
    let o = cyclescope(work.path(), &["list", "--scan", "T", "--json"]);
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == "FIXH-512-opt")
        .unwrap_or_else(|| panic!("{}", output_text(&o)));
    let meta = &row["meta"];
    assert_eq!(meta["id"], "hash-99");
    assert_eq!(meta["instance"], "FIXH-512");
    assert_eq!(meta["variant"], "Optimized_Implementation");
    assert_eq!(
        meta["source_dir"],
        "fixhash/Optimized_Implementation/FIXH-512"
    );
    assert_eq!(meta["digest_bits"], 512);
    assert_eq!(meta["build_flags"], e["build_flags"]);
    assert!(meta["build_flags"].as_str().unwrap().len() > 127);
    assert_eq!(row["variant"], "optimized");

    let o = cyclescope(work.path(), &["kat", "--scan", "T", "--out", "K"]);
    let text = output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert_eq!(stdout(&o).matches(" PASS\n").count(), 4, "{text}");

    for (label, hex, bits, want) in [
        ("FIXH-256", "616263", None, FIXH_256_ABC),
        ("FIXH-256-opt", "616263", None, FIXH_256_ABC),
        ("FIXH-256-opt", "", None, FIXH_256_EMPTY),
        ("FIXH-512", "616263", None, FIXH_512_ABC),
        ("FIXH-512-opt", "616263", Some("24"), FIXH_512_ABC),
    ] {
        let mut args = vec!["hash", label, "--scan", "T", "--hex", hex];
        if let Some(b) = bits {
            args.extend(["--bits", b]);
        }
        let o = cyclescope(work.path(), &args);
        assert_eq!(stdout(&o).trim(), want, "{label}: {}", output_text(&o));
    }

    // Unchanged sources, compiler and flags: nothing is compiled again.
    let o = cyclescope(
        work.path(),
        &["build", src, "--id", "hash-99", "--out", "T2", "--no-kat"],
    );
    let text = output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(stdout(&o).contains("0 built, 4 cached, 0 failed"), "{text}");
    let again = std::fs::read(work.path().join("T2/hash-99/lib/libFIXH-512-opt.so")).unwrap();
    assert_eq!(again, lib);
}

#[test]
fn other_flags_are_other_builds() {
    let work = tempfile::tempdir().unwrap();
    let src = submissions().join("fixhash");
    let src = src.to_str().unwrap();
    let build = |out: &str, extra: &[&str]| {
        let mut args = vec!["build", src, "--id", "hash-99", "--out", out, "--no-kat"];
        args.extend(extra);
        cyclescope(work.path(), &args)
    };
    let o = build("A", &[]);
    assert!(
        stdout(&o).contains("4 built, 0 cached"),
        "{}",
        output_text(&o)
    );
    // Different flags: a different key, compiled again, and recorded as such.
    let o = build("B", &["--cflags", "-O1 -DFIXH_UNUSED=1"]);
    assert!(
        stdout(&o).contains("4 built, 0 cached"),
        "{}",
        output_text(&o)
    );
    let e = &build_json(&work.path().join("B"))["instances"]["hash-99/FIXH-256"];
    assert_eq!(e["flags"], "cflags");
    assert_eq!(e["build_flags"], "-O1 -DFIXH_UNUSED=1 -fPIC");
    let o = build("C", &["--profile", "harness-default"]);
    assert!(
        stdout(&o).contains("4 built, 0 cached"),
        "{}",
        output_text(&o)
    );
    let o = build("D", &["--cflags", "-O1 -DFIXH_UNUSED=1"]);
    assert!(
        stdout(&o).contains("0 built, 4 cached"),
        "{}",
        output_text(&o)
    );
    let o = build("E", &["--profile", "fastest"]);
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("unknown flag profile \"fastest\" (known: guide, harness-default)"),
        "{}",
        output_text(&o)
    );
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// Copies `from` into `to` (a small fixture tree), leaving out files named `KAT_*`.
fn copy_without_kat_files(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (path, name) = (e.path(), e.file_name());
        if path.is_dir() {
            copy_without_kat_files(&path, &to.join(&name));
        } else if !name.to_string_lossy().starts_with("KAT_") {
            std::fs::copy(&path, to.join(&name)).unwrap();
        }
    }
}

#[test]
fn a_submission_without_kat_files_warns_loudly_and_takes_a_given_manifest() {
    let work = tempfile::tempdir().unwrap();
    let src = work.path().join("nokat");
    copy_without_kat_files(&submissions().join("fixhash"), &src);
    let o = cyclescope(
        work.path(),
        &[
            "build",
            src.to_str().unwrap(),
            "--id",
            "hash-98",
            "--out",
            "T",
            "--no-kat",
        ],
    );
    let text = output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    let err = String::from_utf8_lossy(&o.stderr);
    for label in ["FIXH-256", "FIXH-512"] {
        let warning = err
            .lines()
            .find(|l| l.contains(&format!("WARNING: {label} ships no KAT files")))
            .unwrap_or_else(|| panic!("no warning for {label}:\n{text}"));
        // The way out is named: the reference digests given by hand, either form.
        assert!(
            warning.contains("--manifest FILE") && warning.contains("--kat-dir DIR"),
            "{warning}"
        );
    }
    assert!(
        err.contains("T/hash-98/kat.sha256 has no line for it"),
        "{text}"
    );
}
