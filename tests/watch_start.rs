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
    let script = format!("{bin} watch {}; echo \"EXIT:$?\"; sleep 120", dir.display());
    let t = Tmux::start("watch-start", 100, 30, &script);
    t.wait_for("waiting up to 60 s for the run");
    let mut w = JournalWriter::open(&dir).expect("journal");
    w.append(JournalEvent::RunStarted {
        labels: vec!["sm3hash-256".into()],
        lengths: vec![32],
        cpu: 1,
        cpus: vec![1],
        pid: std::process::id(),
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
