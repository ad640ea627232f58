//! The figure preemption cannot move: the mean cost of the calls no interruption touched.
//!
//! The guide's loop mean divides a trial's whole span by its calls, so every tick the worker
//! spent waiting for the CPU, or in an interrupt, lands in it: with a busy loop on the same
//! CPU it doubles. The per-call samples each trial takes after its loop see the same
//! interruptions, but one call at a time: a call that was preempted, or that took an
//! interrupt, is far slower than its neighbours, and every other call is untouched.
//!
//! An interruption only ever adds time. So the spread of the samples *below* the median is
//! the spread of untouched calls, whatever share of them an interruption hit above it (up to
//! half). A trial's calls at or below `p50 + FENCE_SPREADS × (p50 − p10)` are its body (at
//! least `p50 / 100` is allowed for that spread, and one tick); its **uninterrupted-call
//! mean** is their mean. The figure is the mean of the trials' means, with a Student t 95 %
//! interval over trials, in the loop counter's units. Pure arithmetic over histograms.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::stats::t95;

/// How many lower-half spreads above the median a call may lie and still be untouched.
pub const FENCE_SPREADS: u64 = 10;
/// Samples a trial needs before its body counts.
pub const MIN_TRIAL_SAMPLES: u64 = 20;
/// The name records and tables give the statistic.
pub const STATISTIC: &str = "uninterrupted_call_mean";
/// The relative 95 % half-width above which the robust figure is itself doubtful.
pub const MAX_CI95_RELATIVE: f64 = super::doubt::MAX_CI95_RELATIVE;

/// One trial's uninterrupted calls, in per-call ticks (timer overhead already subtracted).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TrialBody {
    pub mean_ticks: f64,
    /// Calls at or below the fence.
    pub calls: u64,
    /// Calls above it: those an interruption touched.
    pub excluded: u64,
}

/// A job's robust figure (`cyclescope.robust` in its record).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Robust {
    /// Mean of the trials' uninterrupted-call means, in the loop counter's units.
    pub mean_cycles: f64,
    /// Its 95 % interval over trials (null with one trial).
    pub ci95_low: Option<f64>,
    pub ci95_high: Option<f64>,
    /// Which statistic this is ([`STATISTIC`]).
    pub statistic: String,
    pub trials: u32,
    /// Per-call samples kept, and those left out as interrupted, over all trials.
    pub calls: u64,
    pub excluded: u64,
}

impl Robust {
    /// The relative 95 % half-width (None with one trial).
    pub fn ci95_relative(&self) -> Option<f64> {
        let (lo, hi) = (self.ci95_low?, self.ci95_high?);
        (self.mean_cycles > 0.0).then(|| (hi - lo) / 2.0 / self.mean_cycles)
    }

    /// Whether a verdict may rest on it: an interval, and a tight one.
    pub fn is_sound(&self) -> bool {
        self.ci95_relative().is_some_and(|r| r <= MAX_CI95_RELATIVE)
    }

    /// `1664 [1650, 1679]`, with ⚠ when it is not sound; `1664 (one trial) ⚠` without an
    /// interval.
    pub fn text(&self) -> String {
        let mark = if self.is_sound() { "" } else { " ⚠" };
        match (self.ci95_low, self.ci95_high) {
            (Some(lo), Some(hi)) => format!(
                "{}{mark}",
                crate::format::with_interval(self.mean_cycles, lo, hi)
            ),
            _ => format!(
                "{} (one trial){mark}",
                crate::format::int(Some(self.mean_cycles))
            ),
        }
    }

    /// One line naming the statistic and what it left out.
    pub fn describe(&self) -> String {
        let share = self.excluded as f64 / (self.calls + self.excluded).max(1) as f64;
        format!(
            "uninterrupted-call mean {} over {} trial(s); {:.1} % of {} sampled calls left out as interrupted",
            self.text(),
            self.trials,
            100.0 * share,
            self.calls + self.excluded
        )
    }
}

/// The fence above which a call counts as interrupted.
pub fn fence(p10: u64, p50: u64) -> u64 {
    p50 + FENCE_SPREADS * p50.saturating_sub(p10).max(p50 / 100).max(1)
}

/// One trial's body; None with fewer than [`MIN_TRIAL_SAMPLES`] samples.
pub fn trial_body(h: &Histogram<u64>) -> Option<TrialBody> {
    if h.len() < MIN_TRIAL_SAMPLES {
        return None;
    }
    let f = fence(h.value_at_quantile(0.10), h.value_at_quantile(0.50));
    let (mut sum, mut calls, mut excluded) = (0.0, 0u64, 0u64);
    for v in h.iter_recorded() {
        let n = v.count_at_value();
        let value = h.median_equivalent(v.value_iterated_to());
        if value <= f {
            sum += value as f64 * n as f64;
            calls += n;
        } else {
            excluded += n;
        }
    }
    (calls > 0).then(|| TrialBody {
        mean_ticks: sum / calls as f64,
        calls,
        excluded,
    })
}

/// Collects a worker's per-call samples trial by trial: a trial's samples follow its `trial`
/// line, so each line closes the body of the trial before it.
#[derive(Debug)]
pub(crate) struct TrialBodies {
    current: Histogram<u64>,
    done: Vec<TrialBody>,
}

impl Default for TrialBodies {
    fn default() -> Self {
        Self {
            current: super::stats::new_histogram(),
            done: Vec::new(),
        }
    }
}

impl TrialBodies {
    pub(crate) fn samples(&mut self, ticks: &[u64]) {
        super::job::record_samples(&mut self.current, ticks);
    }

    /// A trial's line arrived: the samples so far were the previous trial's.
    pub(crate) fn trial_line(&mut self) {
        self.done.extend(trial_body(&self.current));
        self.current.reset();
    }

    pub(crate) fn finish(mut self) -> Vec<TrialBody> {
        self.trial_line();
        self.done
    }
}

/// The robust figure of a job's trial bodies, each scaled by `scale` into loop-counter units;
/// None without a body.
pub fn of_trials(bodies: &[TrialBody], scale: f64) -> Option<Robust> {
    let means: Vec<f64> = bodies.iter().map(|b| b.mean_ticks * scale).collect();
    if means.is_empty() || !scale.is_finite() || scale <= 0.0 {
        return None;
    }
    let k = means.len() as f64;
    let mean = means.iter().sum::<f64>() / k;
    let (low, high) = if means.len() >= 2 {
        let var = means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (k - 1.0);
        let half = t95(means.len() as u64 - 1) * var.sqrt() / k.sqrt();
        (Some(mean - half), Some(mean + half))
    } else {
        (None, None)
    };
    Some(Robust {
        mean_cycles: mean,
        ci95_low: low,
        ci95_high: high,
        statistic: STATISTIC.to_string(),
        trials: means.len() as u32,
        calls: bodies.iter().map(|b| b.calls).sum(),
        excluded: bodies.iter().map(|b| b.excluded).sum(),
    })
}

#[cfg(test)]
mod tests;
