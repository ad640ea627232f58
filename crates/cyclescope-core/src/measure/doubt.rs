//! When a finished job's figure does not deserve a clean mark: the one rule every frontend
//! (the TUI's results, the table printed on leaving, `run`'s table and `--json`, the report
//! pages) applies, as an enum of reasons each with its hint. The rule reads a record only;
//! it never re-measures nor changes what the engine keeps.
//!
//! The engine re-runs a disturbed trial process at most `MAX_ATTEMPTS` times and keeps the
//! last attempt whatever it shows (the harness's rule, so records stay comparable). A kept
//! disturbed trial, a loop mean outside the body of the per-call distribution, or a wide
//! confidence interval make the figure doubtful; KAT, completeness and the guide's 100
//! measurements are caveats about the job rather than the figure.

use serde::{Deserialize, Serialize};

use super::plan::MAX_ATTEMPTS;
use super::stats::{PerCall, Trial};
use crate::kat::KatVerdict;
use crate::vocabulary::RecordStatus;

/// The loop mean may exceed the per-call p99 by this factor before it is doubtful: the
/// per-call counter is coarse on some hosts (a few hundred ticks per step on a VM's TSC).
pub const BODY_HIGH_FACTOR: f64 = 1.10;
/// The loop mean may lie this far below the per-call p1: each per-call sample carries a
/// serialised timer read the loop amortises, so per-call figures run high for fast calls.
pub const BODY_LOW_FACTOR: f64 = 0.5;
/// Per-call samples needed before the body check applies.
pub const BODY_MIN_SAMPLES: u64 = 100;
/// The relative 95 % confidence half-width of the mean above which the figure is doubtful.
pub const MAX_CI95_RELATIVE: f64 = 0.10;

/// Why a finished job is not marked clean.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "doubt", rename_all = "snake_case")]
pub enum Doubt {
    /// Some kept trials were disturbed: the retries ran out and the last attempt was kept.
    DisturbedTrialKept { trials: u32, reason: String },
    /// The loop mean lies outside the per-call body `[low, high]` (loop counter units).
    MeanOutsideBody { mean: f64, low: f64, high: f64 },
    /// The 95 % confidence interval of the mean is wide (relative half-width).
    WideInterval { relative: f64 },
    /// The fresh-message probe's turns ran out beside twins all slower than the guide's
    /// trials by more than the calm line (`proof::twin::calm`): the host slowed every twin, so
    /// the comparison that holds a caching gain under 2× was never made. The fastest twin and
    /// the guide's fastest trial, CPU ns a call.
    ProbeInconclusive { twin_ns: f64, guide_ns: f64 },
    /// Fewer measurements than the guide's 100.
    FewMeasurements { measurements: u64 },
    /// The instance's KAT did not pass (the figure is of unverified output).
    KatNotPassed { kat: String },
    /// The record is not complete.
    Incomplete { status: String },
}

impl Doubt {
    /// Whether the doubt is about the measured figure itself (marked in every §4 table),
    /// rather than about the job (shown where the job's KAT and completeness are).
    pub fn of_figure(&self) -> bool {
        matches!(
            self,
            Doubt::DisturbedTrialKept { .. }
                | Doubt::MeanOutsideBody { .. }
                | Doubt::WideInterval { .. }
                | Doubt::ProbeInconclusive { .. }
        )
    }

    /// One line: what is wrong and what to do about it.
    pub fn text(&self) -> String {
        match self {
            Doubt::DisturbedTrialKept { trials, reason } => format!(
                "{trials} kept trial(s) disturbed after {MAX_ATTEMPTS} attempts ({reason}): \
                 stop other work on the measurement CPU and measure again"
            ),
            Doubt::MeanOutsideBody { mean, low, high } => format!(
                "loop mean {} outside the per-call body {}…{}: the loop was disturbed or the \
                 calls vary; measure again and compare",
                crate::format::int(Some(*mean)),
                crate::format::int(Some(*low)),
                crate::format::int(Some(*high))
            ),
            Doubt::WideInterval { relative } => format!(
                "95 % CI ±{:.0} % of the mean: trials disagree; measure again on a quiet CPU \
                 (or --adaptive)",
                100.0 * relative
            ),
            Doubt::ProbeInconclusive { twin_ns, guide_ns } => format!(
                "fresh-message probe inconclusive: every twin ran slower than the guide's \
                 trials (the fastest {} ns a call, the guide's {} ns), so a caching gain under \
                 2× was not ruled out; measure again on a quieter host",
                crate::format::int(Some(*twin_ns)),
                crate::format::int(Some(*guide_ns))
            ),
            Doubt::FewMeasurements { measurements } => {
                format!("n={measurements}, below the guide's 100 measurements")
            }
            Doubt::KatNotPassed { kat } => format!("KAT {kat}: the figure is of unverified output"),
            Doubt::Incomplete { status } => format!("record {status}"),
        }
    }
}

