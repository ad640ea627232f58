//! Planning a measurement exactly as the harness's `plan()` (spec §3.2): from one calibration
//! call's time `t1` and the process set-up time, how many calls per trial, how many trials,
//! warm-ups, whether each trial gets its own process, and the timeouts. Pure arithmetic.
//! One departure from the harness: a trial process's deadline is a multiple of what the plan
//! expects of it (with a small floor), not the harness's 300 s added to every process, so a
//! candidate that is slow past its calibration fails in seconds instead of minutes.

use serde::{Deserialize, Serialize};

/// Attempts per trial process when a trial was disturbed (slow clock, preempted): the last is
/// kept whatever it shows, as the harness does, and the figure is then marked doubtful.
pub(crate) const MAX_ATTEMPTS: u32 = 3;

/// The guide's minimum number of measurements.
pub(crate) const MIN_TOTAL: u64 = 100;
/// Upper bound of calls per trial.
pub(crate) const MAX_ITERS: u64 = 20_000;
/// A process set-up longer than this makes the trials share one process.
pub(crate) const SEPARATE_PROCESS_SETUP_S: f64 = 60.0;

/// A trial process may take this many times its expected time before it is killed.
pub(crate) const DEADLINE_FACTOR: f64 = 10.0;
/// Added to every trial process's deadline: starting a worker (exec, load, sandbox) on a busy
/// host can take far longer than the calibration's set-up saw.
pub(crate) const STARTUP_ALLOWANCE_S: f64 = 2.0;
/// No trial process's deadline is shorter.
pub(crate) const MIN_DEADLINE_S: f64 = 5.0;

/// Planning knobs (campaign.json `planning`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Planning {
    pub trials: u32,
    pub trial_target_s: f64,
    pub(crate) min_total: u64,
    pub(crate) max_iters_per_trial: u64,
    pub op_budget_s: f64,
    pub(crate) separate_process_setup_s: f64,
}

impl Planning {
    pub fn new(trials: u32, trial_target_s: f64, op_budget_s: f64) -> Self {
        Self {
            trials,
            trial_target_s,
            min_total: MIN_TOTAL,
            max_iters_per_trial: MAX_ITERS,
            op_budget_s,
            separate_process_setup_s: SEPARATE_PROCESS_SETUP_S,
        }
    }
}

/// cyclescope's second mode: each job runs trials (one per process) until the 95 % confidence
/// interval of the mean per-call cycles is within `precision` of the mean, at least
/// `MIN_ADAPTIVE_TRIALS` and at most `max_trials` of them. The guide's plan still sizes each
/// trial (set a short trial target); the record's `plan.trials` is the number actually run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Adaptive {
    /// Relative half-width of the 95 % confidence interval, e.g. 0.01.
    pub precision: f64,
    pub max_trials: u32,
}

/// Fewest trials before the adaptive mode may stop (a CI from two points is meaningless).
pub const MIN_ADAPTIVE_TRIALS: u32 = 3;

/// The record's `plan` object, field order as the harness writes it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TrialPlan {
    pub iterations_per_trial: u64,
    pub(crate) warmups: u64,
    pub trials: u32,
    pub(crate) separate_processes: bool,
    pub estimated_s: f64,
    pub(crate) timeout_per_process_s: f64,
}

