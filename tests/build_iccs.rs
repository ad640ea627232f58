//! The C baseline `iccs-c`: `cyclescope build --iccs-api DIR` compiles the API folder's
//! `auxfunc.c` (here our own stand-in, tests/fixtures/iccs-api, not the official file) with a
//! generated `CryptHash` wrapper per baseline label, and every instance passes the KAT against
//! the bundled `kat/iccs` manifest; with `[build] iccs_api` in the config, `iccs-c` is a normal
//! catalog candidate next to the bundled `iccs`, named `iccs-c/<label>`.

mod common;

use common::build::*;
use common::output_text;

#[test]
fn the_c_helpers_build_and_pass_the_bundled_manifest() {
    let work = tempfile::tempdir().unwrap();
    let api = iccs_api();
    let o = cyclescope(
        work.path(),
        &["build", "--iccs-api", api.to_str().unwrap(), "--out", "T"],
    );
    let text = output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(
        stdout(&o).contains("12 built, 0 cached, 0 failed"),
        "{text}"
    );
    // One verdict line per instance, the verdict ending it (no trailing space).
    let passed = stdout(&o)
        .lines()
        .filter(|l| l.starts_with("KAT ") && l.ends_with(" PASS"))
        .count();
    assert_eq!(passed, 12, "{text}");
    let json = build_json(&work.path().join("T"));
    let e = &json["instances"]["iccs-c/pseudoXOF-512"];
    assert_eq!(e["variant"], "iccs-baseline");
    assert_eq!(e["kat"], "PASS");
    assert_eq!(e["source_dir"], "iccs-api/auxfunc.c");
    let manifest = std::fs::read_to_string(work.path().join("T/iccs-c/kat.sha256")).unwrap();
    assert_eq!(manifest.lines().count(), 48, "{manifest}");

    // Same digests as the bundled Rust baseline, also for a message ending mid-byte.
    for label in ["sm3hash-256", "pseudohash-1024", "pseudoXOF-1280"] {
        let c = cyclescope(
            work.path(),
            &[
                "hash",
                label,
                "--scan",
                "T",
                "--hex",
                "a1b2c3d4e5",
                "--bits",
                "37",
            ],
        );
        let rust = cyclescope(
            work.path(),
            &["hash", label, "--hex", "a1b2c3d4e5", "--bits", "37"],
        );
        assert_eq!(c.status.code(), Some(0), "{}", output_text(&c));
        assert_eq!(stdout(&c), stdout(&rust), "{label}");
    }
}

#[test]
fn a_configured_api_folder_makes_iccs_c_a_catalog_candidate() {
    let work = tempfile::tempdir().unwrap();
    let config = work.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[[candidate]]\nid = \"iccs\"\nalgorithm = \"ICCS hash helpers\"\n\
             [[candidate.instance]]\nlabel = \"pseudoXOF-512\"\nlibrary = \"bundled:pseudoxof\"\ndigest_bits = 512\n\
             [build]\niccs_api = {:?}\n",
            iccs_api().to_str().unwrap()
        ),
    )
    .unwrap();
    let o = cyclescope(work.path(), &["list"]);
    let text = output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(
        stdout(&o)
            .lines()
            .any(|l| l.starts_with("iccs-c ") && l.contains(" pseudoXOF-512 ")),
        "{text}"
    );
    assert!(stdout(&o).lines().any(|l| l.starts_with("iccs ")), "{text}");
    let c = cyclescope(
        work.path(),
        &["hash", "iccs-c/pseudoXOF-512", "--hex", "616263"],
    );
    let rust = cyclescope(work.path(), &["hash", "pseudoXOF-512", "--hex", "616263"]);
    assert_eq!(c.status.code(), Some(0), "{}", output_text(&c));
    assert_eq!(stdout(&c), stdout(&rust));
    let o = cyclescope(work.path(), &["kat", "iccs-c/pseudoXOF-512", "--out", "K"]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    assert!(
        stdout(&o).contains("RESULT iccs-c pseudoXOF-512 PASS"),
        "{}",
        output_text(&o)
    );
}

#[test]
fn the_c_helpers_stand_beside_an_ad_hoc_library_too() {
    // `[build] iccs_api` set, and an ad-hoc `--lib`: the C baseline is in the catalog beside
    // it (it was only beside a catalog file's instances), so `--baseline iccs-c` and the label
    // `iccs-c/pseudoXOF-512` reach it.
    let work = tempfile::tempdir().unwrap();
    std::fs::write(
        work.path().join("config.toml"),
        format!("[build]\niccs_api = {:?}\n", iccs_api().to_str().unwrap()),
    )
    .unwrap();
    let source = common::cc::candidate_source("hash-97", "ADHOC-512", 512, "", "");
    let lib = common::cc::build_library(work.path(), "ADHOC-512", &source);
    let o = cyclescope(work.path(), &["list", "--lib", lib.to_str().unwrap()]);
    let text = output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(
        stdout(&o)
            .lines()
            .any(|l| l.starts_with("iccs-c ") && l.contains(" pseudoXOF-512 ")),
        "{text}"
    );
    let o = cyclescope(
        work.path(),
        &["hash", "iccs-c/pseudoXOF-512", "--hex", "616263"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
}
