//! The flows issue 15 asked to make truthful, driven by actions and engine events only:
//! leaving during a run asks first, a refusal reads as one and an early `A` applies to the
//! run being prepared, KATs run alone, watching says what it can, and the ETA learns from
//! the measured job times.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;
use crate::measure::plan::plan;
use crate::tui::action::{Action, Effect};
use crate::tui::demo;
use crate::vocabulary::{EngineEvent, JobKey};

mod next_run;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn logged(app: &App, text: &str) -> bool {
    app.log.iter().any(|l| l.text.contains(text))
}

#[test]
fn leaving_during_a_run_asks_first() {
    let mut app = demo::measuring();
    for leave in [KeyCode::Char('q'), KeyCode::Esc] {
        assert_eq!(app.on_key(key(leave)), None, "{leave:?} must ask");
        assert_eq!(app.mode, Mode::ConfirmQuit);
        // Any other key stays, and the run goes on.
        assert_eq!(app.on_key(key(KeyCode::Char('n'))), None);
        assert_eq!(app.mode, Mode::Normal);
        assert!(app.is_running());
    }
    app.on_key(key(KeyCode::Char('q')));
    assert_eq!(app.on_key(key(KeyCode::Char('y'))), Some(Effect::Quit));
    // Ctrl-C never asks; nor does q once the run is over.
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(demo::measuring().on_key(ctrl_c), Some(Effect::Quit));
    assert_eq!(
        demo::finished().on_key(key(KeyCode::Char('q'))),
        Some(Effect::Quit)
    );
}

#[test]
fn a_refused_run_says_refused_and_offers_a() {
    let app = demo::refused();
    assert_eq!(app.run_word(), "refused");
    assert!(app.consent_applies());
    assert!(app.runs.is_empty(), "a refused run has no folder");
    assert!(!app.is_running());
    assert!(logged(&app, "run refused, host checks failed: clock"));
}

#[test]
fn an_early_a_applies_to_the_run_being_prepared() {
    let mut app = demo::idle();
    let Some(Effect::Start(spec)) = app.act(Action::Start) else {
        panic!("s starts");
    };
    assert!(!spec.allow_unfixed_host);
    assert!(
        app.consent_applies(),
        "A is offered while the gate prepares"
    );
    assert_eq!(app.act(Action::StartAnyway), None);
    assert!(logged(&app, "A applies to the run being prepared"));
    app.refused("clock: not steady".into(), true);
    let Some(Effect::Start(again)) = app.pending.take() else {
        panic!("the refusal starts the run again: {:?}", app.pending);
    };
    assert!(again.allow_unfixed_host && again.allow_kat_fail);
    assert_eq!(again.instances, spec.instances);
    assert_eq!(app.run_word(), "preparing");
    // Once the engine announced the run, its host gate passed: A waits for the next run.
    app.apply(EngineEvent::RunStarted {
        run_dir: "runs/x".into(),
        labels: vec!["sm3hash-256".into()],
        lengths: vec![32],
        cpus: vec![1],
        reference_jobs: Vec::new(),
    });
    app.allow_unfixed_host = false;
    assert_eq!(app.act(Action::StartAnyway), None);
    assert!(logged(&app, "A applies from the next run"));
}

#[test]
fn kats_run_alone_for_the_selection() {
    let mut app = demo::idle();
    let Some(Effect::RunKats(instances)) = app.act(Action::RunKats) else {
        panic!("K runs the KATs");
    };
    let labels: Vec<&str> = instances.iter().map(|i| i.label.as_str()).collect();
    assert_eq!(labels, ["sm3hash-256", "pseudoXOF-512"]);
    assert_eq!(app.run_word(), "checking KATs");
    assert_eq!(
        app.act(Action::Start),
        None,
        "nothing else starts meanwhile"
    );
    assert_eq!(app.act(Action::Cancel), Some(Effect::Cancel));
    app.apply(EngineEvent::KatFinished {
        label: "sm3hash-256".into(),
        status: crate::kat::KatStatus::Pass,
        detail: String::new(),
        log: Some("runs/k/kat/iccs/sm3hash-256.log".into()),
        check: None,
        findings: Vec::new(),
    });
    app.kats_done();
    assert_eq!(app.run_word(), "idle");
    assert!(app.kat_state("sm3hash-256").passed());
    assert!(
        app.kat_logs.contains_key("sm3hash-256"),
        "a later run reuses it"
    );
}

