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

#[test]
fn results_sort_by_any_column_and_export_on_request() {
    let mut app = demo::finished();
    let order = |app: &App| -> Vec<(String, u64)> {
        app.result_rows()
            .iter()
            .map(|r| (r.key.label.clone(), r.key.input_bytes))
            .collect()
    };
    let report = order(&app);
    assert_eq!(report[0], ("sm3hash-256".into(), 32));
    // o: instance, message, mean cycles, …; O reverses.
    app.act(Action::SortResults);
    app.act(Action::SortResults);
    app.act(Action::SortResults);
    assert_eq!(app.results_sort, Some((2, false)));
    let by_mean: Vec<u64> = app
        .result_rows()
        .iter()
        .map(|r| r.summary.and_then(|s| s.mean_cycles).unwrap_or(0.0) as u64)
        .collect();
    assert_eq!(by_mean, [1469, 3009, 23_000, 46_200]);
    app.act(Action::ReverseSort);
    assert_eq!(
        order(&app)[0],
        ("pseudoXOF-512".into(), 1024),
        "largest mean first"
    );
    for _ in 0..5 {
        app.act(Action::SortResults);
    }
    // The last column: × pseudoXOF. pseudoXOF-512 divides by itself (1.00×); sm3hash-256 has
    // no pseudoXOF-256 in the session, so no ratio, and sorts after the rows that have one.
    assert_eq!(app.results_sort, Some((7, true)));
    let ratios: Vec<Option<f64>> = app
        .result_rows()
        .iter()
        .map(|r| r.x_pseudoxof.map(|x| x.value))
        .collect();
    assert_eq!(ratios, [Some(1.0), Some(1.0), None, None]);
    app.act(Action::SortResults);
    assert_eq!(
        app.results_sort, None,
        "after the last column: the report's order"
    );
    assert_eq!(order(&app), report);
    assert_eq!(app.act(Action::Export), Some(Effect::Export));
    assert_eq!(demo::idle().act(Action::Export), None, "nothing to export");
}

#[test]
fn equals_starts_an_interleaved_a_b_of_exactly_two_instances() {
    let mut app = demo::idle();
    let Some(Effect::Start(spec)) = app.on_key(key(KeyCode::Char('='))) else {
        panic!("= with two selected starts the A/B");
    };
    assert_eq!(spec.interleaved_pairs, Some(10));
    assert_eq!(spec.instances.len(), 2);
    assert!(logged(&app, "A/B: "));
    // Its outcome is logged per length, ratio and interval first.
    let row = crate::campaign::LiveComparison {
        input_bytes: 1024,
        a_mean_cycles: Some(100.0),
        b_mean_cycles: Some(50.0),
        ratio: Some(crate::measure::paired::PairedRatio {
            pairs: 2,
            ratio: 0.5,
            ci95_low: 0.49,
            ci95_high: 0.51,
            basis: crate::measure::paired::RatioBasis::Cycles,
        }),
        problem: None,
    };
    let side = |l: &str| crate::campaign::ab_result::AbSide {
        candidate: "iccs".into(),
        label: l.into(),
    };
    app.compared(crate::campaign::ab_result::AbResult {
        a: side("a"),
        b: side("b"),
        pairs_requested: 2,
        lengths: vec![row],
    });
    assert_eq!(app.ab_results.len(), 1, "a result of the run");
    assert!(logged(
        &app,
        "A/B 1 KiB: b / a = 0.500 (95 % CI 0.490 … 0.510, 2 pairs): B faster"
    ));
    // One instance is not a pair.
    let mut app = demo::idle();
    app.selected.retain(|l| l == "sm3hash-256");
    assert_eq!(app.on_key(key(KeyCode::Char('='))), None);
    assert!(logged(
        &app,
        "A/B needs exactly two selected instances, not 1"
    ));
    assert!(!app.is_running());
}

#[test]
fn a_run_adds_the_missing_baseline_as_a_reference_job_and_divides_by_it() {
    let mut cat = demo::catalog();
    let mut feilian = cat.candidates[0].instances[0].clone();
    feilian.candidate = "hash-10".into();
    feilian.label = "FEILIAN512".into();
    feilian.digest_bits = 512;
    cat.candidates.push(crate::catalog::Candidate {
        id: "hash-10".into(),
        algorithm: "FEILIAN".into(),
        instances: vec![feilian],
    });
    let mut app = App::new(cat.candidates, &cat.settings, 4);
    app.selected.insert("FEILIAN512".into());
    app.lengths = vec![1024];
    let Some(Effect::Start(spec)) = app.act(Action::Start) else {
        panic!("no start");
    };
    assert!(
        spec.reference_pool
            .iter()
            .any(|i| i.label == "pseudoXOF-512"),
        "{:?}",
        spec.reference_pool
    );
    assert!(logged(
        &app,
        "reference jobs for × pseudoXOF (baseline iccs): pseudoXOF-512"
    ));
    // The engine announces the reference jobs it added; the marks follow that run.
    app.apply(EngineEvent::RunStarted {
        run_dir: "runs/tui-1".into(),
        labels: vec!["FEILIAN512".into(), "pseudoXOF-512".into()],
        lengths: vec![1024],
        cpus: vec![1],
        reference_jobs: vec!["pseudoXOF-512".into()],
    });
    let finished = |label: &str, candidate: &str, cycles: f64| EngineEvent::JobFinished {
        job: JobKey {
            candidate: candidate.into(),
            label: label.into(),
            input_bytes: 1024,
        },
        summary: Box::new(demo::summary(cycles, 1024)),
        record: "r.json".into(),
        snapshot: None,
    };
    app.apply(finished("FEILIAN512", "hash-10", 17_900.0));
    app.apply(finished("pseudoXOF-512", "iccs", 44_750.0));
    let rows = app.result_rows();
    let row = |l: &str| rows.iter().find(|r| r.key.label == l).unwrap();
    assert_eq!(row("FEILIAN512").x_pseudoxof.map(|x| x.value), Some(0.4));
    assert!(row("pseudoXOF-512").reference && !row("FEILIAN512").reference);
    // Each run divides by its own baseline: the next run measures it again.
    app.run = RunState::Idle;
    let Some(Effect::Start(again)) = app.act(Action::Start) else {
        panic!("no second start");
    };
    assert!(
        again
            .reference_pool
            .iter()
            .any(|i| i.label == "pseudoXOF-512")
    );
}

