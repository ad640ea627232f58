//! End-to-end tests of starting runs from the workbench: the real binary in a detached tmux
//! session of fixed size (own socket per test), driven with `send-keys` and read back with
//! `capture-pane`. A measurement cancelled and started again, an unfixed host refused until
//! the operator consents, Esc mid-run asking first, a refusal on the failing fixture host and
//! an early `A`, `K` running only the KATs, and `T` showing, applying and restoring the tuning
//! plan. Waiting is polling with a generous deadline, never a fixed sleep; without tmux every
//! test fails, saying so.

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
