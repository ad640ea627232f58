//! End-to-end tests of the workbench: the real binary in a detached tmux session of fixed
//! size (own socket per test), driven with `send-keys` and read back with `capture-pane`.
//! Waiting is polling with a generous deadline, never a fixed sleep. Without tmux every test
//! fails, saying so (CI installs it): a missing tool never passes for a tested screen.
//! Starting runs from the workbench is `tui_runs.rs`.

mod common;

use std::path::Path;
use std::process::Command;

use common::tmux::Tmux;

/// The binary, then its exit status and the terminal modes once it is gone.
fn script(args: &str) -> String {
    let bin = env!("CARGO_BIN_EXE_cyclescope");
    assert!(Path::new(bin).exists());
    format!(
        "{bin} {args}; echo \"EXIT:$?\"; stty -a | tr ' ' '\\n' | grep -x -- '-\\?icanon\\|-\\?echo'; echo MODES-SHOWN; sleep 600"
    )
}

#[test]
fn launch_help_filter_select_and_quit_restores_the_terminal() {
    let t = Tmux::start("basic", 100, 30, &script(""));
    t.wait_for("Catalog · 0 selected");
    t.wait_for("s start");

    t.send(&["?"]);
    t.wait_for("Keys · Esc/?/q closes");
    t.send(&["Escape"]);
    t.wait("help closed", |s| !s.contains("Keys · Esc/?/q closes"));

    t.send(&["/"]);
    t.type_text("xof-5");
    t.wait("the filter narrows the tree", |s| {
        s.contains("/xof-5▏") && s.contains("pseudoXOF-512") && !s.contains("pseudoXOF-256")
    });
    t.send(&["Enter", "j", "Space"]);
    t.wait_for("Catalog · 1 selected");
    t.send(&["Escape"]);
    t.wait_for("sm3hash-256");

    // Lengths: S1 and S4 only (32 B and 1 KiB).
    for k in ["2", "3", "5", "6", "7", "8"] {
        t.send(&[k]);
    }
    t.wait_for("32 B · 1 KiB");

    t.send(&["Tab"]);
    t.wait_for("Host · CPU");
    t.send(&["q"]);
    t.wait_for("EXIT:0");
    let s = t.wait_for("MODES-SHOWN");
    assert!(
        s.lines().any(|l| l == "icanon") && s.lines().any(|l| l == "echo"),
        "the terminal is back in cooked mode with echo:\n{s}"
    );
    assert!(!s.contains("┏"), "the alternate screen is gone:\n{s}");
}

#[test]
fn a_small_terminal_is_told_so_and_q_still_leaves() {
    let t = Tmux::start("small", 70, 20, &script(""));
    t.wait_for("terminal too small");
    t.wait_for("70×20");
    t.send(&["q"]);
    t.wait_for("EXIT:0");
}

#[test]
fn ctrl_c_leaves_from_inside_the_filter() {
    let t = Tmux::start("ctrlc", 100, 30, &script(""));
    t.wait_for("Catalog · 0 selected");
    t.send(&["/"]);
    t.type_text("q");
    t.wait_for("/q▏");
    t.send(&["C-c"]);
    t.wait_for("EXIT:0");
    let s = t.wait_for("MODES-SHOWN");
    assert!(s.lines().any(|l| l == "icanon"), "{s}");
}

#[test]
fn watch_follows_a_journal_live_and_shows_the_end() {
    use cyclescope_core::record::journal::{JournalEvent, JournalWriter};
    let dir = tempfile::tempdir().expect("temp dir");
    let mut w = JournalWriter::open(dir.path()).expect("journal");
    w.append(JournalEvent::RunStarted {
        labels: vec!["sm3hash-256".into()],
        lengths: vec![32],
        cpu: 1,
        cpus: vec![1],
        pid: std::process::id(),
        reference_jobs: Vec::new(),
    })
    .expect("append");
    w.append(JournalEvent::KatFinished {
        label: "sm3hash-256".into(),
        status: cyclescope_core::kat::KatStatus::Pass,
        detail: String::new(),
        log: None,
        check: None,
        findings: Vec::new(),
    })
    .expect("append");
    let args = format!("watch {}", dir.path().display());
    let t = Tmux::start("watch", 100, 30, &script(&args));
    t.wait_for("watching (read-only)");
    t.wait_for("KAT sm3hash-256: PASS");
    t.wait_for("sm3hash-256      256 PASS");
    t.send(&["s"]);
    t.wait_for("read-only");
    w.append(JournalEvent::RunFinished {
        cancelled: false,
        wall_s: 3.0,
        finished: 0,
        failed: 0,
    })
    .expect("append");
    t.wait_for("run finished after 3 s");
    t.send(&["q"]);
    t.wait_for("EXIT:0");
}

