//! Clock verification per trial: from a trial's clock witness (core and reference counts read
//! around its loop) the effective core clock during that trial, and whether it stayed inside
//! the band the host allows — the harness's 95 % rule, widened to the spread the host's clock
//! probe itself measured, and applied in both directions (a clock that rose, turbo coming
//! back, is as wrong for a fixed-clock figure as one that fell). Also what a run says when the
//! hardware offers no witness. Pure functions and values; the campaign acts on them.

use serde::{Deserialize, Serialize};

use crate::counter::witness::{ClockPair, WitnessKind};
use crate::measure::stats::Trial;

/// The harness's tolerance: a trial below 95 % of the fixed clock is disturbed.
pub(crate) const HARNESS_TOLERANCE: f64 = 0.05;

/// Whether this run can check the clock of each trial, and with what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ClockVerification {
    /// Every trial carries a witness pair of this kind.
    PerTrial { witness: WitnessKind },
    /// No witness on this host; why, in words (no PMU, no readable msr device, …).
    Unavailable { reason: String },
}

impl ClockVerification {
    /// The notice a frontend shows once when there is no per-trial check.
    pub fn notice(&self) -> Option<String> {
        match self {
            ClockVerification::PerTrial { .. } => None,
            ClockVerification::Unavailable { reason } => Some(format!(
                "clock verification per trial is not possible on this host ({reason}); trials \
                 are checked only by the harness's slow-clock rule and for preemption"
            )),
        }
    }
}

/// The core clock a trial may run at.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClockBand {
    pub nominal_hz: f64,
    pub low_hz: f64,
    pub high_hz: f64,
}

impl ClockBand {
    /// `fixed_hz` ± the larger of the harness's 5 % and the probe's relative spread
    /// ((max − min) / median of its windows).
    pub fn new(fixed_hz: f64, probe_spread: Option<f64>) -> Self {
        let tol = probe_spread
            .filter(|s| s.is_finite() && *s > 0.0)
            .map_or(HARNESS_TOLERANCE, |s| s.max(HARNESS_TOLERANCE));
        Self {
            nominal_hz: fixed_hz,
            low_hz: fixed_hz * (1.0 - tol),
            high_hz: fixed_hz * (1.0 + tol),
        }
    }
}

/// Which way a clock left its band.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockDrift {
    Slow,
    Fast,
}

/// The core clock during a trial, Hz. perf cycles over reference ticks, scaled by the
/// reference counter's probed rate (or, without it, over the trial's seconds); APERF over
/// MPERF, scaled likewise (MPERF counts at the reference rate). None for an empty pair.
pub fn effective_hz(pair: &ClockPair, reference_hz: Option<f64>, seconds: f64) -> Option<f64> {
    if pair.core == 0 || pair.reference == 0 {
        return None;
    }
    let ratio = pair.core as f64 / pair.reference as f64;
    match (pair.kind, reference_hz.filter(|hz| *hz > 0.0)) {
        (_, Some(hz)) => Some(ratio * hz),
        (WitnessKind::PerfAndReference, None) if seconds > 0.0 => Some(pair.core as f64 / seconds),
        _ => None,
    }
}

/// Whether `hz` left `band`, and which way.
pub fn drift(hz: f64, band: &ClockBand) -> Option<ClockDrift> {
    if hz < band.low_hz {
        Some(ClockDrift::Slow)
    } else if hz > band.high_hz {
        Some(ClockDrift::Fast)
    } else {
        None
    }
}

/// The retry reason of a trial whose clock left its band.
pub fn drift_reason(hz: f64, band: &ClockBand) -> Option<String> {
    let way = match drift(hz, band)? {
        ClockDrift::Slow => "below",
        ClockDrift::Fast => "above",
    };
    Some(format!(
        "clock {:.3} GHz {way} the host's band {:.3}–{:.3} GHz",
        hz / 1e9,
        band.low_hz / 1e9,
        band.high_hz / 1e9
    ))
}

/// What the campaign checks each trial's clock against: the harness's fixed clock (its slow
/// rule), the band of the witness check, and the reference counter's probed rate.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct ClockRule {
    pub(crate) fixed_clock_hz: Option<f64>,
    pub(crate) band: Option<ClockBand>,
    pub(crate) reference_hz: Option<f64>,
}

impl ClockRule {
    /// The effective clock of a trial (when it has a witness pair), and why it must be run
    /// again when its clock left the band.
    pub(crate) fn check(
        &self,
        t: &Trial,
        pair: Option<&ClockPair>,
    ) -> (Option<f64>, Option<String>) {
        let Some(hz) = pair.and_then(|p| effective_hz(p, self.reference_hz, t.seconds)) else {
            return (None, None);
        };
        (Some(hz), self.band.and_then(|b| drift_reason(hz, &b)))
    }
}

#[cfg(test)]
mod tests;
