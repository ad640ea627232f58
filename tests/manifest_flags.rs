//! `--manifest FILE` wherever instances come from: an ad-hoc `--lib` library is no longer
//! NOKAT for want of a config. The manifest is made by `kat --write-manifest` from the
//! library's own output (a real KAT worker), then `list` shows it as the instance's manifest and
//! `run` checks the KAT against it before timing (its record says PASS).

mod common;

use serde_json::Value;

#[test]
fn run_and_list_take_a_manifest_for_an_ad_hoc_library() {
    let tmp = tempfile::tempdir().unwrap();
    let source = common::cc::candidate_source("hash-96", "MANI-256", 256, "", "");
    let lib = common::cc::build_library(tmp.path(), "MANI-256", &source);
    let lib = lib.to_str().unwrap();
    let manifest = tmp.path().join("kat.sha256");
    let m = manifest.to_str().unwrap();
    let o = common::cyclescope_in(
        tmp.path(),
        &["kat", "--lib", lib, "--out", "K", "--write-manifest", m],
    );
    assert!(manifest.is_file(), "{}", common::output_text(&o));

    let o = common::cyclescope_in(
        tmp.path(),
        &["list", "--lib", lib, "--manifest", m, "--json"],
    );
    let text = common::output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("kat.sha256"),
        "{text}"
    );

    let out = tmp.path().join("run");
    let mut args = common::quick_run(lib, out.to_str().unwrap(), false);
    args.extend(["--manifest", m]);
    let o = common::cyclescope_in(tmp.path(), &args);
    let text = common::output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    let record = out.join("records/hash-96/MANI-256__hash_32.json");
    let r: Value = serde_json::from_slice(&std::fs::read(&record).expect(&text)).unwrap();
    assert_eq!(r["kat"], "PASS", "{text}");

    // A manifest that is not there is named, before anything runs.
    let o = common::cyclescope_in(
        tmp.path(),
        &[
            "run",
            "--lib",
            lib,
            "--manifest",
            "missing.sha256",
            "--allow-unfixed-host",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(common::output_text(&o).contains("--manifest missing.sha256: no such file"));
}

/// A manifest that does not parse is refused at start by the workbench in the words and with
/// the exit status `kat` has for it: it never opens, so `K` cannot blame the library (LOADFAIL).
#[test]
fn the_workbench_refuses_a_malformed_manifest_as_kat_does() {
    let tmp = tempfile::tempdir().unwrap();
    let source = common::cc::candidate_source("hash-96", "MANI-256", 256, "", "");
    let lib = common::cc::build_library(tmp.path(), "MANI-256", &source);
    let lib = lib.to_str().unwrap();
    std::fs::write(tmp.path().join("bad.sha256"), "garbage\n").unwrap();

    let kat = common::cyclescope_in(
        tmp.path(),
        &[
            "kat",
            "--lib",
            lib,
            "--manifest",
            "bad.sha256",
            "--out",
            "K",
        ],
    );
    let kat_text = String::from_utf8_lossy(&kat.stderr).to_string();
    assert_eq!(kat.status.code(), Some(2), "{kat_text}");
    assert!(kat_text.contains("bad.sha256:1: "), "{kat_text}");

    let tui = common::cyclescope_in(tmp.path(), &["--lib", lib, "--manifest", "bad.sha256"]);
    let tui_text = String::from_utf8_lossy(&tui.stderr).to_string();
    assert_eq!(tui.status.code(), Some(2), "{tui_text}");
    // Refused for the manifest, not for the missing terminal the test gives it.
    assert!(!tui_text.contains("needs a terminal"), "{tui_text}");
    assert!(!tui_text.contains("LOADFAIL"), "{tui_text}");
    assert_eq!(tui_text.trim(), kat_text.trim());
}

/// `kat --lib` with a `--manifest` that is not there says so once (its fallback for a library
/// that does not load used to say it, then meet it again).
#[test]
fn kat_names_a_missing_manifest_once() {
    let tmp = tempfile::tempdir().unwrap();
    let source = common::cc::candidate_source("hash-96", "MANI-256", 256, "", "");
    let lib = common::cc::build_library(tmp.path(), "MANI-256", &source);
    let lib = lib.to_str().unwrap();
    let o = common::cyclescope_in(
        tmp.path(),
        &[
            "kat",
            "--lib",
            lib,
            "--manifest",
            "missing.sha256",
            "--out",
            "K",
        ],
    );
    let text = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert_eq!(
        text.matches("--manifest missing.sha256").count(),
        1,
        "{text}"
    );
}

/// A catalog's `kat_manifest` that does not parse reaches the KAT of `run`: the instance is
/// BADMANIFEST in the manifest's words, with the way on, and is not blamed as LOADFAIL.
#[test]
fn run_says_a_broken_catalog_manifest_is_badmanifest_not_loadfail() {
    let tmp = tempfile::tempdir().unwrap();
    let source = common::cc::candidate_source("hash-96", "MANI-256", 256, "", "");
    let lib = common::cc::build_library(tmp.path(), "MANI-256", &source);
    std::fs::write(tmp.path().join("bad.sha256"), "garbage\n").unwrap();
    let config = format!(
        "[settings]\ntrials = 2\ntrial_target_s = 0.01\n\n[[candidate]]\nid = \"hash-96\"\n\
         algorithm = \"MANI\"\nkat_manifest = \"bad.sha256\"\n\n[[candidate.instance]]\n\
         label = \"MANI-256\"\nlibrary = \"{}\"\ndigest_bits = 256\n",
        lib.display()
    );
    std::fs::write(tmp.path().join("config.toml"), config).unwrap();
    let o = common::cyclescope_in(
        tmp.path(),
        &[
            "run",
            "--no-baselines",
            "--lengths",
            "32",
            "--allow-unfixed-host",
            "--out",
            "R",
        ],
    );
    let text = common::output_text(&o);
    assert!(!text.contains("LOADFAIL"), "{text}");
    assert!(
        text.contains("KAT MANI-256: BADMANIFEST ") && text.contains("bad.sha256:1: "),
        "{text}"
    );
    assert!(
        text.contains("  BADMANIFEST: the KAT manifest cannot be read or does not parse"),
        "{text}"
    );
    assert!(
        text.contains("MANI-256 not measured: KAT BADMANIFEST"),
        "{text}"
    );

    // `kat` says it in the same words, then the same way on, as bad input (2).
    let o = common::cyclescope_in(tmp.path(), &["kat", "MANI-256", "--out", "K"]);
    let kat = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "{kat}");
    assert!(!kat.contains("LOADFAIL"), "{kat}");
    let words = kat
        .lines()
        .find_map(|l| l.strip_prefix("cyclescope: bad.sha256:1: "))
        .unwrap_or_else(|| panic!("the manifest's words:\n{kat}"));
    assert!(
        text.contains(&format!("bad.sha256:1: {words}")),
        "{text}\n{kat}"
    );
    assert!(
        kat.contains("\n  BADMANIFEST: the KAT manifest cannot be read or does not parse"),
        "{kat}"
    );
}
