//! One job's verdict: each side's figure as the rule needs it ([`Figure`]) and the rule that
//! weighs B against A ([`judge_with`]): doubt first, exact counts as they are, two counters
//! only through their `× pseudoXOF` ratios, otherwise beyond the noise between runs.

use super::noise::Spread;
use super::{JudgedOn, Side, Verdict, Weighed};
use crate::measure::stats::trial_spread;
use crate::record::TimingRecord;

/// One side's figure as the verdict needs it: the mean, its 95 % half-width (None with fewer
/// than two trials), the spread of its per-process means, whether it is marked ⚠ (and why),
/// and the counter that counted it.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub mean_cycles: f64,
    pub ci95_half_width: Option<f64>,
    /// Relative standard deviation of the per-process (trial) means (None below 2 trials).
    pub process_sd_relative: Option<f64>,
    pub processes: u32,
    /// The first of the figure's own doubts (what puts ⚠ beside it), if any.
    pub doubt: Option<String>,
    pub source: Option<crate::counter::CycleSource>,
    /// The figure preemption cannot move, judged on when the mean is doubtful.
    pub robust: Option<crate::measure::robust::Robust>,
}

/// The first doubt about the figure itself among a job's doubts.
fn figure_doubt(doubts: &[crate::measure::doubt::Doubt]) -> Option<String> {
    doubts.iter().find(|d| d.of_figure()).map(|d| d.text())
}

impl Figure {
    pub(crate) fn of_record(r: &TimingRecord) -> Option<Self> {
        let mean = r.mean_cycles?;
        let spread = trial_spread(&r.trials);
        Some(Self {
            mean_cycles: mean,
            ci95_half_width: spread.as_ref().map(|s| s.ci95_half_width_cycles),
            process_sd_relative: spread
                .filter(|_| mean > 0.0)
                .map(|s| s.trial_mean_cycles_sd / mean),
            processes: r.trials.len() as u32,
            doubt: figure_doubt(&r.summary().doubts),
            source: r.cyclescope.as_ref().and_then(|x| x.cycle_source),
            robust: r.cyclescope.as_ref().and_then(|x| x.robust.clone()),
        })
    }

    /// A finished job's figure as the frontends hold it (the workbench's results): the
    /// per-process spread recovered from the relative interval (s = h·√n / t).
    pub fn of_summary(s: &crate::vocabulary::JobSummary) -> Option<Self> {
        let mean = s.mean_cycles?;
        let n = s.trials;
        Some(Self {
            mean_cycles: mean,
            ci95_half_width: s.ci95_relative.map(|r| r * mean),
            process_sd_relative: s
                .ci95_relative
                .filter(|_| n >= 2)
                .map(|r| r * f64::from(n).sqrt() / crate::measure::stats::t95(u64::from(n) - 1)),
            processes: n,
            doubt: figure_doubt(&s.doubts),
            source: s.cycle_source,
            robust: s.robust.clone(),
        })
    }

    /// What counted the figure: cycles unless its source says instructions (a record of
    /// before the counter was named counted cycles).
    pub fn counter(&self) -> crate::counter::Counter {
        self.source
            .map_or(crate::counter::Counter::Cycles, |s| s.counter())
    }

    /// The robust figure's spread, when a verdict may rest on it: an interval over at least
    /// two trials, within `robust::MAX_CI95_RELATIVE`.
    fn robust_spread(&self) -> Option<Spread> {
        let r = self.robust.as_ref().filter(|r| r.is_sound())?;
        let k = r.trials;
        let relative = r.ci95_relative()?;
        Some(Spread {
            mean: r.mean_cycles,
            relative_sd: relative * f64::from(k).sqrt()
                / crate::measure::stats::t95(u64::from(k) - 1),
            processes: k,
        })
    }

    fn spread(&self) -> Option<Spread> {
        Some(Spread {
            mean: self.mean_cycles,
            relative_sd: self.process_sd_relative?,
            processes: self.processes,
        })
    }
}

/// B against A on their robust figures (`measure::robust`), when the mean of one is doubtful
/// and both have a sound robust figure by the same counter. Preemption moves the mean, not
/// these, so the difference is weighed on them against the same between-run noise.
pub(super) fn on_robust(a: &Figure, b: &Figure) -> Option<(Verdict, Option<(Weighed, JudgedOn)>)> {
    if a.source != b.source || a.source.is_some_and(|s| s.is_exact()) {
        return None;
    }
    let (ra, rb) = (a.robust_spread()?, b.robust_spread()?);
    let w = Weighed::of(&ra, &rb, None)?;
    Some((w.verdict(), Some((w, JudgedOn::RobustMean))))
}

