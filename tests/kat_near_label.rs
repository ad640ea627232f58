//! A label with no manifest entry is NOKAT (not a failure of the digest), and the KAT detail
//! suggests the manifest's nearest label: the bundled sm3hash library under a misspelt label.

mod common;

#[test]
fn a_misspelt_label_is_nokat_with_the_nearest_manifest_label_suggested() {
    let dir = tempfile::tempdir().expect("temp dir");
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kat/iccs/kat.sha256");
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[[candidate]]\nid = \"iccs\"\nalgorithm = \"ICCS hash helpers\"\nkat_manifest = {manifest:?}\n\n\
             [[candidate.instance]]\nlabel = \"sm3hash256\"\nlibrary = \"bundled:sm3hash\"\ndigest_bits = 256\nkat_name = \"sm3hash-256\"\n"
        ),
    )
    .expect("config");
    let out = common::cyclescope()
        .args(["--config", config.to_str().unwrap(), "kat", "sm3hash256"])
        .current_dir(dir.path())
        .output()
        .expect("cyclescope kat");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "NOKAT's exit code: {out:?}");
    let result = stdout
        .lines()
        .find(|l| l.starts_with("RESULT "))
        .unwrap_or_else(|| panic!("no RESULT line: {out:?}"));
    assert!(result.contains(" NOKAT "), "{result}");
    assert!(result.contains("(did you mean `sm3hash-256`?)"), "{result}");
}