#[test]
fn watching_shows_the_writers_host_problems_and_how_to_resume() {
    let mut app = demo::idle();
    app.read_only = true;
    app.run_dir = Some("runs/other".into());
    app.apply(EngineEvent::RunStarted {
        run_dir: "runs/other".into(),
        labels: vec!["sm3hash-256".into()],
        lengths: vec![32],
        cpus: vec![1],
        reference_jobs: Vec::new(),
    });
    app.apply(EngineEvent::HostProblems {
        problems: vec!["governor is powersave".into()],
    });
    assert_eq!(app.host.len(), 1);
    assert_eq!(app.host[0].status, crate::host::Status::Fail);
    assert_eq!(app.host[0].value, "governor is powersave");
    assert!(
        !app.consent_applies(),
        "nothing to consent to while watching"
    );
    app.writer_lost("process 4242 ended without finishing the run".into());
    assert!(logged(
        &app,
        "resume it with `cyclescope run --resume runs/other`"
    ));
    let status = crate::tui::panel::progress::status_line(&app);
    assert!(status.contains("--resume runs/other"), "{status}");
    app.apply(EngineEvent::RunFinished {
        cancelled: false,
        wall: Duration::from_secs(3),
        finished: 1,
        failed: 0,
    });
    let status = crate::tui::panel::progress::status_line(&app);
    assert!(
        status.contains("read-only") && !status.contains("s runs again"),
        "{status}"
    );
}

#[test]
fn the_eta_learns_from_measured_job_times() {
    let mut app = demo::idle();
    let _ = app.act(Action::Start);
    app.apply(EngineEvent::RunStarted {
        run_dir: "runs/eta".into(),
        labels: vec!["sm3hash-256".into()],
        lengths: vec![32, 1024],
        cpus: vec![1],
        reference_jobs: Vec::new(),
    });
    let planning = crate::measure::Planning::new(5, 1.0, 900.0);
    let p = plan(1e-6, 0.004, &planning);
    let k = |bytes| JobKey {
        candidate: "iccs".into(),
        label: "sm3hash-256".into(),
        input_bytes: bytes,
    };
    for bytes in [32, 1024] {
        app.apply(EngineEvent::JobPlanned {
            job: k(bytes),
            plan: p,
            t1_s: 1e-6,
        });
    }
    let planned = app.eta_seconds().unwrap();
    assert!((planned - 2.0 * p.estimated_s).abs() < 1e-9, "{planned}");
    // The first job: half way through its trials at twice its plan's pace, the ETA already
    // says so (a trial run again, or waiting for its CPU, spends time without work).
    let e = p.estimated_s;
    app.clock = 100.0;
    app.apply(EngineEvent::JobStarted {
        job: k(32),
        cpu: Some(1),
    });
    // Four trials of 25 calls: the events carry the job's calls (`share_done`).
    let progress = |trial, calls_done| EngineEvent::TrialProgress {
        job: k(32),
        trial,
        trials: 4,
        calls_done,
        calls_total: 100,
        snapshot: demo::snapshot(1469.0, 100, 1, 1500.0),
    };
    app.apply(progress(1, 0));
    app.clock = 100.0 + e;
    // Two trials ended, the third running: half the job.
    app.apply(progress(3, 50));
    let eta = app.eta_seconds().unwrap();
    let pace = (e + 0.05 * e) / (0.5 * e + 0.05 * e);
    assert!((eta - 1.5 * e * pace).abs() < 1e-6, "{eta}");
    // It really took 1.3 × its estimate: the rest is expected to as well (the prior, a
    // twentieth of a plan at the plans' pace, pulls a little).
    // Its trials end at 1.3 × its estimate; its probes and record take 0.4 × more, which the
    // next job spends too, whatever its plan (`measure::eta`: not part of the pace).
    app.clock = 100.0 + 1.3 * e;
    app.apply(progress(4, 100));
    app.clock = 100.0 + 1.7 * e;
    app.apply(EngineEvent::JobFinished {
        job: k(32),
        summary: Box::new(demo::summary(1469.0, 32)),
        record: "r.json".into(),
        snapshot: None,
    });
    let eta = app.eta_seconds().unwrap();
    assert!((eta - (e * 1.35 / 1.05 + 0.4 * e)).abs() < 1e-6, "{eta}");
}
