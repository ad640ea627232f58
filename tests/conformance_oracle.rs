//! The checks against an oracle are the engine's, end to end through the real binary:
//! `tests/fixtures/conform/forge_differential/` turns `diverge/`'s Optimized build into one that
//! is wrong beyond 1 MiB and, wherever it shares a process with the conformance checks, writes
//! a `differential` pass with no digests (and `pass` for every check after it) on the protocol
//! channel. Until the engine ran these checks itself, each library of the pair loaded the other
//! into its own checks' worker, so the forger's code ran there too and both read PASS. Now each
//! library hashes the engine's messages in a trial worker of its own, and both fail
//! `differential` past 1 MiB.

mod common;

use std::path::{Path, PathBuf};

use serde_json::Value;

use common::conform::{evidence_bits, fixtures};

/// `diverge/` with the forging Optimized build in place, under `root`.
fn forged_tree(root: &Path) -> PathBuf {
    let tree = root.join("diverge");
    let copied = std::process::Command::new("cp")
        .arg("-r")
        .arg(fixtures().join("diverge"))
        .arg(&tree)
        .status()
        .expect("cp");
    assert!(copied.success());
    let opt = tree.join("Optimized_Implementation/FIXH-256");
    let forger = fixtures().join("forge_differential/CryptHash_AlgorithmInstance.c");
    std::fs::copy(forger, opt.join("CryptHash_AlgorithmInstance.c")).unwrap();
    let token_h = fixtures().join("../hostile/forge_token.h");
    std::fs::copy(token_h, opt.join("forge_token.h")).unwrap();
    tree
}

#[test]
fn a_differential_pass_forged_in_a_shared_process_does_not_stand() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let tree = forged_tree(dir);
    let out = dir.join("kat-run");
    let o = common::cyclescope()
        .args(["kat", "--json", "--no-baselines", "--out"])
        .arg(&out)
        .arg("--src")
        .arg(&tree)
        .current_dir(dir)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .output()
        .expect("running cyclescope");
    let text = common::output_text(&o);
    let objects: Vec<Value> = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("kat --json printed no JSON list ({e}):\n{text}"));
    assert_eq!(objects.len(), 2, "{text}");
    for obj in &objects {
        let c = obj["conformance"]
            .as_array()
            .and_then(|l| l.iter().find(|c| c["check"] == "differential"))
            .unwrap_or_else(|| panic!("no differential in {obj}"));
        let detail = c["detail"].as_str().unwrap_or_default();
        assert_eq!(c["outcome"], "fail", "{}: {detail}\n{text}", obj["label"]);
        // The KAT covers 1 MiB; the pair parts beyond it, and the engine saw it part.
        assert!(evidence_bits(detail) > 1 << 23, "{detail}");
        assert_eq!(obj["status"], "NONCONFORM", "{text}");
        // Every other check ran in the candidate's own checks' worker, unforged.
        let checks = obj["conformance"].as_array().unwrap();
        assert_eq!(checks.len(), 11, "{obj}");
    }
    assert_ne!(o.status.code(), Some(0), "{text}");
}
