//! The workbench takes instances from the same places as the subcommands — an ad-hoc
//! `--lib`, a submission's sources built first (`--src`) — selected at start, with the bundled
//! baselines beside them (real binary in tmux, real C compiler and dlopen).

mod common;

use std::path::Path;

use common::output_text as text;
use common::tmux::Tmux;

#[test]
fn the_workbench_opens_on_an_adhoc_library_with_the_baselines_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let source = common::cc::candidate_source("hash-77", "mine256", 256, "", "");
    let lib = common::cc::build_library(dir.path(), "mine256", &source);
    let bin = env!("CARGO_BIN_EXE_cyclescope");
    let script = format!(
        "{bin} --lib {} --run {}; echo EXIT:$?; sleep 60",
        lib.display(),
        dir.path().join("r").display()
    );
    let t = Tmux::start_in("adhoc", 120, 40, Path::new("/"), &script);
    // The library is selected, so `s` would measure it; the baselines are one key away.
    let screen = t.wait_for("Catalog · 1 selected");
    let screen = if screen.contains("pseudoXOF-2048") {
        screen
    } else {
        t.wait_for("pseudoXOF-2048")
    };
    for label in ["mine256", "sm3hash-256", "pseudohash-512", "pseudoXOF-512"] {
        assert!(screen.contains(label), "{label} missing:\n{screen}");
    }
    t.send(&["q"]);
    t.wait_for("EXIT:0");

    // The same flags before a subcommand are the workbench's, and say so.
    let o = common::cyclescope()
        .args(["--lib", lib.to_str().unwrap(), "list"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("belong to the workbench"), "{}", text(&o));
}

#[test]
fn the_workbench_builds_a_submission_given_with_src_and_shows_it_beside_the_baselines() {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/submissions/fixhash");
    let bin = env!("CARGO_BIN_EXE_cyclescope");
    let script = format!(
        "XDG_CACHE_HOME={} {bin} --src {} --id hash-99 --run {}; echo EXIT:$?; sleep 60",
        dir.path().join("cache").display(),
        src.display(),
        dir.path().join("r").display()
    );
    let t = Tmux::start_in("src", 120, 40, dir.path(), &script);
    let screen = t.wait("the built instances selected", |s| {
        s.contains("pseudoXOF-2048") && !s.contains("Catalog · 0 selected")
    });
    for label in ["FIXH-256", "FIXH-512", "hash-99", "sm3hash-256"] {
        assert!(screen.contains(label), "{label} missing:\n{screen}");
    }
    t.send(&["q"]);
    t.wait_for("EXIT:0");
}
