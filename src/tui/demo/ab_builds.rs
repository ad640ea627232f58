//! The tuning loop on a busy host, as a demo state: sm3hash-256 rebuilt with other flags
//! (`p`, then `s`), the new build's 32 B figure disturbed and kept, so its Δ against the
//! first build is `⚠ doubt`; then `B` measured the build before the rebuild against the new
//! one, interleaved, and its B/A per length stands in Results. Built from events like the rest.

use std::path::PathBuf;
use std::time::Duration;

use super::script::{finish_job, run_job};
use super::{CLOCK_HZ, finished, key, summary};
use crate::build::ProfileChoice;
use crate::campaign::LiveComparison;
use crate::campaign::ab_result::{AbResult, AbSide};
use crate::measure::doubt::Doubt;
use crate::measure::paired::{PairedRatio, RatioBasis};
use crate::measure::plan::{Planning, plan};
use crate::tui::app::{App, Panel, Sources};
use crate::vocabulary::EngineEvent;

const LABEL: &str = "sm3hash-256";

/// B over A at one length: the new build's and the earlier one's means, their ratio.
fn length(bytes: u64, a: f64, b: f64, ci: (f64, f64)) -> LiveComparison {
    LiveComparison {
        input_bytes: bytes,
        a_mean_cycles: Some(a),
        b_mean_cycles: Some(b),
        ratio: Some(PairedRatio {
            pairs: 10,
            ratio: b / a,
            ci95_low: ci.0,
            ci95_high: ci.1,
            basis: RatioBasis::Cycles,
        }),
        problem: None,
    }
}

/// The state: run #1 the guide build, run #2 the `-O3` rebuild (its 32 B figure doubtful),
/// run #3 the A/B of the two builds; the cursor on run #2's 32 B row.
pub fn ab_builds() -> App {
    let mut app = finished();
    for i in &mut app.candidates[0].instances {
        i.flags = "guide".into();
    }
    let instances = app.candidates[0].instances.clone();
    app.sources = Some(Sources::new("subm".into(), &instances));
    let mut rebuilt = instances
        .iter()
        .find(|i| i.label == LABEL)
        .cloned()
        .unwrap_or_else(|| instances[0].clone());
    rebuilt.library = PathBuf::from("cache/trees/o3/iccs/lib/libsm3hash-256.so");
    app.rebuilt(vec![(rebuilt, ProfileChoice::Cflags("-O3".into()))], vec![]);
    app.apply(EngineEvent::RunStarted {
        run_dir: PathBuf::from("runs/demo-20260101T000100Z"),
        labels: vec![LABEL.into()],
        lengths: vec![32, 1024],
        cpus: vec![1],
        reference_jobs: Vec::new(),
    });
    let planning = Planning::new(5, 1.0, 900.0);
    for (bytes, cycles) in [(32, 1290.0), (1024, 20_100.0)] {
        app.apply(EngineEvent::JobPlanned {
            job: key(LABEL, bytes),
            plan: plan(cycles / CLOCK_HZ, 0.004, &planning),
            t1_s: cycles / CLOCK_HZ,
        });
    }
    let mut doubtful = summary(1290.0, 32);
    doubtful.ci95_relative = Some(0.12);
    doubtful.doubts = vec![Doubt::DisturbedTrialKept {
        trials: 2,
        reason: "preempted: waited 41 % of the trial for the CPU".into(),
    }];
    finish_job(&mut app, (LABEL, 32, 1290.0), 31, doubtful);
    run_job(&mut app, (LABEL, 1024, 20_100.0), 32);
    app.apply(EngineEvent::RunFinished {
        cancelled: false,
        wall: Duration::from_secs(12),
        finished: 2,
        failed: 0,
    });
    app.apply(EngineEvent::RunStarted {
        run_dir: PathBuf::from("runs/demo-20260101T000200Z"),
        labels: vec![format!("{LABEL}.prev"), LABEL.into()],
        lengths: vec![32, 1024],
        cpus: vec![1],
        reference_jobs: Vec::new(),
    });
    // Each side's trials are its ordinary jobs of the run; then the comparison arrives.
    let prev = format!("{LABEL}.prev");
    let sides = [
        (prev.as_str(), 32, 1466.0),
        (prev.as_str(), 1024, 23_050.0),
        (LABEL, 32, 1301.0),
        (LABEL, 1024, 20_080.0),
    ];
    for (i, (label, bytes, cycles)) in sides.into_iter().enumerate() {
        app.apply(EngineEvent::JobPlanned {
            job: key(label, bytes),
            plan: plan(cycles / CLOCK_HZ, 0.004, &planning),
            t1_s: cycles / CLOCK_HZ,
        });
        run_job(&mut app, (label, bytes, cycles), 41 + i as u64);
    }
    app.apply(EngineEvent::RunFinished {
        cancelled: false,
        wall: Duration::from_secs(9),
        finished: 4,
        failed: 0,
    });
    let side = |label: &str| AbSide {
        candidate: "iccs".into(),
        label: label.into(),
    };
    app.compared(AbResult {
        a: side(&prev),
        b: side(LABEL),
        pairs_requested: 10,
        lengths: vec![
            length(32, 1466.0, 1301.0, (0.871, 0.904)),
            length(1024, 23_050.0, 20_080.0, (0.861, 0.882)),
        ],
    });
    app.focus = Panel::Results;
    app.results_cursor = app
        .result_rows()
        .iter()
        .position(|r| r.run == 1 && r.key.label == LABEL && r.key.input_bytes == 32)
        .unwrap_or(0);
    app
}
