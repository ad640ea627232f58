//! The doubt rule on constructed evidence: each reason alone, and a clean job with none.

use super::*;
use crate::kat::KatStatus;

fn trial(measurements: u64, seconds: f64, cycles: u64) -> Trial {
    Trial {
        measurements,
        seconds,
        cycles,
    }
}

fn per_call(p1: u64, p50: u64, p99: u64, samples: u64) -> PerCall {
    PerCall {
        samples,
        mean: p50 as f64,
        stdev: 1.0,
        p1,
        p50,
        p90: p50,
        p99,
        max: p99,
        outliers: 0,
    }
}

const PASS: KatVerdict = KatVerdict::Status(KatStatus::Pass);

/// Five undisturbed 1 s trials at 2 GHz, 1000 cycles a call, with a per-call body around it.
fn clean<'a>(trials: &'a [Trial], preempted: &'a [Option<u64>]) -> Evidence<'a> {
    Evidence {
        status: &RecordStatus::Complete,
        kat: &PASS,
        measurements: 10_000_000,
        mean_cycles: Some(1000.0),
        trials,
        preempted_ns: preempted,
        fixed_clock_hz: Some(2e9),
        per_call: Some(per_call(950, 990, 1100, 100_000)),
        per_call_scale: Some(1.0),
        ci95_relative: Some(0.004),
        exact: false,
        failed_check: None,
        fresh_probe: None,
    }
}

const TRIALS: [Trial; 5] = [Trial {
    measurements: 2_000_000,
    seconds: 1.0,
    cycles: 2_000_000_000,
}; 5];

#[test]
fn a_clean_job_has_no_doubt() {
    let pre = [Some(1_000_000); 5];
    assert_eq!(doubts(&clean(&TRIALS, &pre)), vec![]);
}

#[test]
fn a_kept_preempted_trial_is_a_doubt_with_its_reason() {
    // Trial 3 waited 30 ms of its 1 s for the CPU (over the 1 % the engine tolerates).
    let pre = [Some(0), Some(0), Some(30_000_000), Some(0), None];
    let d = doubts(&clean(&TRIALS, &pre));
    assert_eq!(d.len(), 1, "{d:?}");
    let Doubt::DisturbedTrialKept { trials, reason } = &d[0] else {
        panic!("{d:?}")
    };
    assert_eq!(*trials, 1);
    assert!(reason.contains("3.0 %"), "{reason}");
    assert!(d[0].of_figure());
    assert!(d[0].text().contains("3 attempts"), "{}", d[0].text());
}

#[test]
fn a_kept_slow_clock_trial_is_a_doubt_even_without_preemption_figures() {
    // A harness record: no preemption figures, one trial at 1.5 GHz of a 2 GHz fixed clock.
    let mut trials = TRIALS;
    trials[4] = trial(2_000_000, 1.0, 1_500_000_000);
    let d = doubts(&clean(&trials, &[]));
    assert!(
        matches!(&d[..], [Doubt::DisturbedTrialKept { trials: 1, reason }] if reason.contains("clock")),
        "{d:?}"
    );
}

#[test]
fn a_loop_mean_above_the_per_call_body_is_a_doubt() {
    // FEILIAN512 @ 512 B as the issue saw it: p50 5931, p99 7647, loop mean 17.3 k.
    let mut e = clean(&TRIALS, &[]);
    e.mean_cycles = Some(17_300.0);
    e.per_call = Some(per_call(5800, 5931, 7647, 50_000));
    let d = doubts(&e);
    assert_eq!(
        d,
        vec![Doubt::MeanOutsideBody {
            mean: 17_300.0,
            low: 5800.0,
            high: 7647.0
        }]
    );
    assert!(d[0].text().contains("17.3 k"), "{}", d[0].text());
    // Within 10 % above p99 it is still the body (a coarse per-call counter).
    e.mean_cycles = Some(8400.0);
    assert_eq!(doubts(&e), vec![]);
    // Far below p1 too; half of p1 is still accepted (per-call reads cost a little).
    e.mean_cycles = Some(2000.0);
    assert!(matches!(doubts(&e)[..], [Doubt::MeanOutsideBody { .. }]));
    e.mean_cycles = Some(3000.0);
    assert_eq!(doubts(&e), vec![]);
}

