//! The conformance fixtures (`tests/fixtures/conform/`): each built with the FIXH-256
//! reference sources into an ngcc-harness tree beside their KAT manifest, so that every file
//! of the KAT passes and only the one property the fixture breaks is left to be found.

use std::path::{Path, PathBuf};

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conform")
}

/// The FIXH-256 reference sources every fixture hashes with.
fn fixh_dir() -> PathBuf {
    super::build::submissions().join("fixhash/Reference_Implementation/FIXH-256")
}

/// The length (bits) an evidence's words name: `… at <bits> bits, …`.
pub fn evidence_bits(detail: &str) -> u64 {
    detail
        .split(" at ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no length in {detail}"))
}

/// Builds `tests/fixtures/conform/<name>.c` into an ngcc-harness tree under `root`
/// (`hash-90/lib/lib<name>.so` beside the FIXH-256 manifest) and returns the tree.
pub fn harness_tree(root: &Path, name: &str) -> PathBuf {
    let tree = root.join("tree");
    let lib_dir = tree.join("hash-90/lib");
    std::fs::create_dir_all(&lib_dir).unwrap();
    std::fs::copy(
        fixtures().join("kat.sha256"),
        tree.join("hash-90/kat.sha256"),
    )
    .unwrap();
    let out = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(lib_dir.join(format!("lib{name}.so")))
        .arg(fixtures().join(format!("{name}.c")))
        .arg(fixh_dir().join("fixh.c"))
        .arg("-I")
        .arg(fixh_dir())
        .output()
        .unwrap_or_else(|e| panic!("the conformance fixtures need a C compiler `cc`: {e}"));
    assert!(
        out.status.success(),
        "cc {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    tree
}
