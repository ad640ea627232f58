//! A KAT manifest that breaks after the workbench started (changed, or unreadable) is a
//! manifest error when `K` or `s` meets it: BADMANIFEST in the catalog, in the words
//! `cyclescope kat` uses for that manifest, with the way to fix it — never LOADFAIL, which
//! would blame the library. The real binary in tmux, on a library built for the test.

mod common;

use common::tmux::Tmux;

#[test]
fn a_manifest_broken_after_start_is_badmanifest_not_loadfail() {
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
            "--out",
            "K",
            "--write-manifest",
            "m.sha256",
        ],
    );
    assert!(
        tmp.path().join("m.sha256").is_file(),
        "{}",
        common::output_text(&o)
    );

    let bin = env!("CARGO_BIN_EXE_cyclescope");
    let script = format!(
        "{bin} --lib {lib} --manifest m.sha256 --trial-target 0.05 --allow-unfixed-host; \
         echo \"EXIT:$?\"; sleep 600"
    );
    let t = Tmux::start_in("manifest", 160, 48, tmp.path(), &script);
    t.wait_for("Catalog · 1 selected");
    // One length keeps the run that follows short.
    for k in ["2", "3", "4", "5", "6", "7", "8"] {
        t.send(&[k]);
    }
    t.wait("32 B alone", |s| s.contains("S1 ·2 ·3 ·4 ·5 ·6 ·7 ·8"));
    // The manifest breaks after the start check passed it.
    std::fs::write(tmp.path().join("m.sha256"), "garbage\n").unwrap();
    let kat = common::cyclescope_in(
        tmp.path(),
        &["kat", "--lib", lib, "--manifest", "m.sha256", "--out", "K2"],
    );
    let kat_text = String::from_utf8_lossy(&kat.stderr).to_string();
    let words = kat_text
        .lines()
        .find_map(|l| l.strip_prefix("cyclescope: "))
        .unwrap_or_else(|| panic!("kat names the manifest problem:\n{kat_text}"))
        .to_string();
    assert!(words.starts_with("m.sha256:1: "), "{kat_text}");

    for (key, what) in [("K", "the KAT alone"), ("s", "a run")] {
        t.send(&[key]);
        let s = t.wait(&format!("{what} meets the manifest"), |s| {
            s.contains(&format!("BADMANIFEST — {words}"))
        });
        assert!(
            !s.contains("LOADFAIL"),
            "{what}: the library is blamed:\n{s}"
        );
        assert!(s.contains("BADMANIFEST"), "{s}");
        assert!(
            s.contains("BADMANIFEST: the KAT manifest cannot be read or does not parse"),
            "{what}: the way on:\n{s}"
        );
        t.wait("the job over", |s| {
            ["│ idle │", "│ finished", "│ refused"]
                .iter()
                .any(|w| s.contains(w))
        });
    }
    t.send(&["q"]);
    t.wait_for("EXIT:0");
}