#[test]
fn a_run_directory_reloads_and_its_table_is_printed_after_leaving() {
    let args = format!("--run {}", common::arm_1().display());
    let t = Tmux::start("reload", 120, 40, &script(&args));
    t.wait_for("Results · 120");
    t.send(&["q"]);
    let s = t.wait_for("EXIT:0");
    assert!(
        s.contains("| `uHash-1024` | 65536 B | 253.45 M | 3867.4 | 94 ms | 0.7 | 100 (5 × 20) |"),
        "{s}"
    );
}

#[test]
fn a_panic_still_restores_the_terminal() {
    let t = Tmux::start(
        "panic",
        100,
        30,
        &format!("CYCLESCOPE_TEST_PANIC=1 {}", script("")),
    );
    t.wait_for("EXIT:101");
    let s = t.wait_for("MODES-SHOWN");
    assert!(
        s.contains("CYCLESCOPE_TEST_PANIC is set"),
        "the panic message is readable:\n{s}"
    );
    assert!(
        s.lines().any(|l| l == "icanon") && s.lines().any(|l| l == "echo"),
        "{s}"
    );
}

#[test]
fn watch_shows_the_writers_host_problems_and_suggests_resume_when_it_is_gone() {
    use cyclescope_core::record::journal::{JournalEvent, JournalWriter};
    let dir = tempfile::tempdir().expect("temp dir");
    let mut gone = Command::new("true").spawn().expect("true");
    let pid = gone.id();
    gone.wait().expect("wait");
    let mut w = JournalWriter::open(dir.path()).expect("journal");
    w.append(JournalEvent::RunStarted {
        labels: vec!["sm3hash-256".into()],
        lengths: vec![32],
        cpu: 1,
        cpus: vec![1],
        pid,
        reference_jobs: Vec::new(),
    })
    .expect("append");
    w.append(JournalEvent::HostProblems {
        problems: vec!["governor: powersave, not performance".into()],
    })
    .expect("append");
    let args = format!("watch {}", dir.path().display());
    let t = Tmux::start("watch-hints", 120, 36, &script(&args));
    // The Host panel keeps the writer's problem (cut to its width) with the hint naming whose
    // check it was; the log line quoting it in full is soon pushed out by the writer-gone
    // lines, so it is read from the panel, which stays.
    let s = t.wait_for("problem governor: powers");
    assert!(s.contains("accepted by the writing"), "{s}");
    assert!(!s.contains("press r"), "{s}");
    let s = t.wait_for("writer gone · resume with `cyclescope run --resume /");
    assert!(
        s.contains("resume it with `cyclescope run --resume /"),
        "{s}"
    );
    t.send(&["s"]);
    let s = t.wait_for("read-only");
    assert!(!s.contains("s runs again"), "{s}");
    t.send(&["q"]);
    t.wait_for("EXIT:0");
}

/// The Host panel names the protections a worker is under on this machine, from a real
/// worker as `check` asks it (issue 31, item 8).
#[test]
fn the_host_panel_names_the_protections_in_force() {
    let t = Tmux::start("protections", 160, 48, &script(""));
    t.wait_for("Catalog · 0 selected");
    t.send(&["Tab"]);
    t.wait_for("Host · CPU");
    // The protections follow the host checks, which may take a while (the clock probe waits
    // for its CPU): walk the cursor down until they scroll into view.
    let s = t.wait("the protections' rows", |s| {
        let shown = s.contains("seccomp") && s.contains("Landlock") && s.contains("cgroup");
        if !shown {
            t.send(&["j"]);
        }
        shown
    });
    assert!(s.contains("Pass seccomp"), "{s}");
    assert!(s.contains("Landlock"), "{s}");
    t.send(&["q"]);
    t.wait_for("EXIT:0");
}