/// `plan(t1, setup)` of `campaign.py`.
pub fn plan(t1: f64, setup: f64, p: &Planning) -> TrialPlan {
    let t1 = t1.max(1e-8);
    let trials_f = f64::from(p.trials);
    let min_per_trial = p.min_total.div_ceil(u64::from(p.trials.max(1)));
    let mut iters = ((p.trial_target_s / t1).ceil() as u64)
        .max(min_per_trial)
        .min(p.max_iters_per_trial);
    if trials_f * iters as f64 * t1 > p.op_budget_s {
        iters = ((p.op_budget_s / (trials_f * t1)).floor() as u64).max(1);
    }
    let trials = if trials_f * t1 <= p.op_budget_s {
        p.trials
    } else {
        ((p.op_budget_s / t1).floor() as u32).max(1)
    };
    let warmups = if t1 < 0.05 {
        3
    } else if t1 < 5.0 {
        1
    } else {
        0
    };
    let separate = setup < p.separate_process_setup_s;
    let procs = if separate { f64::from(trials) } else { 1.0 };
    let estimated_s = f64::from(trials) * iters as f64 * t1 + procs * (warmups as f64 * t1 + setup);
    let per_process_iters = if separate {
        iters as f64
    } else {
        iters as f64 * f64::from(trials)
    };
    // A process also stamps up to as many calls again one by one after each trial's loop
    // (`sample_calls_for`), hence the two calls per planned iteration.
    let expected_s = (2.0 * per_process_iters + warmups as f64) * t1 + setup;
    let timeout_per_process_s =
        (DEADLINE_FACTOR * expected_s + STARTUP_ALLOWANCE_S).max(MIN_DEADLINE_S);
    TrialPlan {
        iterations_per_trial: iters,
        warmups,
        trials,
        separate_processes: separate,
        estimated_s,
        timeout_per_process_s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guide() -> Planning {
        Planning::new(5, 1.0, 900.0)
    }

    #[test]
    fn fast_calls_hit_the_iteration_cap() {
        let p = plan(1e-6, 0.002, &guide());
        assert_eq!(
            (p.iterations_per_trial, p.trials, p.warmups),
            (20_000, 5, 3)
        );
        assert!(p.separate_processes);
    }

    #[test]
    fn slow_calls_get_target_over_t1() {
        // arm_1 FEILIAN512 4 KiB: 87915 = 5 × 17583 with a 0.5 s target.
        let p = plan(0.5 / 17582.5, 0.003, &Planning::new(5, 0.5, 300.0));
        assert_eq!(p.iterations_per_trial, 17_583);
    }

    #[test]
    fn minimum_of_twenty_calls_and_budget_cuts() {
        assert_eq!(plan(0.2, 0.0, &guide()).iterations_per_trial, 20);
        let p = plan(100.0, 0.0, &guide());
        assert_eq!((p.iterations_per_trial, p.trials, p.warmups), (1, 5, 0));
        let p = plan(400.0, 0.0, &guide());
        assert_eq!((p.iterations_per_trial, p.trials), (1, 2));
        assert_eq!(plan(1.0, 0.0, &guide()).warmups, 1);
    }

    #[test]
    fn published_plan_is_reproduced() {
        // records/iccs/pseudoXOF-1024__hash_1024.json: 18677 iterations, 3 warm-ups,
        // estimated 2.504434372926636 s with target 0.5 s, budget 300.
        let (iters, est) = (18_677u64, 2.504434372926636f64);
        // iters = ceil(0.5 / t1) pins t1 inside (0.5/18677, 0.5/18676]; the estimate then
        // gives the set-up time.
        let t1 = 0.5 / 18_676.5;
        let setup = (est - 5.0 * iters as f64 * t1 - 15.0 * t1) / 5.0;
        let p = plan(t1, setup, &Planning::new(5, 0.5, 300.0));
        assert_eq!(p.iterations_per_trial, iters);
        assert!((p.estimated_s - est).abs() < 1e-9);
    }

    #[test]
    fn deadlines_follow_the_plan_not_a_fixed_300_s() {
        // The published record's process expects 0.5 s and had 301.5 s; here 10 × (two calls
        // per iteration + set-up) + 2 s.
        let t1 = 0.5 / 18_676.5;
        let p = plan(t1, 0.0004, &Planning::new(5, 0.5, 300.0));
        let expected = (2.0 * 18_677.0 + 3.0) * t1 + 0.0004;
        assert!((p.timeout_per_process_s - (10.0 * expected + 2.0)).abs() < 1e-9);
        assert!(p.timeout_per_process_s < 15.0, "{p:?}");
        // A fast call at 32 B still gets the floor.
        assert_eq!(plan(1e-7, 0.002, &guide()).timeout_per_process_s, 5.0);
        // All trials in one process (a set-up of a minute): the deadline covers them all.
        let p = plan(0.01, 61.0, &guide());
        assert!(!p.separate_processes);
        let expected = (2.0 * 5.0 * 100.0 + 3.0) * 0.01 + 61.0;
        assert!((p.timeout_per_process_s - (10.0 * expected + 2.0)).abs() < 1e-9);
    }
}
