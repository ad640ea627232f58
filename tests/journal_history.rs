//! The tuning journal end to end with the real binary: `run` and `compare --live` index what
//! they measured, `history` reads it back per build with verdicts, `history --rebuild` makes
//! it again from the run folders, and a journal that cannot be written never stops a run (it
//! is said once, and the file is left as it was). Each test has its own `$XDG_DATA_HOME`.

mod common;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Two builds of one fixture instance `jfix` (same label, other code, other sha256).
fn two_builds(dir: &Path) -> (PathBuf, PathBuf) {
    let mut libs = Vec::new();
    for (sub, body) in [
        ("b1", ""),
        (
            "b2",
            "volatile int k = 0; for (int i = 0; i < 50; i++) k += i;",
        ),
    ] {
        let d = dir.join(sub);
        std::fs::create_dir_all(&d).unwrap();
        let src = common::cc::candidate_source("hash-90", "jfix", 256, body, "");
        libs.push(common::cc::build_library(&d, "jfix", &src));
    }
    (libs.remove(0), libs.remove(0))
}

fn cyclescope(dir: &Path, data: &Path, args: &[&str]) -> std::process::Output {
    common::cyclescope()
        .env("XDG_DATA_HOME", data)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("running cyclescope")
}

fn history_json(dir: &Path, data: &Path, label: &str) -> Vec<Value> {
    let o = cyclescope(dir, data, &["history", label, "--length", "32", "--json"]);
    let text = common::output_text(&o);
    assert!(o.status.success(), "{text}");
    serde_json::from_slice::<Value>(&o.stdout)
        .expect(&text)
        .as_array()
        .cloned()
        .expect("an array")
}

#[test]
fn runs_are_indexed_read_back_per_build_and_rebuilt_from_their_folders() {
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("data");
    let (b1, b2) = two_builds(t.path());
    for (lib, out) in [(&b1, "r1"), (&b2, "r2")] {
        let o = cyclescope(
            t.path(),
            &data,
            &common::quick_run(lib.to_str().unwrap(), out, true),
        );
        let text = common::output_text(&o);
        assert!(o.status.success(), "{text}");
        assert!(
            !text.contains("tuning journal"),
            "no journal warning: {text}"
        );
    }
    assert!(data.join("cyclescope/journal.sqlite").is_file());
    let rows = history_json(t.path(), &data, "jfix");
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0]["verdict"], "first");
    assert_eq!(rows[0]["origin"], "run");
    let words = [
        "faster",
        "slower",
        "within_noise",
        "doubtful",
        "not_comparable",
    ];
    assert!(
        words.contains(&rows[1]["verdict"].as_str().unwrap_or("")),
        "{:?}",
        rows[1]
    );
    assert_ne!(rows[0]["library_sha256"], rows[1]["library_sha256"]);
    assert!(
        rows[1]["run_dir"].as_str().unwrap().ends_with("r2"),
        "{:?}",
        rows[1]
    );
    assert!(rows[0]["mean_cycles"].as_f64().is_some_and(|m| m > 0.0));
    // An ad-hoc library: cyclescope did not build it, its flags are not known.
    assert_eq!(rows[0]["flags"], "unknown");

    // The Markdown table: the builds numbered, with their flags and verdicts.
    let o = cyclescope(t.path(), &data, &["history", "jfix"]);
    let table = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        table.contains("| `jfix` | 32 B | 1 |") && table.contains("first build"),
        "{table}"
    );
    assert!(table.contains("| `jfix` | 32 B | 2 |"), "{table}");

    // A fresh journal made from the folders holds the same builds.
    let fresh = t.path().join("fresh");
    let o = cyclescope(t.path(), &fresh, &["history", "--rebuild", "r1", "r2"]);
    let text = common::output_text(&o);
    assert!(o.status.success(), "{text}");
    assert!(text.contains(" measurements of 2 runs"), "{text}");
    let again = history_json(t.path(), &fresh, "jfix");
    let key = |r: &Value| {
        (
            r["library_sha256"].clone(),
            r["mean_cycles"].clone(),
            r["verdict"].clone(),
        )
    };
    assert_eq!(
        again.iter().map(key).collect::<Vec<_>>(),
        rows.iter().map(key).collect::<Vec<_>>()
    );
    // A folder of runs is read too; a folder without runs is named.
    let o = cyclescope(t.path(), &fresh, &["history", "--rebuild", ".", "b1"]);
    let text = common::output_text(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.contains("b1: no run here"), "{text}");

    // An unknown label is a clear error with the nearest one.
    let o = cyclescope(t.path(), &data, &["history", "jfx"]);
    let text = common::output_text(&o);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert!(
        text.contains("no measurement of jfx (did you mean jfix?)"),
        "{text}"
    );
}

