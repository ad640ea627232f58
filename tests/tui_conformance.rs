//! The workbench holds back what the gate and the trials catch (issue 21), in a real terminal
//! (tmux) on real fixture libraries: a library that fails a conformance check is named by the
//! check in the KAT column and never timed, and a library that replays a digest while timed
//! gets its TAMPERED row, never a figure.

mod common;
use common::hostile as support;

use std::path::Path;

use common::tmux::Tmux;

fn workbench(name: &str, cwd: &Path, args: &str) -> Tmux {
    let bin = env!("CARGO_BIN_EXE_cyclescope");
    let script = format!(
        "XDG_CACHE_HOME={}/cache {bin} {args} --trial-target 0.02 --allow-unfixed-host --run {}/r; echo EXIT:$?; sleep 600",
        cwd.display(),
        cwd.display()
    );
    Tmux::start_in(name, 140, 40, cwd, &script)
}

#[test]
fn a_nonconforming_library_is_named_by_its_check_and_not_timed() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = common::conform::harness_tree(tmp.path(), "zero_input");
    let t = workbench(
        "nonconform",
        tmp.path(),
        &format!("--scan {} --no-baselines", tree.display()),
    );
    t.wait_for("Catalog · 1 selected");
    t.send(&["s"]);
    let s = t.wait_for("cyclescope │ finished");
    assert!(
        s.contains("✗ input_unchanged"),
        "the KAT column names the check:\n{s}"
    );
    assert!(s.contains("Results · 0"), "nothing was timed:\n{s}");
    assert!(
        !tmp.path().join("r").join("records").exists()
            || common::run_folders(&tmp.path().join("r"))
                .iter()
                .all(|run| !run.join("records").exists()),
        "no record was written"
    );
    t.send(&["q"]);
    t.wait_for("EXIT:");
}

#[test]
fn a_library_that_replays_a_digest_while_timed_gets_a_tampered_row_not_a_figure() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = support::build_fixture("proof_mark_replay", tmp.path());
    let t = workbench(
        "replay",
        tmp.path(),
        &format!(
            "--lib {} --digest-bits 256 --no-baselines --allow-kat-fail",
            lib.display()
        ),
    );
    t.wait_for("Catalog · 1 selected");
    // The gate fails it (it writes into its message), and --allow-kat-fail overrides the
    // gate: the trials must catch it on their own.
    t.send(&["s"]);
    let s = t.wait_for("finished with faults");
    assert!(s.contains("✗ input_unchanged"), "{s}");
    assert!(s.contains("TAMPERED: CryptHash wrot"), "{s}");
    assert!(!s.contains("✓ proof_mark_replay"), "{s}");
    t.send(&["q"]);
    t.wait_for("EXIT:");
}
