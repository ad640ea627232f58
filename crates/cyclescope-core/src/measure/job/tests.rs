use super::*;
use crate::measure::plan::TrialPlan;
use rules::disturbed;

#[test]
fn disturbance_follows_the_harness_rule() {
    let t = |c: u64, s: f64| Trial {
        measurements: 1,
        seconds: s,
        cycles: c,
    };
    let clock = Some(2.1e9);
    assert!(!disturbed(&t(2_100_000_000, 1.0), clock));
    assert!(disturbed(&t(1_900_000_000, 1.0), clock));
    assert!(
        !disturbed(&t(1_000, 0.005), clock),
        "short trials are exempt"
    );
    assert!(!disturbed(&t(1_900_000_000, 1.0), None));
}

#[test]
fn preemption_beyond_one_percent_is_a_disturbance() {
    let t = Trial {
        measurements: 100,
        seconds: 1.0,
        cycles: 2_100_000_000,
    };
    assert_eq!(disturbance(&t, Some(5_000_000), None), None);
    let why = disturbance(&t, Some(50_000_000), None).unwrap();
    assert!(why.contains("5.0 %"), "{why}");
    assert_eq!(disturbance(&t, None, None), None);
    let slow = Trial {
        cycles: 1_000_000_000,
        ..t
    };
    assert!(
        disturbance(&slow, Some(0), Some(2.1e9))
            .unwrap()
            .contains("clock")
    );
}

#[test]
fn sample_calls_are_capped_for_slow_calls() {
    let plan = |iters| TrialPlan {
        iterations_per_trial: iters,
        warmups: 3,
        trials: 5,
        separate_processes: true,
        estimated_s: 0.0,
        timeout_per_process_s: 0.0,
    };
    assert_eq!(sample_calls_for(&plan(20_000), 1e-6, 1.0), 20_000);
    assert_eq!(sample_calls_for(&plan(1000), 1e-3, 1.0), 250);
    assert_eq!(sample_calls_for(&plan(20), 0.05, 1.0), 20);
}
