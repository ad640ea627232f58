//! Keys that shape what is shown and what runs next, driven the same way: the results table
//! sorted and exported, `=` for an interleaved A/B, a missing baseline added as a reference
//! job, `w` sweeping an instance, `l` timing the buffer layouts and `i` stepping the counter.

use super::*;

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
