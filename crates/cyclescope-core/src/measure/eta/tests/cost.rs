//! The jobs left of an instance at the cost per call its ended jobs took, not at their plans
//! times a pace learnt from short inputs' plans.

use super::*;

/// What a call of instance "x" takes in a loaded run's trials: 2 µs plus 10 ns a byte.
fn loaded_call_s(bytes: u64) -> f64 {
    2e-6 + 1e-8 * bytes as f64
}

/// Five trials of 20 000 calls and three warm-ups.
const CALLS: f64 = 5.0 * 20003.0;

/// A job of `label` at `bytes`, its plan sized from a cold call of `t1` seconds.
fn planned(label: &str, bytes: u64, t1: f64) -> JobTime {
    JobTime {
        estimated_s: Some(CALLS * t1),
        fraction_done: 0.0,
        spent_s: None,
        outside_s: None,
        started_at_s: None,
        call: Some(PlannedCall {
            instance: instance_id("iccs", label),
            input_bytes: bytes,
            t1_s: t1,
            timed_calls: CALLS,
        }),
    }
}

/// A job of "x" that ended at `at`: its calls at the loaded cost, and 0.1 s outside its trials.
/// Its plan came from a cold call that reads no less than 5 µs, as a short input's does.
fn ended_x(bytes: u64, at: f64) -> JobTime {
    JobTime {
        fraction_done: 1.0,
        spent_s: Some(CALLS * loaded_call_s(bytes) + 0.1),
        outside_s: Some(0.1),
        started_at_s: Some(at),
        ..planned("x", bytes, 5e-6)
    }
}

/// The short jobs of "x" that have ended a tenth into a loaded run.
fn short_ones_ended() -> Vec<JobTime> {
    [64, 128, 256, 512, 1024]
        .iter()
        .zip(0..)
        .map(|(&b, i)| ended_x(b, f64::from(i)))
        .collect()
}

#[test]
fn a_longer_input_left_takes_its_calls_at_the_cost_its_instance_ran_at() {
    // A 4 KiB job left, its cold call an eighth of its loaded call (as a long input's is):
    // the short jobs' plans, their cold calls floored at 5 µs, promise more than they took,
    // and at their pace (1.19) its plan says 0.64 s. Its calls take 4.3 s.
    let mut jobs = short_ones_ended();
    jobs.push(planned("x", 4096, loaded_call_s(4096) / 8.0));
    let truth = CALLS * loaded_call_s(4096) + 0.1;
    let eta = seconds_left(&jobs, jobs.len(), 1).expect("planned");
    assert!(
        (eta - truth).abs() < 1e-9,
        "ETA {eta:.3} s, truly {truth:.3} s left"
    );
    assert_eq!(costed_jobs(&jobs), 1);
    let at_the_pace = jobs[5].estimated_s.unwrap() * pace(&jobs).unwrap() + 0.1;
    assert!(at_the_pace < truth / 4.0, "{at_the_pace:.2} s");
    // Half done, half of its calls are left; two lanes share them.
    jobs[5].fraction_done = 0.5;
    jobs[5].spent_s = Some(2.0);
    jobs[5].outside_s = Some(0.1);
    let half = seconds_left(&jobs, jobs.len(), 2).expect("planned");
    assert!(
        (half - CALLS * loaded_call_s(4096) / 4.0).abs() < 1e-9,
        "{half}"
    );
}

#[test]
fn the_line_is_taken_only_near_the_lengths_its_instance_ended_at() {
    let mut jobs = short_ones_ended();
    jobs.extend([
        planned("x", 4096, 5e-6),
        planned("x", 65536, 5e-6),
        planned("x", 32, 5e-6),
        planned("y", 4096, 5e-6),
    ]);
    let cost = |i: usize| call_cost_s(&jobs[i], &jobs);
    assert!(close(cost(5), loaded_call_s(4096)));
    // 64 times the longest ended: the plan at the pace.
    assert_eq!(cost(6), None);
    // Shorter than all ended: the line, but no lower than the cheapest call seen.
    assert!(close(cost(7), loaded_call_s(64)));
    // Another instance's costs say nothing of it.
    assert_eq!(cost(8), None);
    assert_eq!(costed_jobs(&jobs), 2);
    let p = pace(&jobs).unwrap();
    let others = 2.0 * CALLS * 5e-6 * p + 4.0 * 0.1;
    let want = others + CALLS * (loaded_call_s(4096) + loaded_call_s(64));
    assert!(close(seconds_left(&jobs, jobs.len(), 1), want));
}

#[test]
fn one_length_ended_or_a_falling_line_draws_no_cost() {
    let left = planned("x", 2048, 5e-6);
    // Two jobs, one length: no line.
    let one = [ended_x(1024, 0.0), ended_x(1024, 1.0), left];
    assert_eq!(call_cost_s(&one[2], &one), None);
    // The longer input ran cheaper per call than the shorter: noise, not a hash's cost.
    let mut falling = [ended_x(512, 0.0), ended_x(1024, 1.0), left];
    falling[0].spent_s = Some(CALLS * loaded_call_s(2048) + 0.1);
    assert_eq!(call_cost_s(&falling[2], &falling), None);
    // A job whose call is unknown keeps its plan.
    let unknown = [
        ended_x(512, 0.0),
        ended_x(1024, 1.0),
        job(Some(1.0), 0.0, None),
    ];
    assert_eq!(call_cost_s(&unknown[2], &unknown), None);
}
