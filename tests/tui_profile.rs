//! The workbench's Profile panel end to end: the real binary in tmux profiles a fixture library
//! under the real valgrind (`P`), and in the tuning loop profiles the rebuilt library and shows
//! how each function's count moved. Callgrind's counts are exact, so the screen is checked
//! against `cyclescope profile --json` of the same library, never against a time.

mod common;

use std::path::{Path, PathBuf};

use common::tmux::Tmux;
use serde_json::Value;

/// `tests/fixtures/profile/split.c` built with `-g`: its cost split between `profile_absorb`
/// and `profile_finish` by construction.
fn split_library(dir: &Path) -> PathBuf {
    let prelude = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/profile/split.c"),
    )
    .unwrap();
    let source = common::cc::candidate_source(
        "split",
        "split-256",
        256,
        "profile_work(msg, msg_len_bits);",
        &prelude,
    );
    common::cc::build_library_with(dir, "split", &source, &["-O1", "-g"])
}

/// The panel's row of `function`.
fn row<'a>(screen: &'a str, function: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.contains(&format!(" {function} (")))
        .unwrap_or_else(|| panic!("no row of {function}:\n{screen}"))
}

#[test]
fn p_profiles_the_instance_under_the_cursor_and_shows_each_functions_share() {
    let dir = tempfile::tempdir().unwrap();
    let lib = split_library(dir.path());
    let bin = env!("CARGO_BIN_EXE_cyclescope");
    let script = format!(
        "{bin} --lib {} --no-baselines --run {} --allow-unfixed-host; echo EXIT:$?; sleep 60",
        lib.display(),
        dir.path().join("r").display()
    );
    let t = Tmux::start_in("profile", 160, 48, dir.path(), &script);
    t.wait_for("Catalog · 1 selected");
    // 32 B and 256 B: S1 stays, S2–S8 go, 256 is typed.
    for k in ["2", "3", "4", "5", "6", "7", "8"] {
        t.send(&[k]);
    }
    t.wait_for("len S1 ·2 ·3 ·4 ·5 ·6 ·7 ·8");
    t.send(&["l"]);
    t.type_text("256");
    t.send(&["Enter"]);
    t.wait_for("·8 +1");
    t.send(&["P"]);
    // The job's first step shows before any result: what is being profiled, where.
    t.wait_for("profiling split-256 at 2 length(s) under valgrind callgrind");
    // The panel follows the job to its last length and fills as it finishes.
    let s = t.wait("the 256 B profile", |s| {
        s.contains("Profile · split-256 · 256 B (2/2") && s.contains("slower than native")
    });
    assert!(s.contains("instructions per call (exact, 20 calls)"), "{s}");
    // The same shares and counts as the CLI's profile of the same library (exact counts).
    let out = common::cyclescope_in(
        dir.path(),
        &[
            "profile",
            "--lib",
            lib.to_str().unwrap(),
            "--no-baselines",
            "--length",
            "256",
            "--calls",
            "20",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", common::output_text(&out));
    let all: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let functions = all[0]["functions"].as_array().expect("functions");
    for name in ["profile_absorb", "profile_finish"] {
        let f = functions
            .iter()
            .find(|f| f["function"] == name)
            .unwrap_or_else(|| panic!("{name} in {functions:?}"));
        let share = format!("{:.1} %", 100.0 * f["share"].as_f64().unwrap());
        let per_call = f["count"].as_u64().unwrap() / 20;
        let r = row(&s, name);
        assert!(r.contains(&share), "{name}: {share} expected in {r}");
        assert!(
            r.contains(&per_call.to_string()),
            "{name}: {per_call} in {r}"
        );
        assert!(r.contains("(libsplit.so)"), "{r}");
    }
    // The top function's source lines, from the library's DWARF.
    assert!(s.contains("lines of profile_absorb:"), "{s}");
    assert!(s.contains("split.c:"), "{s}");
    // ↑ shows the other length, also profiled.
    t.send(&["k"]);
    let s = t.wait_for("32 B (1/2");
    row(&s, "profile_finish");
    t.send(&["q"]);
    t.wait_for("EXIT:0");
}

#[test]
fn after_a_rebuild_the_panel_shows_how_each_functions_count_moved() {
    let cwd = tempfile::tempdir().expect("temp dir");
    let t = common::tuning::fixh256_workbench("profile-delta", cwd.path(), "");
    t.send(&["P"]);
    let first = t.wait("the guide build's profile", |s| {
        s.contains("Profile · FIXH-256 guide · 32 B") && s.contains("slower than native")
    });
    let before: u64 = per_call(row(&first, "fixh"));
    // The tuning loop: new flags, s rebuilds, KAT-checks and measures, then the panel
    // profiles the new build by itself.
    t.send(&["p"]);
    t.wait_for("profile/flags:");
    t.type_text(" -O0");
    t.send(&["Enter"]);
    t.wait_for("FIXH-256 guide → -O0");
    t.send(&["s"]);
    t.wait_for("FIXH-256: rebuilt with -O0");
    let s = t.wait("the rebuilt build's profile with its Δ", |s| {
        s.contains("Profile · FIXH-256 -O0 · 32 B")
            && s.contains("Δ Ir/call vs the previous build (guide): exact counts")
            && s.contains("slower than native")
    });
    let r = row(&s, "fixh");
    let after = per_call(r);
    assert_ne!(after, before, "-O0 moves fixh's count:\n{s}");
    let delta = if after > before {
        format!("+{}", after - before)
    } else {
        format!("−{}", before - after)
    };
    assert!(r.contains(&delta), "Δ {delta} expected in {r}");
    // What the guide's flags inlined is a function of its own at -O0.
    assert!(row(&s, "rotl").contains("new"), "{s}");
    t.send(&["q"]);
    t.wait_for("EXIT:0");
}

/// The Ir/call column of a function row (the number after the share), exact below 10 000.
fn per_call(row: &str) -> u64 {
    let after_share = row.split(" % ").nth(1).unwrap_or_else(|| panic!("{row}"));
    let n = after_share.split_whitespace().next().unwrap_or("");
    n.parse()
        .unwrap_or_else(|_| panic!("no exact Ir/call in {row:?} (≥ 10 000 would be shown as k)"))
}