#[test]
fn w_sweeps_the_instance_under_the_cursor_and_its_fit_joins_the_curve() {
    use crate::sweep::{InstanceSweep, PointStatistic, SweepFile, SweepLengths, SweepPoint, fit};
    let mut app = demo::finished();
    let Some(Effect::Sweep(spec)) = app.act(Action::Sweep) else {
        panic!("w starts a sweep");
    };
    let [inst] = spec.instances.as_slice() else {
        panic!("one instance: {:?}", spec.instances);
    };
    assert_eq!(spec.lengths, SweepLengths::default().coarse());
    assert_eq!(
        app.act(Action::Start),
        None,
        "nothing else starts meanwhile"
    );
    // The fits arrive: a model of 64-byte blocks, with one preempted point.
    let points: Vec<SweepPoint> = (1..=64u64)
        .map(|k| 8 * k)
        .chain(49..56)
        .map(|n| SweepPoint {
            input_bytes: n,
            cycles: (150 + 700 * (n + 9).div_ceil(64)) as f64 * if n == 200 { 3.0 } else { 1.0 },
        })
        .collect();
    let model = fit::fit(&points).unwrap();
    assert_eq!(model.outliers, vec![200]);
    app.swept(SweepFile {
        lengths: SweepLengths::default(),
        adaptive_precision: Some(0.01),
        instances: vec![InstanceSweep {
            candidate: inst.candidate.clone(),
            label: inst.label.clone(),
            statistic: PointStatistic::PerCallLow,
            counter: "tsc".into(),
            points,
            model: Some(model),
            unfitted: None,
        }],
    });
    assert!(logged(&app, "block 64 B, padding threshold 9 B"));
    let curves = app.curves();
    let fit = curves
        .iter()
        .find(|c| c.label.contains("fit"))
        .expect("a fit series");
    assert!(fit.reference && fit.label.contains("⌈(n+9)/64⌉"), "{fit:?}");
    let marks = curves
        .iter()
        .find(|c| c.outliers)
        .expect("the outlier marks");
    assert_eq!(marks.points.len(), 1);
    assert_eq!(marks.points[0].0, 200);
}

#[test]
fn l_starts_a_run_that_times_the_buffer_layouts_too() {
    let mut app = demo::idle();
    let Some(Effect::Start(spec)) = app.act(Action::StartLayouts) else {
        panic!("L starts");
    };
    assert!(spec.layouts);
    assert_eq!(app.last_spec.as_ref().map(|s| s.layouts), Some(true));
    let mut plain = demo::idle();
    let Some(Effect::Start(spec)) = plain.act(Action::Start) else {
        panic!("s starts");
    };
    assert!(!spec.layouts, "s keeps the guide's layout alone");
}

#[test]
fn i_steps_the_next_runs_counter_through_exact_and_hardware_instructions_and_back() {
    use crate::counter::RunCounter;
    let mut app = demo::idle();
    assert_eq!(app.act(Action::ToggleCounter), None);
    assert_eq!(app.counter, RunCounter::Instructions);
    assert!(
        app.log
            .last()
            .is_some_and(|l| l.text.contains("instructions")),
        "the log says which counter"
    );
    let Some(Effect::Start(spec)) = app.act(Action::Start) else {
        panic!("s starts");
    };
    assert_eq!(spec.counter, RunCounter::Instructions);
    // Twice is the PMU's instructions, three times back to cycles.
    let mut again = demo::idle();
    again.act(Action::ToggleCounter);
    again.act(Action::ToggleCounter);
    assert_eq!(again.counter, RunCounter::HwInstructions);
    assert!(
        again
            .log
            .last()
            .is_some_and(|l| l.text.contains("hw-instructions")),
        "the log says which counter"
    );
    again.act(Action::ToggleCounter);
    let Some(Effect::Start(spec)) = again.act(Action::Start) else {
        panic!("s starts");
    };
    assert_eq!(spec.counter, RunCounter::Cycles);
}