/// What the rule reads: a record's figures, whichever frontend holds them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Evidence<'a> {
    pub(crate) status: &'a RecordStatus,
    pub(crate) kat: &'a KatVerdict,
    pub(crate) measurements: u64,
    pub(crate) mean_cycles: Option<f64>,
    pub(crate) trials: &'a [Trial],
    /// Per kept trial, nanoseconds the worker waited for the CPU (empty when unknown).
    pub(crate) preempted_ns: &'a [Option<u64>],
    /// The run's fixed clock for the harness's slow-clock test.
    pub(crate) fixed_clock_hz: Option<f64>,
    pub(crate) per_call: Option<PerCall>,
    /// Loop-counter units per per-call tick (1 when both are the same counter); None when
    /// they cannot be compared.
    pub(crate) per_call_scale: Option<f64>,
    pub(crate) ci95_relative: Option<f64>,
    /// An exact count (instructions under valgrind): its three calls are the whole figure.
    pub(crate) exact: bool,
    /// The conformance check the KAT gate failed (NONCONFORM), named beside the status.
    pub(crate) failed_check: Option<crate::vocabulary::Check>,
    /// The fresh-message probe as the engine last judged it.
    pub(crate) fresh_probe: Option<&'a super::proof::ProbeFigure>,
}

/// The doubts about one finished job, figure doubts first.
pub(crate) fn doubts(e: &Evidence) -> Vec<Doubt> {
    let mut out = Vec::new();
    let disturbed: Vec<String> = e
        .trials
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            super::job::disturbance(
                t,
                e.preempted_ns.get(i).copied().flatten(),
                e.fixed_clock_hz,
            )
        })
        .collect();
    if let Some(reason) = disturbed.first() {
        out.push(Doubt::DisturbedTrialKept {
            trials: disturbed.len() as u32,
            reason: reason.clone(),
        });
    }
    if let (Some(mean), Some(pc), Some(scale)) = (e.mean_cycles, e.per_call, e.per_call_scale)
        && pc.samples >= BODY_MIN_SAMPLES
    {
        let (p1, p99) = (pc.p1 as f64 * scale, pc.p99 as f64 * scale);
        if mean > p99 * BODY_HIGH_FACTOR || mean < p1 * BODY_LOW_FACTOR {
            out.push(Doubt::MeanOutsideBody {
                mean,
                low: p1,
                high: p99,
            });
        }
    }
    if let Some(relative) = e.ci95_relative.filter(|&r| r > MAX_CI95_RELATIVE) {
        out.push(Doubt::WideInterval { relative });
    }
    if let Some(f) = e.fresh_probe
        && e.status.is_complete()
        && !super::proof::twin::calm(f)
    {
        out.push(Doubt::ProbeInconclusive {
            twin_ns: f.twin_ns_per_call.unwrap_or(f64::NAN),
            guide_ns: f.guide_fastest_ns_per_call,
        });
    }
    if e.measurements < 100 && !e.exact {
        out.push(Doubt::FewMeasurements {
            measurements: e.measurements,
        });
    }
    if !e.kat.is_pass() {
        let check = e
            .failed_check
            .map_or_else(String::new, |c| format!(" ({c})"));
        out.push(Doubt::KatNotPassed {
            kat: format!("{}{check}", e.kat),
        });
    }
    if !e.status.is_complete() {
        out.push(Doubt::Incomplete {
            status: e.status.to_string(),
        });
    }
    out
}

#[cfg(test)]
mod tests;
