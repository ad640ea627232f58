//! End-to-end tests of the workbench: the real binary in a detached tmux session of fixed
//! size (own socket per test), driven with `send-keys` and read back with `capture-pane`.
//! Waiting is polling with a generous deadline, never a fixed sleep. Without tmux every test
//! fails, saying so (CI installs it): a missing tool never passes for a tested screen.

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

/// Selects pseudoXOF-512 and sm3hash-256, keeps 32 B and 1 KiB.
fn select_the_issue_example(t: &Tmux) {
    t.wait_for("Catalog · 0 selected");
    // sm3hash-256 is the first instance, pseudoXOF-512 the seventh.
    t.send(&["j", "Space", "j", "j", "j", "j", "j", "j", "Space"]);
    t.wait_for("Catalog · 2 selected");
    for k in ["2", "3", "5", "6", "7", "8"] {
        t.send(&[k]);
    }
    t.wait_for("32 B · 1 KiB");
}

#[test]
fn measure_cancel_and_measure_again() {
    // Trials of 0.2 s keep each job on screen for about a second: long enough for polling to
    // see a running trial and to cancel after the first result.
    let args = "--trial-target 0.2 --allow-unfixed-host";
    // Runs go to `runs/` under the working folder: a temporary one, with the repository's
    // catalog named explicitly.
    let cwd = tempfile::tempdir().expect("temp dir");
    let args = format!("--config {}/config.toml {args}", env!("CARGO_MANIFEST_DIR"));
    let t = Tmux::start_in("measure", 120, 36, cwd.path(), &script(&args));
    select_the_issue_example(&t);
    t.send(&["s"]);
    // KAT verdicts stay in the catalog; the histogram's title names the running trial.
    t.wait_for("sm3hash-256      256 PASS");
    t.wait_for("pseudoXOF-512    512 PASS");
    t.wait_for("· trial ");
    t.wait_for("Results · 1/4 jobs");
    t.send(&["c"]);
    t.wait_for("cancelled ·");
    t.send(&["s"]);
    // The cancelled run was #1; the second start is a run of its own, its rows first.
    let s = t.wait_for("Results · 4/4 jobs of run #2");
    // Each row says its run; the first run's row stays, under #1.
    assert!(
        s.contains("✓ #2  pseudoXOF-512") || s.contains("⚠ #2  pseudoXOF-512"),
        "{s}"
    );
    assert!(s.contains("#2  sm3hash-256   1 KiB"), "{s}");
    assert!(s.contains("⚠ #1  ") || s.contains("✓ #1  "), "{s}");
    // The last result arrives just before the run ends; q in between would ask first.
    t.wait_for("cyclescope │ finished");
    t.send(&["q"]);
    t.wait_for("EXIT:0");
    // The printed table with its notes can be longer than the pane: read the scrollback too.
    let out = t.tmux(&["capture-pane", "-p", "-J", "-S", "-400"]);
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("| `sm3hash-256` | 32 B |"),
        "the table is printed after leaving:\n{s}"
    );
    assert!(
        s.contains("cycles: tsc (") || s.contains("cycles: perf_event"),
        "the printed table says what measured it:\n{s}"
    );
}

#[test]
fn without_the_flag_an_unfixed_host_is_refused_until_the_operator_consents() {
    // Launched as `cargo run --release` does: no host flag. On a host whose checks fail (this
    // VM has no PMU) start is refused with a pointer to A; A measures and stores the problems.
    let cwd = tempfile::tempdir().expect("temp dir");
    let args = format!(
        "--config {}/config.toml --trial-target 0.05",
        env!("CARGO_MANIFEST_DIR")
    );
    let t = Tmux::start_in("consent", 120, 36, cwd.path(), &script(&args));
    t.wait_for("Catalog · 0 selected");
    t.send(&["j", "Space"]); // sm3hash-256
    t.wait_for("Catalog · 1 selected");
    for k in ["2", "3", "4", "5", "6", "7", "8"] {
        t.send(&[k]);
    }
    t.send(&["s"]);
    let s = t.wait("a refusal or a result", |s| {
        s.contains("A: measure anyway") || s.contains("Results · 1/1 jobs")
    });
    let refused = s.contains("A: measure anyway");
    if refused {
        t.send(&["A"]);
    }
    t.wait_for("Results · 1/1 jobs of run #1");
    // The last result arrives just before the run ends; q in between would ask first.
    t.wait_for("run finished after");
    t.send(&["q"]);
    t.wait_for("EXIT:0");
    let record = common::run_folders(&cwd.path().join("runs"))
        .into_iter()
        .map(|p| p.join("records/iccs/sm3hash-256__hash_32.json"))
        .find(|p| p.exists())
        .expect("a record");
    let rec: serde_json::Value = serde_json::from_slice(&std::fs::read(record).unwrap()).unwrap();
    let problems = rec["cyclescope"]["host_problems"].as_array().unwrap();
    assert_eq!(refused, !problems.is_empty(), "{problems:?}");
    assert_eq!(rec["cyclescope"]["tui_attached"], true);
}