#[test]
fn a_damaged_journal_never_stops_a_run_is_named_once_and_is_left_as_it_was() {
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("data");
    let file = data.join("cyclescope/journal.sqlite");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let junk: Vec<u8> = (0..8192u32).map(|i| (i * 13 % 251) as u8).collect();
    std::fs::write(&file, &junk).unwrap();
    let (b1, _) = two_builds(t.path());
    let mut args = common::quick_run(b1.to_str().unwrap(), "r", true);
    // Two lengths: two jobs that could each have complained.
    args[5] = "32,64";
    let o = cyclescope(t.path(), &data, &args);
    let text = common::output_text(&o);
    assert!(o.status.success(), "{text}");
    assert_eq!(
        text.matches("not indexed in the tuning journal").count(),
        1,
        "said once: {text}"
    );
    assert!(text.contains("--rebuild"), "says how to recover: {text}");
    assert_eq!(std::fs::read(&file).unwrap(), junk, "nothing lost");
    assert!(t.path().join("r/records").is_dir());
    // history names the damage too.
    let o = cyclescope(t.path(), &data, &["history", "jfix"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(common::output_text(&o).contains("is not a cyclescope journal or is damaged"));
}

#[test]
fn compare_live_indexes_both_sides_as_compare_live() {
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("data");
    let out = t.path().join("ab");
    let o = cyclescope(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &data,
        &[
            "compare",
            "--live",
            "sm3hash-256",
            "pseudoXOF-256",
            "--allow-unfixed-host",
            "--trial-target",
            "0.005",
            "--pairs",
            "2",
            "--lengths",
            "32",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let text = common::output_text(&o);
    assert!(o.status.success(), "{text}");
    for label in ["sm3hash-256", "pseudoXOF-256"] {
        let rows = history_json(t.path(), &data, label);
        assert_eq!(rows.len(), 1, "{label}: {rows:?}");
        assert_eq!(rows[0]["origin"], "compare-live");
    }
}

#[test]
fn history_cuts_long_flags_in_its_table_and_keeps_them_whole_in_json_and_csv() {
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("data");
    let (b1, _) = two_builds(t.path());
    let flags = "gcc 12.2 -O3 -march=native -mtune=native -funroll-loops -fomit-frame-pointer \
                 -fno-semantic-interposition -fno-plt -flto=auto -DNDEBUG";
    let mut args = common::quick_run(b1.to_str().unwrap(), "r1", true);
    args.extend(["--flags-note", flags]);
    let o = cyclescope(t.path(), &data, &args);
    let text = common::output_text(&o);
    assert!(o.status.success(), "{text}");

    // The table: the flags cut to 40 characters, ending in …; no line carries them whole.
    let o = cyclescope(t.path(), &data, &["history", "jfix"]);
    let table = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{}", common::output_text(&o));
    let short: String = flags.chars().take(39).chain(['…']).collect();
    assert!(table.contains(&format!("| {short} |")), "{table}");
    assert!(!table.contains(flags), "{table}");

    // JSON keeps the whole string.
    let rows = history_json(t.path(), &data, "jfix");
    assert_eq!(rows[0]["flags"], flags, "{:?}", rows[0]);

    // CSV: build → flags → figure → verdict, one line per build, the flags whole.
    let o = cyclescope(t.path(), &data, &["history", "jfix", "--csv"]);
    let csv = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{}", common::output_text(&o));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "instance,message_bytes,build,ended_utc,library_sha256,flags,build_flags,compiler,\
         system_id,counter,mean_cycles,ci95_cycles,doubt,measurements,verdict,why,run_dir"
    );
    assert_eq!(lines.len(), 2, "{csv}");
    assert!(lines[1].starts_with("jfix,32,1,"), "{}", lines[1]);
    assert!(lines[1].contains(&format!(",{flags},")), "{}", lines[1]);
    let cells: Vec<&str> = lines[1].split(',').collect();
    let mean: f64 = cells[10].parse().expect("mean_cycles");
    assert!(mean > 0.0, "{}", lines[1]);
    assert_eq!(cells[14], "first", "{}", lines[1]);
}
