//! `watch RUN_DIR` on a run that is just starting: its folder is there but holds no
//! `campaign.json` or journal yet. The watcher waits for the run (bounded) and opens the
//! workbench on it, never the `--lanes` text view of a folder of shards. Real tmux, the real
//! binary, the run's journal written by the engine's own writer once the watcher waits.

mod common;

use common::tmux::Tmux;

#[test]
fn watch_on_a_run_folder_without_campaign_json_yet_waits_and_opens_the_workbench() {
    use cyclescope_core::record::journal::{JournalEvent, JournalWriter};
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("run");
    // What a run holds for its first moments: a folder, nothing of the campaign yet (the
    // watcher used to take it for a folder of shards and show the --lanes text view).
    std::fs::create_dir_all(dir.join("kat")).unwrap();
    let bin = env!("CARGO_BIN_EXE_cyclescope");
    let script = format!("{bin} watch {}; echo \"EXIT:$?\"; sleep 600", dir.display());
    let t = Tmux::start("watch-start", 100, 30, &script);
    t.wait_for("waiting up to 60 s for the run");
    let mut w = JournalWriter::open(&dir).expect("journal");
    w.append(JournalEvent::RunStarted {
        labels: vec!["sm3hash-256".into()],
        lengths: vec![32],
        cpu: 1,
        cpus: vec![1],
        pid: std::process::id(),
        reference_jobs: Vec::new(),
    })
    .expect("append");
    t.wait_for("watching (read-only)");
    w.append(JournalEvent::RunFinished {
        cancelled: false,
        wall_s: 2.0,
        finished: 0,
        failed: 0,
    })
    .expect("append");
    t.wait_for("run finished after 2 s");
    t.send(&["q"]);
    t.wait_for("EXIT:0");
}

#[test]
fn watch_takes_the_instances_from_campaign_json_without_a_config() {
    // A finished ad-hoc run (`--lib`, no config anywhere): the watcher's catalog has only what
    // the run's campaign.json lists, and shows its instance.
    let tmp = tempfile::tempdir().expect("temp dir");
    let source = common::cc::candidate_source("hash-95", "WATCH-256", 256, "", "");
    let lib = common::cc::build_library(tmp.path(), "WATCH-256", &source);
    let run = tmp.path().join("run");
    // With its reference job: the pseudoXOF of its width, which × pseudoXOF divides by.
    let o = common::cyclescope_in(
        tmp.path(),
        &[
            "run",
            "--lib",
            lib.to_str().unwrap(),
            "--lengths",
            "32",
            "--trials",
            "2",
            "--trial-target",
            "0.01",
            "--allow-unfixed-host",
            "--allow-kat-fail",
            "--out",
            run.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", common::output_text(&o));
    std::fs::remove_file(&lib).unwrap();
    let bin = env!("CARGO_BIN_EXE_cyclescope");
    let script = format!("{bin} watch {}; echo \"EXIT:$?\"; sleep 600", run.display());
    let t = Tmux::start_in("watch-campaign", 120, 30, tmp.path(), &script);
    // Its instance in the Catalog, and its row's × pseudoXOF filled (the width comes from the
    // catalog): without campaign.json's instances the catalog lacks it and the ratio is `–`.
    let screen = t.wait_for("[ ] WATCH-256");
    let row = screen
        .lines()
        .find(|l| l.contains("WATCH-256") && l.contains("32 B"))
        .unwrap_or_else(|| panic!("no WATCH-256 row:\n{screen}"));
    assert!(row.contains('×'), "× pseudoXOF empty:\n{screen}");
    t.send(&["q"]);
    t.wait_for("EXIT:0");
}