#[test]
fn the_body_check_needs_comparable_units_and_enough_samples() {
    let mut e = clean(&TRIALS, &[]);
    e.mean_cycles = Some(17_300.0);
    e.per_call = Some(per_call(5800, 5931, 7647, 50_000));
    // Core cycles against reference ticks with no known ratio: no comparison.
    e.per_call_scale = None;
    assert_eq!(doubts(&e), vec![]);
    // With the ratio (core cycles per tick) the body scales: 7647 × 2.5 > 17.3 k.
    e.per_call_scale = Some(2.5);
    assert_eq!(doubts(&e), vec![]);
    e.per_call_scale = Some(1.0);
    e.per_call = Some(per_call(5800, 5931, 7647, 99));
    assert_eq!(doubts(&e), vec![]);
}

#[test]
fn a_wide_interval_and_the_job_caveats_are_reasons_too() {
    let mut e = clean(&TRIALS, &[]);
    e.ci95_relative = Some(0.25);
    e.measurements = 87;
    let nokat = KatVerdict::Status(KatStatus::Nokat);
    e.kat = &nokat;
    e.status = &RecordStatus::FailedOrPartial;
    let d = doubts(&e);
    assert_eq!(
        d,
        vec![
            Doubt::WideInterval { relative: 0.25 },
            Doubt::FewMeasurements { measurements: 87 },
            Doubt::KatNotPassed {
                kat: "NOKAT".into()
            },
            Doubt::Incomplete {
                status: "failed_or_partial".into()
            },
        ]
    );
    let figure: Vec<bool> = d.iter().map(Doubt::of_figure).collect();
    assert_eq!(figure, [true, false, false, false]);
    assert!(d[0].text().contains("±25 %"), "{}", d[0].text());
    e.ci95_relative = Some(0.10);
    assert!(!doubts(&e).contains(&Doubt::WideInterval { relative: 0.10 }));
}

#[test]
fn doubts_round_trip_through_json() {
    let d = Doubt::MeanOutsideBody {
        mean: 1.0,
        low: 2.0,
        high: 3.0,
    };
    let text = serde_json::to_string(&d).unwrap();
    assert_eq!(
        text,
        r#"{"doubt":"mean_outside_body","mean":1.0,"low":2.0,"high":3.0}"#
    );
    assert_eq!(serde_json::from_str::<Doubt>(&text).unwrap(), d);
}

/// The probe's figure of a job: `twin` and `guide` CPU ns a call.
fn probe(twin: Option<f64>, guide: f64) -> crate::measure::proof::ProbeFigure {
    crate::measure::proof::ProbeFigure {
        cpu_ns_per_call: 300.0,
        calls: 16_384,
        guide_fastest_ns_per_call: guide,
        ratio: 300.0 / guide,
        factor: 2.0,
        loop_ns_per_call: None,
        twin_ns_per_call: twin,
    }
}

#[test]
fn a_probe_whose_twins_never_ran_calm_is_a_doubt_about_the_figure() {
    let pre = [Some(1_000_000); 5];
    // Calm twins (the guide's 165 ns, twins 184 ns: the loop's own cost), or none: clean.
    for figure in [probe(Some(184.0), 165.5), probe(None, 165.5)] {
        let mut e = clean(&TRIALS, &pre);
        e.fresh_probe = Some(&figure);
        assert_eq!(doubts(&e), vec![]);
    }
    // Every twin 1.4 times the guide's figure: the host slowed them all.
    let slowed = probe(Some(231.7), 165.5);
    let mut e = clean(&TRIALS, &pre);
    e.fresh_probe = Some(&slowed);
    let d = doubts(&e);
    assert_eq!(
        d,
        vec![Doubt::ProbeInconclusive {
            twin_ns: 231.7,
            guide_ns: 165.5
        }]
    );
    assert!(d[0].of_figure());
    assert!(
        d[0].text()
            .starts_with("fresh-message probe inconclusive: every twin ran slower"),
        "{}",
        d[0].text()
    );
    assert!(
        d[0].text().contains("232 ns a call, the guide's 166 ns"),
        "{}",
        d[0].text()
    );
    let text = serde_json::to_string(&d[0]).unwrap();
    assert_eq!(serde_json::from_str::<Doubt>(&text).unwrap(), d[0]);
    // A job that failed says why it failed instead.
    e.status = &RecordStatus::FailedOrPartial;
    assert!(
        !doubts(&e)
            .iter()
            .any(|d| matches!(d, Doubt::ProbeInconclusive { .. }))
    );
}
