//! The per-trial rules the campaign applies to what a worker reported: the disturbance test
//! (the harness's slow clock, and preemption beyond it) and how many calls are stamped one by
//! one.

use hdrhistogram::Histogram;

use crate::measure::plan::TrialPlan;
use crate::measure::stats::Trial;

/// True when a trial ran at less than 95 % of the fixed clock (the harness's disturbance test).
pub(crate) fn disturbed(t: &Trial, fixed_clock_hz: Option<f64>) -> bool {
    match fixed_clock_hz {
        Some(clock) => {
            t.cycles > 0 && t.seconds > 0.01 && (t.cycles as f64 / t.seconds) < 0.95 * clock
        }
        None => false,
    }
}

/// Share of a trial's wall time the worker spent waiting for the CPU above which the trial
/// counts as disturbed: a reference counter (TSC) keeps counting while it waits.
pub(crate) const MAX_PREEMPTED_SHARE: f64 = 0.01;

/// Why a trial counts as disturbed, if it does: the harness's slow-clock test, or (beyond the
/// harness) preemption during the loop.
pub(crate) fn disturbance(
    t: &Trial,
    waited_ns: Option<u64>,
    fixed_clock_hz: Option<f64>,
) -> Option<String> {
    if disturbed(t, fixed_clock_hz) {
        return Some(format!(
            "clock {:.2} GHz below 95 % of the fixed clock",
            t.cycles as f64 / t.seconds / 1e9
        ));
    }
    let share = waited_ns? as f64 / (t.seconds * 1e9).max(1.0);
    (share > MAX_PREEMPTED_SHARE).then(|| {
        format!(
            "preempted: waited {:.1} % of the trial for the CPU",
            100.0 * share
        )
    })
}

/// Calls stamped one by one after each trial's loop: all of them for fast calls, capped at
/// about a quarter of the trial's time for slow ones (at least 100).
pub(crate) fn sample_calls_for(plan: &TrialPlan, t1: f64, trial_target_s: f64) -> u64 {
    let quarter = (0.25 * trial_target_s / t1.max(1e-9)).ceil() as u64;
    plan.iterations_per_trial.min(quarter.max(100))
}

/// Accumulates a job's per-call samples.
pub(crate) fn record_samples(h: &mut Histogram<u64>, ticks: &[u64]) {
    for &t in ticks {
        // Values beyond the histogram's range are clamped rather than lost.
        h.saturating_record(t);
    }
}
