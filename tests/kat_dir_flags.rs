//! `--kat-dir DIR` beside `--manifest` wherever instances come from (`run`, `build`, `list`,
//! `compare --live`, the workbench; one shared argument group): a submission that ships no
//! KAT files is KAT-checked against a folder of reference files instead of being NOKAT. The
//! fixture submission copied without its `KAT/` folder, which serves as the reference folder.

mod common;

use std::path::{Path, PathBuf};

use serde_json::Value;

fn fixhash() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/submissions/fixhash")
}

/// `fixhash` copied into `root` without its KAT files; returns the copy.
fn without_kat(root: &Path) -> PathBuf {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).expect("folder");
        for e in std::fs::read_dir(from).expect("read fixture") {
            let e = e.expect("entry");
            let (path, name) = (e.path(), e.file_name());
            if name == "KAT" {
                continue;
            }
            if path.is_dir() {
                copy(&path, &to.join(&name));
            } else {
                std::fs::copy(&path, to.join(&name)).expect("copy");
            }
        }
    }
    let to = root.join("nokat");
    copy(&fixhash(), &to);
    to
}

fn run_in(cwd: &Path, args: &[&str]) -> std::process::Output {
    common::cyclescope()
        .args(args)
        .current_dir(cwd)
        .env("XDG_CACHE_HOME", cwd.join("cache"))
        .output()
        .expect("running cyclescope")
}

#[test]
fn run_list_build_and_compare_live_take_a_kat_dir() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let src = without_kat(tmp.path());
    let src_s = src.to_str().expect("path");
    let kat_dir = fixhash().join("KAT");
    let kat_s = kat_dir.to_str().expect("path");

    // list: the instances --src brings carry the folder.
    let o = run_in(
        tmp.path(),
        &["list", "--src", src_s, "--kat-dir", kat_s, "--json"],
    );
    let text = common::output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    let rows: Value = serde_json::from_slice(&o.stdout).expect(&text);
    let row = rows
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["label"] == "FIXH-256")
        .unwrap_or_else(|| panic!("FIXH-256 listed: {text}"));
    assert!(
        row["kat_dir"].as_str().is_some_and(|d| d.ends_with("KAT")),
        "{row}"
    );

    // run: the KAT compares with the folder's files and passes, so it is timed.
    let out = tmp.path().join("run");
    let o = run_in(
        tmp.path(),
        &[
            "run",
            "FIXH-256",
            "--src",
            src_s,
            "--kat-dir",
            kat_s,
            "--no-baselines",
            "--lengths",
            "32",
            "--trials",
            "2",
            "--trial-target",
            "0.01",
            "--allow-unfixed-host",
            "--out",
            out.to_str().expect("path"),
        ],
    );
    let text = common::output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    let record: Value = serde_json::from_slice(
        &std::fs::read(out.join("records/nokat/FIXH-256__hash_32.json")).expect(&text),
    )
    .expect("record");
    assert_eq!(record["kat"], "PASS", "{text}");

    // build: the folder's files are digested into the tree's manifest (no NOKAT warning).
    let tree = tmp.path().join("tree");
    let o = run_in(
        tmp.path(),
        &[
            "build",
            src_s,
            "--kat-dir",
            kat_s,
            "--out",
            tree.to_str().expect("path"),
        ],
    );
    let text = common::output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(!text.contains("ships no KAT files"), "{text}");
    assert!(!text.contains("NOKAT"), "{text}");
    let manifest = std::fs::read_to_string(tree.join("nokat/kat.sha256")).expect("manifest");
    assert!(
        manifest.contains("FIXH-256/KAT_2_12_FIXH-256.txt")
            && manifest.contains("FIXH-256/KAT_2_23_FIXH-256.txt"),
        "{manifest}"
    );
    let build = common::build::build_json(&tree);
    for key in ["nokat/FIXH-256", "nokat/FIXH-256-opt"] {
        assert_eq!(build["instances"][key]["kat"], "PASS", "{key}: {build}");
    }

    // compare --live: both sides' KATs pass against the folder.
    let o = run_in(
        tmp.path(),
        &[
            "compare",
            "--live",
            "FIXH-256",
            "FIXH-256",
            "--src",
            src_s,
            "--kat-dir",
            kat_s,
            "--cflags-a",
            "-O0",
            "--cflags-b",
            "-O2",
            "--pairs",
            "2",
            "--lengths",
            "64",
            "--trial-target",
            "0.005",
            "--allow-unfixed-host",
            "--out",
            tmp.path().join("ab").to_str().expect("path"),
        ],
    );
    let text = common::output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert_eq!(text.matches("KAT FIXH-256: PASS").count(), 2, "{text}");
}

/// The workbench on the same sources with `--kat-dir`: `K` runs the selection's KATs, and
/// FIXH-256 passes against the folder (it would be NOKAT without it).
#[test]
fn the_workbench_takes_a_kat_dir() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let src = without_kat(tmp.path());
    let bin = env!("CARGO_BIN_EXE_cyclescope");
    let script = format!(
        "XDG_CACHE_HOME={} {bin} --src {} --kat-dir {} --allow-unfixed-host; echo EXIT:$?; sleep 60",
        tmp.path().join("cache").display(),
        src.display(),
        fixhash().join("KAT").display()
    );
    let t = common::tmux::Tmux::start_in("kat-dir", 160, 48, tmp.path(), &script);
    t.wait_for("FIXH-256 guide");
    t.send(&["K"]);
    // The event log gives each KAT's verdict; the optimized variant's files are found by the
    // instance its file names name (`KAT/FIXH-256/`).
    let verdict = |s: &str, k: &str| -> Option<String> {
        s.lines().find_map(|l| {
            let rest = &l[l.find(k)? + k.len()..];
            let word: String = rest.chars().take_while(char::is_ascii_uppercase).collect();
            (!word.is_empty()).then_some(word)
        })
    };
    // All four selected, so every KAT has ended before `q` (which would ask first).
    const KATS: [&str; 4] = [
        "KAT FIXH-256: ",
        "KAT FIXH-256-opt: ",
        "KAT FIXH-512: ",
        "KAT FIXH-512-opt: ",
    ];
    let s = t.wait("every KAT verdict", |s| {
        KATS.iter().all(|k| verdict(s, k).is_some())
    });
    for k in KATS {
        assert_eq!(
            verdict(&s, k).as_deref(),
            Some("PASS"),
            "{k}against --kat-dir:\n{s}"
        );
    }
    t.send(&["q"]);
    t.wait_for("EXIT:0");
}
