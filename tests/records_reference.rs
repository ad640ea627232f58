//! The published harness records are the reference for cyclescope's record format: the typed
//! schema reads each one and writes it back byte for byte, and the validator accepts the
//! published dataset and rejects a tampered copy.

mod common;

use cyclescope_core::record::TimingRecord;
use cyclescope_core::record::pyjson::to_py_json;
use cyclescope_core::record::validate::validate;

fn published_records() -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for cand in std::fs::read_dir(common::arm_1().join("records")).unwrap() {
        for f in std::fs::read_dir(cand.unwrap().path()).unwrap() {
            out.push(f.unwrap().path());
        }
    }
    out.sort();
    assert_eq!(out.len(), 120, "the arm_1 excerpt has 120 records");
    out
}

#[test]
fn typed_schema_round_trips_every_published_record_byte_for_byte() {
    for path in published_records() {
        let bytes = std::fs::read(&path).unwrap();
        let rec: TimingRecord = serde_json::from_slice(&bytes).unwrap();
        assert!(rec.cyclescope.is_none());
        let again = to_py_json(&rec).unwrap();
        assert!(
            again == bytes,
            "{} differs after a round trip",
            path.display()
        );
    }
}

#[test]
fn the_published_dataset_validates() {
    let v = validate(&common::arm_1()).unwrap();
    assert!(v.ok(), "{:#?}", v.findings);
    assert_eq!((v.records, v.complete), (120, 120));
    assert!(v.kat_logs >= 15);
}

#[test]
fn a_tampered_copy_fails_with_specific_findings() {
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("arm_1");
    copy_dir(&common::arm_1(), &dst);
    let rec = dst.join("records/iccs/pseudoXOF-512__hash_1024.json");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&rec).unwrap()).unwrap();
    v["mean_cycles"] = serde_json::json!(v["mean_cycles"].as_f64().unwrap() * 1.001);
    v["measurements"] = serde_json::json!(v["measurements"].as_u64().unwrap() + 1);
    std::fs::write(&rec, to_py_json(&v).unwrap()).unwrap();
    let log = dst.join("kat/iccs/sm3hash-256.log");
    let text = std::fs::read_to_string(&log).unwrap() + "library = /home/someone/lib.so\n";
    std::fs::write(&log, text).unwrap();

    let found = validate(&dst).unwrap();
    let messages: Vec<String> = found.findings.iter().map(ToString::to_string).collect();
    let has = |needle: &str| messages.iter().any(|m| m.contains(needle));
    assert!(
        has("pseudoXOF-512__hash_1024.json: measurements"),
        "{messages:#?}"
    );
    assert!(has("mean_cycles"), "{messages:#?}");
    assert!(has("sm3hash-256.log: SHA-256 differs"), "{messages:#?}");
    assert!(has("absolute path \"/home/someone"), "{messages:#?}");
}

fn copy_dir(src: &std::path::Path, dst: &std::path::Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), &to).unwrap();
            let mut perm = std::fs::metadata(&to).unwrap().permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perm.set_readonly(false);
            std::fs::set_permissions(&to, perm).unwrap();
        }
    }
}