/// The untuned-laptop fixture tree: host checks that fail on any machine.
fn failing_host_root() -> String {
    format!(
        "{}/tests/fixtures/host/untuned-laptop",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn esc_mid_run_asks_first_and_leaving_says_how_to_resume() {
    let cwd = tempfile::tempdir().expect("temp dir");
    let args = format!(
        "--config {}/config.toml --trial-target 0.5 --allow-unfixed-host",
        env!("CARGO_MANIFEST_DIR")
    );
    let t = Tmux::start_in("leave", 120, 36, cwd.path(), &script(&args));
    select_the_issue_example(&t);
    t.send(&["s"]);
    t.wait_for("· trial ");
    // One Esc no longer drops the campaign: it asks, and another key stays.
    t.send(&["Escape"]);
    t.wait_for("leave during the run (");
    t.send(&["n"]);
    // Back to the keys of a running run: the prompt is gone, the run goes on.
    t.wait("the prompt closed", |s| {
        s.contains("c cancel") && !s.contains("leave during the run (")
    });
    t.send(&["q"]);
    t.wait_for("y leave (the run stops");
    t.send(&["y"]);
    let s = t.wait_for("EXIT:0");
    let line = s
        .lines()
        .find(|l| l.starts_with("incomplete "))
        .unwrap_or_else(|| panic!("no incomplete line:\n{s}"));
    assert!(
        line.contains(" — resume with `cyclescope run --resume runs/tui-"),
        "{line}"
    );
    // The hint works: the named folder resumes to the end.
    let dir = line
        .split("--resume ")
        .nth(1)
        .and_then(|r| r.strip_suffix('`'))
        .expect("a folder in the hint");
    let out = common::cyclescope()
        .args([
            "--config",
            &format!("{}/config.toml", env!("CARGO_MANIFEST_DIR")),
            "run",
            "--resume",
            dir,
        ])
        .current_dir(cwd.path())
        .output()
        .expect("cyclescope run --resume");
    assert!(out.status.success(), "{out:?}");
    let records = std::fs::read_dir(cwd.path().join(dir).join("records/iccs"))
        .expect("records")
        .count();
    assert_eq!(
        records, 4,
        "every job of the run is recorded after resuming"
    );
}

#[test]
fn a_refused_start_reads_refused_leaves_no_folder_and_a_measures_anyway() {
    let cwd = tempfile::tempdir().expect("temp dir");
    let args = format!(
        "--config {}/config.toml --trial-target 0.05 --host-root {}",
        env!("CARGO_MANIFEST_DIR"),
        failing_host_root()
    );
    let t = Tmux::start_in("refused", 100, 30, cwd.path(), &script(&args));
    t.wait_for("Catalog · 0 selected");
    t.send(&["j", "Space"]); // sm3hash-256
    t.wait_for("Catalog · 1 selected");
    for k in ["2", "3", "4", "5", "6", "7", "8"] {
        t.send(&[k]);
    }
    t.wait_for("Fail");
    t.send(&["s"]);
    let s = t.wait_for("│ refused │");
    assert!(!s.contains("finished ·"), "{s}");
    assert!(s.contains("A: measure anyway"), "{s}");
    // At 100 columns the footer lists A and is not cut.
    let footer = s
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default();
    assert!(
        footer.contains("A anyway") && footer.trim_end().ends_with("q quit"),
        "{footer}"
    );
    assert!(
        common::run_folders(&cwd.path().join("runs")).is_empty(),
        "a refused run leaves no folder"
    );
    t.send(&["A"]);
    t.wait_for("Results · 1/1 jobs of run #1");
    let runs = common::run_folders(&cwd.path().join("runs"));
    assert_eq!(runs.len(), 1, "one folder, for the run that measured");
    let rec: serde_json::Value = serde_json::from_slice(
        &std::fs::read(runs[0].join("records/iccs/sm3hash-256__hash_32.json")).unwrap(),
    )
    .unwrap();
    assert!(
        !rec["cyclescope"]["host_problems"]
            .as_array()
            .unwrap()
            .is_empty(),
        "the consented problems are stored"
    );
    // The last result arrives just before the run ends; q in between would ask first.
    t.wait_for("run finished after");
    t.send(&["q"]);
    t.wait_for("EXIT:0");
}

#[test]
fn an_early_a_applies_to_the_run_being_prepared() {
    let cwd = tempfile::tempdir().expect("temp dir");
    let args = format!(
        "--config {}/config.toml --trial-target 0.05 --host-root {}",
        env!("CARGO_MANIFEST_DIR"),
        failing_host_root()
    );
    let t = Tmux::start_in("early-a", 100, 48, cwd.path(), &script(&args));
    t.wait_for("Catalog · 0 selected");
    t.send(&["j", "Space"]);
    t.wait_for("Catalog · 1 selected");
    for k in ["2", "3", "4", "5", "6", "7", "8"] {
        t.send(&[k]);
    }
    t.wait_for("Fail");
    // s and A in one write: A reaches the workbench while the gate prepares the run (or,
    // if the gate was quicker, right after its refusal: then it starts the run itself).
    // Either way A is not dropped: the run measures, in one folder.
    t.type_text("sA");
    t.wait_for("Results · 1/1 jobs of run #1");
    // The last result arrives just before the run ends; q in between would ask first.
    t.wait_for("run finished after");
    t.send(&["q"]);
    t.wait_for("EXIT:0");
    let runs = common::run_folders(&cwd.path().join("runs")).len();
    assert_eq!(runs, 1, "the refused attempt left no folder");
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

#[test]
fn k_runs_only_the_kats_of_the_selection() {
    let cwd = tempfile::tempdir().expect("temp dir");
    let args = format!("--config {}/config.toml", env!("CARGO_MANIFEST_DIR"));
    let t = Tmux::start_in("kats", 120, 36, cwd.path(), &script(&args));
    t.wait_for("Catalog · 0 selected");
    t.send(&["j", "Space"]); // sm3hash-256
    t.wait_for("Catalog · 1 selected");
    t.send(&["K"]);
    t.wait_for("sm3hash-256      256 PASS");
    let s = t.wait_for("│ idle │");
    assert!(s.contains("Results · 0"), "nothing measured:\n{s}");
    t.send(&["q"]);
    t.wait_for("EXIT:0");
    // The KAT log went into a run folder of its own; no records.
    let runs = common::run_folders(&cwd.path().join("runs"));
    assert_eq!(runs.len(), 1);
    assert!(runs[0].join("kat/iccs/sm3hash-256.log").is_file());
    assert!(!runs[0].join("records").exists());
}

#[test]
fn t_shows_the_tuning_plan_applies_it_and_restores_it() {
    let cwd = tempfile::tempdir().expect("temp dir");
    let tree = cwd.path().join("tree");
    let copied = Command::new("cp")
        .arg("-a")
        .arg(failing_host_root())
        .arg(&tree)
        .output()
        .expect("cp");
    assert!(copied.status.success(), "{copied:?}");
    let file = |rel: &str| std::fs::read(tree.join(rel)).unwrap();
    let irq0 = "proc/irq/0/smp_affinity_list";
    let before = file(irq0);
    let args = format!(
        "--config {}/config.toml --cpu 1 --host-root {}",
        env!("CARGO_MANIFEST_DIR"),
        tree.display()
    );
    let t = Tmux::start_in("tune", 140, 40, cwd.path(), &script(&args));
    t.wait_for("Catalog · 0 selected");
    t.send(&["T"]);
    t.wait_for("T again applies this");
    assert_eq!(file(irq0), before, "showing the plan changed the tree");
    t.send(&["T"]);
    t.wait_for("T again restores");
    assert_eq!(file(irq0), b"0,2-3");
    t.send(&["T"]);
    t.wait_for("tune: restored 4 setting(s)");
    assert_eq!(file(irq0), before);
    // Applied again and left with q: leaving restores.
    t.send(&["T"]);
    t.wait_for("T again applies this");
    t.send(&["T"]);
    t.wait_for("T again restores");
    t.send(&["q"]);
    t.wait_for("EXIT:0");
    assert_eq!(file(irq0), before);
    assert!(!tree.join("run/cyclescope/tune-restore.json").exists());
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