/// Why a doubtful pair could not be judged on its robust figures.
fn no_robust(a: &Figure, b: &Figure) -> &'static str {
    if a.robust.is_none() || b.robust.is_none() {
        "no robust figure on both sides to judge on"
    } else if a.source != b.source {
        "the robust figures are by two counters"
    } else {
        "a robust figure is itself not tight enough to judge on"
    }
}

/// B against A, each without its run's baseline figure: see [`judge_with`].
pub fn judge(a: &Figure, b: &Figure) -> Verdict {
    judge_with(a, b, None).0
}

/// B against A: a figure marked ⚠ on either side is judged on both sides' robust figures, and
/// gets no verdict but `doubtful` when they cannot bear one; a difference
/// counts only beyond the noise between runs (`noise`), and never without an interval on both
/// sides. With `refs` (each run's baseline figure at the same length), the `× pseudoXOF`
/// ratios are compared — the only way across two counters; without them, two counters are not
/// comparable.
pub fn judge_with(
    a: &Figure,
    b: &Figure,
    refs: Option<(&Figure, &Figure)>,
) -> (Verdict, Option<(Weighed, JudgedOn)>) {
    for (side, f) in [(Side::A, a), (Side::B, b)] {
        if let Some(why) = &f.doubt {
            return on_robust(a, b).unwrap_or_else(|| {
                (
                    Verdict::Doubtful(side, format!("{why}; {}", no_robust(a, b))),
                    None,
                )
            });
        }
    }
    // Two exact counts differ by what they differ: no noise, no interval, no baseline.
    if a.source == b.source
        && a.source.is_some_and(|s| s.is_exact())
        && a.mean_cycles > 0.0
        && b.mean_cycles > 0.0
    {
        let w = Weighed {
            log_ratio: (b.mean_cycles / a.mean_cycles).ln(),
            half_width: 0.0,
        };
        let order = b.mean_cycles.total_cmp(&a.mean_cycles);
        return (Verdict::Exact(order), Some((w, JudgedOn::ExactCount)));
    }
    // Cycles and instructions are two quantities: neither their figures nor their ratios to
    // a baseline divide one by the other.
    let (ka, kb) = (a.counter(), b.counter());
    if ka != kb {
        return (
            Verdict::NotComparable(format!(
                "A counted {}, B {}: the figures of two counters never divide",
                ka.name(),
                kb.name()
            )),
            None,
        );
    }
    // Across two counters only the ratios compare: a ratio over a doubtful baseline is a
    // doubtful ratio, named as such (not "not comparable", which would hide that both runs
    // have the baseline).
    if a.source != b.source
        && let Some((ra, rb)) = refs
    {
        for (side, f) in [(Side::A, ra), (Side::B, rb)] {
            if let Some(why) = &f.doubt {
                let why = format!(
                    "its baseline pseudoXOF is doubtful ({why}), and across two counters only \
                     the × pseudoXOF ratios compare"
                );
                return (Verdict::Doubtful(side, why), None);
            }
        }
    }
    // A baseline is used only when it is clean and counted by its own run's counter.
    let refs = refs.filter(|(ra, rb)| {
        ra.doubt.is_none() && rb.doubt.is_none() && ra.source == a.source && rb.source == b.source
    });
    let on = match (refs.is_some(), a.source == b.source) {
        (true, true) => JudgedOn::BaselineRatio,
        (true, false) => JudgedOn::BaselineRatioAcrossCounters,
        (false, true) => JudgedOn::MeanCycles,
        (false, false) => {
            return (
                Verdict::NotComparable(
                    "different cycle counters, and no clean baseline pseudoXOF of this width and \
                     length in both runs to compare the × pseudoXOF ratios"
                        .into(),
                ),
                None,
            );
        }
    };
    let spreads = (a.spread(), b.spread());
    let ref_spreads = refs.map(|(ra, rb)| (ra.spread(), rb.spread()));
    let (Some(sa), Some(sb)) = spreads else {
        return (
            Verdict::NotComparable("no confidence interval (fewer than 2 trials)".into()),
            None,
        );
    };
    let ref_pair = match ref_spreads {
        Some((Some(ra), Some(rb))) => Some((ra, rb)),
        Some(_) => {
            return (
                Verdict::NotComparable(
                    "the baseline has no confidence interval (fewer than 2 trials)".into(),
                ),
                None,
            );
        }
        None => None,
    };
    let Some(w) = Weighed::of(&sa, &sb, ref_pair.as_ref().map(|(x, y)| (x, y))) else {
        return (Verdict::NotComparable("no cycle counts".into()), None);
    };
    (w.verdict(), Some((w, on)))
}

#[cfg(test)]
mod tests;
