//! The engine events that build the demo states: a run started, its KATs passed, its jobs
//! planned, started, progressing and finished on the demo clock. The states call these in
//! order; nothing here draws or reads the terminal.

use std::path::PathBuf;

use super::{CLOCK_HZ, FIGURES, key, snapshot, summary};
use crate::kat::KatStatus;
use crate::measure::doubt::Doubt;
use crate::measure::plan::{Planning, plan};
use crate::tui::app::App;
use crate::vocabulary::{EngineEvent, JobSummary};

pub(super) fn start(app: &mut App, labels: &[&str]) {
    app.apply(EngineEvent::RunStarted {
        run_dir: PathBuf::from("runs/demo-20260101T000000Z"),
        labels: labels.iter().map(|l| l.to_string()).collect(),
        lengths: vec![32, 1024],
        cpus: vec![1],
        reference_jobs: Vec::new(),
    });
    for l in labels {
        app.apply(EngineEvent::KatStarted {
            label: l.to_string(),
        });
    }
}

pub(super) fn kat_pass(app: &mut App, label: &str) {
    app.apply(EngineEvent::KatFinished {
        label: label.into(),
        status: KatStatus::Pass,
        detail: "3 files, 1025 vectors".into(),
        log: Some(PathBuf::from(format!(
            "runs/demo-20260101T000000Z/kat/iccs/{label}.log"
        ))),
        check: None,
        findings: Vec::new(),
    });
}

pub(super) fn run_job(app: &mut App, (label, bytes, cycles): (&str, u64, f64), seed: u64) {
    finish_job(app, (label, bytes, cycles), seed, summary(cycles, bytes));
}

/// Seconds each demo job takes on the events' clock (the ETA's measured time).
const JOB_SECONDS: f64 = 6.0;

pub(super) fn finish_job(
    app: &mut App,
    (label, bytes, cycles): (&str, u64, f64),
    seed: u64,
    s: JobSummary,
) {
    let k = key(label, bytes);
    app.apply(EngineEvent::JobStarted {
        job: k.clone(),
        cpu: Some(1),
    });
    // Its trials take all of its time (none outside them, `measure::eta`).
    let progress = |trial, calls_done| EngineEvent::TrialProgress {
        job: k.clone(),
        trial,
        trials: 5,
        calls_done,
        calls_total: 20_000,
        snapshot: snapshot(cycles * 1.02, calls_done.max(1), seed, cycles),
    };
    app.apply(progress(1, 0));
    app.clock += JOB_SECONDS;
    app.apply(progress(5, 20_000));
    app.apply(EngineEvent::JobFinished {
        job: k,
        #[allow(clippy::useless_conversion)]
        summary: s.into(),
        record: PathBuf::from(format!("records/iccs/{label}__hash_{bytes}.json")),
        snapshot: Some(snapshot(cycles * 1.02, 20_000, seed, cycles)),
    });
}

/// pseudoXOF-512 @ 1 KiB as a busy host leaves it: two disturbed attempts re-run, the third
/// disturbed too and kept (the doubt rule marks it), a wider interval.
pub(super) fn disturbed_job(app: &mut App, seed: u64) {
    let (label, bytes, cycles) = FIGURES[1];
    let k = key(label, bytes);
    for _ in 0..2 {
        app.apply(EngineEvent::TrialRetried {
            job: k.clone(),
            trial: 4,
            reason: "preempted: waited 6.1 % of the trial for the CPU".into(),
            cpu_wait: None,
        });
    }
    let mut s = summary(cycles, bytes);
    s.disturbed_retries = 2;
    s.ci95_relative = Some(0.031);
    s.doubts = vec![Doubt::DisturbedTrialKept {
        trials: 1,
        reason: "preempted: waited 5.2 % of the trial for the CPU".into(),
    }];
    finish_job(app, FIGURES[1], seed, s);
}

pub(super) fn plan_all(app: &mut App) {
    let planning = Planning::new(5, 1.0, 900.0);
    for (label, bytes, cycles) in FIGURES {
        app.apply(EngineEvent::JobPlanned {
            job: key(label, bytes),
            plan: plan(cycles / CLOCK_HZ, 0.004, &planning),
            t1_s: cycles / CLOCK_HZ,
        });
    }
}
