//! The KAT cache of the tuning journal with the real binary: a second run of an unchanged
//! library reuses the first run's pass ("cached from run …", also in build.json), and a
//! changed library or a changed manifest runs the KAT again. Each test has its own
//! `$XDG_DATA_HOME`.

mod common;

use std::io::Write as _;
use std::path::Path;

fn append(path: &Path, bytes: &[u8]) {
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap()
        .write_all(bytes)
        .unwrap();
}

/// The `KAT xof: …` line of a run's output (the reference job has its own).
fn kat_line(text: &str) -> String {
    text.lines()
        .find(|l| l.starts_with("KAT xof: "))
        .unwrap_or_else(|| panic!("no KAT line of xof:\n{text}"))
        .to_string()
}

/// `run xof` at 32 B into `out`; its `KAT xof:` line and build.json's entry.
fn run(dir: &Path, out: &str) -> (String, serde_json::Value) {
    let o = common::cyclescope()
        .env("XDG_DATA_HOME", dir.join("data"))
        .args([
            "--config",
            "cfg.toml",
            "run",
            "xof",
            "--no-baselines",
            "--lengths",
            "32",
            "--trials",
            "2",
            "--trial-target",
            "0.01",
            "--allow-unfixed-host",
            "--out",
            out,
        ])
        .current_dir(dir)
        .output()
        .expect("run");
    let text = common::output_text(&o);
    assert!(o.status.success(), "{text}");
    let build: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join(out).join("build.json")).unwrap()).unwrap();
    (kat_line(&text), build["instances"]["hash-91/xof"].clone())
}

#[test]
fn an_unchanged_library_reuses_its_kat_and_a_changed_library_or_manifest_runs_it_again() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let lib = dir.join("libxof.so");
    std::fs::copy(cyclescope_core::catalog::bundled_library("pseudoxof"), &lib).unwrap();
    let manifest = dir.join("kat.sha256");
    let bundled = Path::new(env!("CARGO_MANIFEST_DIR")).join("kat/iccs/kat.sha256");
    // The bundled manifest's pseudoXOF-256 entries, under this instance's label.
    let entries: String = std::fs::read_to_string(&bundled)
        .unwrap()
        .lines()
        .filter(|l| l.contains(" pseudoXOF-256/"))
        .map(|l| l.replace(" pseudoXOF-256/", " xof/") + "\n")
        .collect();
    std::fs::write(&manifest, entries).unwrap();
    std::fs::write(
        dir.join("cfg.toml"),
        format!(
            "[[candidate]]\nid = \"hash-91\"\nalgorithm = \"XOF copy\"\nkat_manifest = \"kat.sha256\"\n\
             [[candidate.instance]]\nlabel = \"xof\"\nlibrary = {lib:?}\ndigest_bits = 256\n\
             kat_name = \"pseudoXOF-256\"\n"
        ),
    )
    .unwrap();

    let (first, entry) = run(dir, "r1");
    assert!(first.starts_with("KAT xof: PASS"), "{first}");
    assert!(!first.contains("cached from"), "{first}");
    assert!(entry.get("kat_cached_from").is_none(), "{entry}");

    let (second, entry) = run(dir, "r2");
    assert!(
        second.starts_with("KAT xof: PASS cached from run"),
        "{second}"
    );
    assert!(
        entry["kat_cached_from"]
            .as_str()
            .unwrap_or("")
            .ends_with("r1"),
        "{entry}"
    );
    assert!(
        dir.join("r2/kat/hash-91/xof.log").is_file(),
        "the log is copied in"
    );
    // The reuse names the run by its folder: the run still holds no absolute path.
    let v = common::cyclescope_in(dir, &["validate", "r2"]);
    assert!(v.status.success(), "{}", common::output_text(&v));

    // Another build of the library: its own KAT.
    append(&lib, b"\0another build");
    let (third, _) = run(dir, "r3");
    assert!(
        third.contains("KAT xof: PASS") && !third.contains("cached from"),
        "{third}"
    );
    let (fourth, entry) = run(dir, "r4");
    assert!(fourth.contains("cached from run"), "{fourth}");
    assert!(
        entry["kat_cached_from"]
            .as_str()
            .unwrap_or("")
            .ends_with("r3"),
        "{entry}"
    );

    // Another manifest (one more entry): the KAT runs again.
    let line = std::fs::read_to_string(&bundled)
        .unwrap()
        .lines()
        .find(|l| l.contains(" pseudoXOF-256/"))
        .unwrap()
        .replace(" pseudoXOF-256/", " other-256/");
    append(&manifest, format!("{line}\n").as_bytes());
    let (fifth, _) = run(dir, "r5");
    assert!(
        fifth.contains("KAT xof: PASS") && !fifth.contains("cached from"),
        "{fifth}"
    );

    // A log changed since it passed is not trusted: the KAT runs again.
    let log = dir.join("r5/kat/hash-91/xof.log");
    append(&log, b"edited\n");
    let (sixth, _) = run(dir, "r6");
    assert!(!sixth.contains("cached from"), "{sixth}");
}
