use super::*;
use crate::measure::stats::new_histogram;

/// A small deterministic generator: the same samples on every host.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `n` calls of about `cost` ticks (±2 %, in 26-tick steps like this VM's TSC); `hit` of them
/// interrupted, each by 1× to 200× its cost.
fn trial(rng: &mut Lcg, n: u64, cost: f64, hit: f64) -> Histogram<u64> {
    let mut h = new_histogram();
    for _ in 0..n {
        let mut v = cost * (0.98 + 0.04 * rng.next());
        if rng.next() < hit {
            v += cost * (1.0 + 199.0 * rng.next());
        }
        let stepped = ((v / 26.0).round() * 26.0).max(1.0);
        h.record(stepped as u64).unwrap();
    }
    h
}

#[test]
fn interruptions_up_to_half_of_the_calls_do_not_move_the_body() {
    for cost in [1638.0, 12_560.0, 822_000.0] {
        let quiet = trial_body(&trial(&mut Lcg(1), 2000, cost, 0.0)).unwrap();
        for hit in [0.05, 0.2, 0.45] {
            let h = trial(&mut Lcg(2), 2000, cost, hit);
            let loaded = trial_body(&h).unwrap();
            let moved = loaded.mean_ticks / quiet.mean_ticks;
            assert!((moved - 1.0).abs() < 0.01, "{cost} at {hit}: ×{moved}");
            // The plain mean is what the guide's loop sees: far off.
            assert!(
                h.mean() / quiet.mean_ticks > 1.0 + 10.0 * hit,
                "{cost} at {hit}"
            );
            let share = loaded.excluded as f64 / 2000.0;
            assert!((share - hit).abs() < 0.05, "{cost} at {hit}: {share}");
        }
        assert_eq!(quiet.excluded, 0, "an untouched trial loses no call");
    }
}

#[test]
fn the_fence_allows_ten_lower_spreads_and_never_less_than_ten_percent() {
    assert_eq!(fence(1500, 1600), 1600 + 10 * 100);
    assert_eq!(fence(1600, 1600), 1600 + 10 * 16);
    assert_eq!(fence(0, 0), 10);
}

#[test]
fn too_few_samples_make_no_body() {
    let mut h = new_histogram();
    for v in 0..MIN_TRIAL_SAMPLES - 1 {
        h.record(100 + v).unwrap();
    }
    assert_eq!(trial_body(&h), None);
    h.record(100).unwrap();
    assert!(trial_body(&h).is_some());
}

#[test]
fn a_trial_line_closes_the_samples_that_came_before_it() {
    let mut b = TrialBodies::default();
    b.trial_line(); // trial 1's line: nothing sampled before it
    b.samples(&[1000; 50]);
    b.trial_line(); // trial 2's line: the 50 samples were trial 1's
    b.samples(&[2000; 50]);
    let bodies = b.finish();
    let means: Vec<f64> = bodies.iter().map(|b| b.mean_ticks.round()).collect();
    assert_eq!(means, [1000.0, 2000.0]);
}

#[test]
fn the_figure_is_the_mean_of_trials_with_a_t_interval() {
    let body = |m: f64| TrialBody {
        mean_ticks: m,
        calls: 100,
        excluded: 5,
    };
    let r = of_trials(&[body(90.0), body(100.0), body(110.0)], 2.0).unwrap();
    assert_eq!(r.mean_cycles, 200.0);
    let half = 4.303 * 20.0 / 3f64.sqrt();
    assert!((r.ci95_high.unwrap() - 200.0 - half).abs() < 1e-2, "{r:?}");
    assert_eq!((r.trials, r.calls, r.excluded), (3, 300, 15));
    assert_eq!(r.statistic, STATISTIC);
    assert!(!r.is_sound(), "±{:?} is wider than 10 %", r.ci95_relative());
    assert!(r.text().ends_with('⚠'), "{}", r.text());
    let tight = of_trials(&[body(100.0), body(100.5), body(99.5)], 1.0).unwrap();
    assert!(tight.is_sound() && !tight.text().contains('⚠'), "{tight:?}");
    let one = of_trials(&[body(100.0)], 1.0).unwrap();
    assert_eq!((one.ci95_low, one.is_sound()), (None, false));
    assert!(one.text().contains("one trial"), "{}", one.text());
    assert_eq!(of_trials(&[], 1.0), None);
    assert_eq!(of_trials(&[body(1.0)], f64::NAN), None);
}
