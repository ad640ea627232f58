//! Demo states around runs and verdicts: a second run next to the first (its rows dimmed,
//! the first pinned as the baseline), a run the engine refused on an unfixed host, a run
//! queueing for a CPU another process measures on, and KAT
//! verdicts that are not PASS (NOKAT beside a real failure), a run whose event log the
//! operator scrolled back while lines kept arriving. Built from events like the rest.

use crate::kat::KatStatus;
use std::path::PathBuf;
use std::time::Duration;

use super::script::run_job;
use super::{CLOCK_HZ, finished, idle, key, measuring};
use crate::measure::plan::{Planning, plan};
use crate::tui::app::App;
use crate::vocabulary::EngineEvent;

/// A second run after `finished` (sm3hash-256 at 32 B and 128 B, into its own folder) with
/// the first run pinned as the baseline: the first run's rows stay, dimmed, under their own
/// run number.
pub fn rerun() -> App {
    let mut app = finished();
    app.focus = crate::tui::app::Panel::Results;
    app.results_cursor = 0;
    app.apply(EngineEvent::RunStarted {
        run_dir: PathBuf::from("runs/demo-20260101T000100Z"),
        labels: vec!["sm3hash-256".into()],
        lengths: vec![32, 128],
        cpus: vec![1],
        reference_jobs: Vec::new(),
    });
    app.baseline = Some(0);
    let planning = Planning::new(5, 1.0, 900.0);
    for (bytes, cycles) in [(32, 1455.0), (128, 2968.0)] {
        app.apply(EngineEvent::JobPlanned {
            job: key("sm3hash-256", bytes),
            plan: plan(cycles / CLOCK_HZ, 0.004, &planning),
            t1_s: cycles / CLOCK_HZ,
        });
    }
    run_job(&mut app, ("sm3hash-256", 32, 1455.0), 21);
    run_job(&mut app, ("sm3hash-256", 128, 2968.0), 22);
    app.apply(EngineEvent::RunFinished {
        cancelled: false,
        wall: Duration::from_secs(14),
        finished: 2,
        failed: 0,
    });
    app.results_cursor = 2;
    app
}

/// `s` on a host that fails its checks: the engine refused, no folder was made, and the
/// footer offers `A`.
pub fn refused() -> App {
    let mut app = idle();
    app.log.clear();
    let _ = app.act(crate::tui::action::Action::Start);
    app.refused("clock: not steady: IQR 1.2 % of 2.10 GHz".into(), true);
    app
}

/// `s` again after `finished` while another cyclescope measures on CPU 1: the run queues
/// for it, 12 s so far. The title and the progress line say whom it waits for; neither shows
/// the last run's folder or its jobs as this run's.
pub fn waiting_cpu() -> App {
    let mut app = finished();
    let _ = app.act(crate::tui::action::Action::Start);
    app.clock = 1000.0;
    app.apply(EngineEvent::CpuWaiting {
        cpu: 1,
        holder: "4242 (cyclescope run sm3hash-256 --cpu 1, writing runs/other)".into(),
        limit: Duration::from_secs(600),
    });
    app.clock = 1012.0;
    app
}

/// A candidate whose label has no manifest entry (NOKAT, yellow, not a failure) and one
/// whose digest differs (MISMATCH, red); the cursor on the NOKAT one.
pub fn nokat() -> App {
    let mut app = idle();
    app.log.clear();
    for (label, status, detail) in [
        (
            "pseudohash-512",
            KatStatus::Nokat,
            "KAT_2_12_ShortMsg.txt: no manifest entry (did you mean `pseudohash-1024`?)",
        ),
        (
            "pseudohash-768",
            KatStatus::Mismatch,
            "vector 17 of ShortMsgKAT_768.txt differs",
        ),
    ] {
        app.apply(EngineEvent::KatFinished {
            label: label.into(),
            status,
            detail: detail.into(),
            log: None,
            check: None,
            findings: Vec::new(),
        });
    }
    app.cursor = app
        .tree_rows()
        .iter()
        .position(|r| matches!(r, crate::tui::app::TreeRow::Instance(0, 1)))
        .unwrap_or(0);
    app
}

/// `K` after the KAT manifest broke (edited since the start): the instance reads
/// BADMANIFEST, in the manifest's words with the way on; the library is not blamed.
pub fn bad_manifest() -> App {
    let mut app = idle();
    app.log.clear();
    app.apply(EngineEvent::KatFinished {
        label: "sm3hash-256".into(),
        status: KatStatus::BadManifest,
        detail: "plugins/iccs/kat.sha256:3: not a manifest line (sha256, mode, name)".into(),
        log: None,
        check: None,
        findings: Vec::new(),
    });
    app.focus = crate::tui::app::Panel::Progress;
    app.cursor = app
        .tree_rows()
        .iter()
        .position(|r| matches!(r, crate::tui::app::TreeRow::Instance(0, 0)))
        .unwrap_or(0);
    app
}

/// A run in flight whose event log was scrolled back two lines (↑ in the focused Progress
/// panel) before three more lines arrived: the view stays, the border counts them.
pub fn log_scrolled() -> App {
    let mut app = measuring();
    app.focus = crate::tui::app::Panel::Progress;
    for _ in 0..2 {
        app.on_key(crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Up,
            crossterm::event::KeyModifiers::NONE,
        ));
    }
    for message in [
        "A/B 32 B: B / A = 0.512 (95 % CI 0.505 … 0.519, 10 pairs): B faster (95 % CI below 0.99)",
        "A/B 1 KiB: B / A = 0.988 (95 % CI 0.961 … 1.016, 10 pairs): ≈ noise",
        "load average 1.42 on CPU 1",
    ] {
        app.apply(EngineEvent::Warning {
            message: message.into(),
        });
    }
    app
}
