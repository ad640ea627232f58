//! Names are not paths: a library's own `ngcc_meta`, `--label`, a config and a folder scan all
//! name files (records, KAT logs, KAT text). A C library built here names itself `../../x`;
//! whatever command is pointed at it, nothing may be written outside the run directory and the
//! refusal must name the offending field. Published ids and labels all pass the same rule.

mod common;

use std::path::{Path, PathBuf};

use cyclescope_core::name::SafeName;

use common::{cyclescope_in as cyclescope, output_text as text};

/// Every file below `dir`, relative to it.
fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_library_naming_itself_dot_dot_writes_nothing_outside_the_run() {
    let t = tempfile::tempdir().unwrap();
    let libdir = t.path().join("lib");
    std::fs::create_dir(&libdir).unwrap();
    let source = common::cc::candidate_source("../../x", "../../x", 256, "", "");
    let lib = common::cc::build_library(&libdir, "evil256", &source);
    let lib = lib.to_str().unwrap();
    let work = t.path().join("a/b/c");
    std::fs::create_dir_all(&work).unwrap();

    let list = cyclescope(&work, &["list", "--lib", lib]);
    assert!(!list.status.success(), "{}", text(&list));
    assert!(
        text(&list).contains("ngcc_meta id \"../../x\" starts with '.'"),
        "{}",
        text(&list)
    );

    let kat = cyclescope(&work, &["kat", "--lib", lib, "--out", "katrun"]);
    assert_eq!(kat.status.code(), Some(5), "LOADFAIL: {}", text(&kat));
    assert!(text(&kat).contains("LOADFAIL"), "{}", text(&kat));
    assert!(
        text(&kat).contains("ngcc_meta id \"../../x\""),
        "{}",
        text(&kat)
    );

    let run = cyclescope(
        &work,
        &[
            "run",
            "--lib",
            lib,
            "--out",
            "run",
            "--lengths",
            "32",
            "--trial-target",
            "0.01",
            "--allow-unfixed-host",
        ],
    );
    assert!(!run.status.success(), "{}", text(&run));
    assert!(
        text(&run).contains("ngcc_meta id \"../../x\""),
        "{}",
        text(&run)
    );

    // Only the library, its source and what lies inside the two run directories.
    for f in files_below(t.path()) {
        assert!(
            f.starts_with("lib") || f.starts_with("a/b/c/katrun") || f.starts_with("a/b/c/run"),
            "written outside the run directory: {}",
            f.display()
        );
    }
    // And inside the KAT run, under the fallback names only.
    for f in files_below(&work.join("katrun")) {
        let s = f.display().to_string();
        assert!(!s.contains("..") && !s.contains('x'), "{s}");
    }
}

#[test]
fn labels_from_the_command_line_and_configs_are_names_too() {
    let t = tempfile::tempdir().unwrap();
    let good = cyclescope_core::catalog::bundled_library("pseudoxof");
    let good = good.to_str().unwrap();
    let long = "a".repeat(300);
    for (label, needle) in [
        ("../../y", "\"../../y\" starts with '.'"),
        ("/tmp/abs512", "contains '/'"),
        (long.as_str(), "300 characters long (at most 64)"),
    ] {
        let o = cyclescope(
            t.path(),
            &[
                "kat",
                "--lib",
                good,
                "--label",
                label,
                "--digest-bits",
                "512",
                "--out",
                "k",
            ],
        );
        assert!(!o.status.success(), "{label}: {}", text(&o));
        assert!(text(&o).contains(needle), "{label}: {}", text(&o));
        let o = cyclescope(
            t.path(),
            &[
                "hash",
                "--lib",
                good,
                "--label",
                label,
                "--digest-bits",
                "512",
                "--hex",
                "00",
            ],
        );
        assert!(!o.status.success(), "{label}: {}", text(&o));
        assert!(text(&o).contains(needle), "{label}: {}", text(&o));
    }
    assert!(files_below(t.path()).iter().all(|f| f.starts_with("k")));

    let cfg = t.path().join("c.toml");
    std::fs::write(
        &cfg,
        format!(
            "[[candidate]]\nid = \"x\"\nalgorithm = \"X\"\n[[candidate.instance]]\nlabel = \"../../z\"\nlibrary = \"{good}\"\ndigest_bits = 512\n"
        ),
    )
    .unwrap();
    let o = cyclescope(t.path(), &["list", "--config", cfg.to_str().unwrap()]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("instance label \"../../z\""),
        "{}",
        text(&o)
    );
}

#[test]
fn a_scan_refuses_the_hostile_metadata_and_says_why() {
    let t = tempfile::tempdir().unwrap();
    let source = common::cc::candidate_source("hash-99", "../../x", 256, "", "");
    common::cc::build_library(t.path(), "evil256", &source);
    let o = cyclescope(t.path(), &["list", "--scan", "."]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("ngcc_meta instance \"../../x\" starts with '.'"),
        "{}",
        text(&o)
    );
}

#[test]
fn every_published_id_and_label_is_a_safe_name() {
    let mut names = std::collections::BTreeSet::new();
    let data = common::harness_data();
    let mut stack = vec![data.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "build.json") {
                let b: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
                for key in b["instances"].as_object().unwrap().keys() {
                    names.extend(key.split('/').map(str::to_string));
                }
            } else if p.file_name().is_some_and(|n| n == "kat.sha256") {
                // `<sha256> [mode] <label>/<file>`: the label part.
                for line in std::fs::read_to_string(&p).unwrap().lines() {
                    if let Some(name) = line
                        .split_whitespace()
                        .last()
                        .and_then(|n| n.split('/').next())
                    {
                        names.insert(name.to_string());
                    }
                }
            } else if p.extension().is_some_and(|x| x == "json")
                && p.components().any(|c| c.as_os_str() == "records")
            {
                let r: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
                for k in ["candidate", "label", "instance"] {
                    names.insert(r[k].as_str().unwrap().to_string());
                }
            }
        }
    }
    assert!(
        names.len() > 300,
        "the published names were found: {}",
        names.len()
    );
    for n in &names {
        SafeName::new("published name", n).unwrap_or_else(|e| panic!("{e}"));
    }
}
