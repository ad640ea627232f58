//! Statistics, all in one place: the guide's loop figures computed from raw trials exactly as
//! the harness does (spec §3.2; `validate` recomputes them with this code), the per-call
//! percentiles from hdrhistograms, and the confidence interval of the mean. Pure functions.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// One trial of the loop counter, as the record stores it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    pub(crate) measurements: u64,
    pub(crate) seconds: f64,
    pub(crate) cycles: u64,
}

/// The record's statistics block.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LoopStats {
    pub(crate) measurements: u64,
    pub(crate) mean_seconds: f64,
    pub(crate) median_trial_seconds: f64,
    pub(crate) min_trial_seconds: f64,
    pub(crate) max_trial_seconds: f64,
    /// Σcycles/Σcalls; None unless every trial counted cycles.
    pub(crate) mean_cycles: Option<f64>,
    pub(crate) median_trial_cycles: Option<f64>,
    pub(crate) operations_per_second: f64,
    pub(crate) throughput_mb_per_second: f64,
}

/// Python's `sum` over floats: left to right, so the last ulp matches the harness.
fn py_sum(xs: impl Iterator<Item = f64>) -> f64 {
    xs.fold(0.0, |a, b| a + b)
}

/// Python's `statistics.median`.
pub(crate) fn median(mut xs: Vec<f64>) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    Some(if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    })
}

/// The guide's figures from the trials (None when there are no measurements).
pub(crate) fn loop_stats(trials: &[Trial], input_bytes: u64) -> Option<LoopStats> {
    let n: u64 = trials.iter().map(|t| t.measurements).sum();
    if n == 0 {
        return None;
    }
    let nf = n as f64;
    let secs = py_sum(trials.iter().map(|t| t.seconds));
    let per_trial_s: Vec<f64> = trials
        .iter()
        .map(|t| t.seconds / t.measurements as f64)
        .collect();
    let all_cycles = trials.iter().all(|t| t.cycles > 0);
    let mean_cycles = all_cycles.then(|| trials.iter().map(|t| t.cycles).sum::<u64>() as f64 / nf);
    let median_trial_cycles = if all_cycles {
        median(
            trials
                .iter()
                .map(|t| t.cycles as f64 / t.measurements as f64)
                .collect(),
        )
    } else {
        None
    };
    Some(LoopStats {
        measurements: n,
        mean_seconds: secs / nf,
        median_trial_seconds: median(per_trial_s.clone()).unwrap_or(0.0),
        min_trial_seconds: per_trial_s.iter().copied().fold(f64::INFINITY, f64::min),
        max_trial_seconds: per_trial_s
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max),
        mean_cycles,
        median_trial_cycles,
        operations_per_second: nf / secs,
        throughput_mb_per_second: input_bytes as f64 * nf / secs / 1e6,
    })
}

/// Student's t quantile (two-sided 95 %) for `df` degrees of freedom.
pub(crate) fn t95(df: u64) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df as usize - 1],
        // Beyond the table (a sweep's regression has hundreds of degrees of freedom): the
        // Cornish–Fisher expansion around the normal quantile, within 1e-4 of t from df 31.
        _ => {
            let (z, v) = (1.959_964_f64, df as f64);
            z + (z.powi(3) + z) / (4.0 * v)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * v * v)
        }
    }
}

/// Mean cycles per call of each trial, their standard deviation and the 95 % confidence
/// half-width of the mean of trial means (Student t), relative to that mean.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TrialSpread {
    pub(crate) trial_mean_cycles_sd: f64,
    pub(crate) ci95_half_width_cycles: f64,
    pub ci95_relative: f64,
}

pub(crate) fn trial_spread(trials: &[Trial]) -> Option<TrialSpread> {
    let means: Vec<f64> = trials
        .iter()
        .filter(|t| t.measurements > 0 && t.cycles > 0)
        .map(|t| t.cycles as f64 / t.measurements as f64)
        .collect();
    if means.len() < 2 {
        return None;
    }
    let k = means.len() as f64;
    let mean = means.iter().sum::<f64>() / k;
    let var = means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (k - 1.0);
    let sd = var.sqrt();
    let half = t95(means.len() as u64 - 1) * sd / k.sqrt();
    Some(TrialSpread {
        trial_mean_cycles_sd: sd,
        ci95_half_width_cycles: half,
        ci95_relative: half / mean,
    })
}

/// Per-call figures from the per-call counter's histogram (ticks, overhead subtracted).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PerCall {
    pub samples: u64,
    pub(crate) mean: f64,
    pub(crate) stdev: f64,
    pub(crate) p1: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub(crate) max: u64,
    /// Samples above p50 + 10 × (p90 − p50), a robust outlier fence.
    pub outliers: u64,
}

/// A new per-call histogram: 1 tick to 10^12 ticks at 3 significant figures.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 1_000_000_000_000, 3).expect("constant bounds are valid")
}

/// The value above which a per-call sample counts as an outlier: p50 + 10 × (p90 − p50), at
/// least 10 % above p50 when the distribution is very narrow.
pub fn outlier_fence(p50: u64, p90: u64) -> u64 {
    p50 + 10 * p90.saturating_sub(p50).max(p50 / 100)
}

pub fn per_call(h: &Histogram<u64>) -> Option<PerCall> {
    if h.is_empty() {
        return None;
    }
    let p50 = h.value_at_quantile(0.50);
    let p90 = h.value_at_quantile(0.90);
    let fence = outlier_fence(p50, p90);
    let outliers = h
        .iter_recorded()
        .filter(|v| v.value_iterated_to() > fence)
        .map(|v| v.count_at_value())
        .sum();
    Some(PerCall {
        samples: h.len(),
        mean: h.mean(),
        stdev: h.stdev(),
        p1: h.value_at_quantile(0.01),
        p50,
        p90,
        p99: h.value_at_quantile(0.99),
        max: h.max(),
        outliers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(m: u64, s: f64, c: u64) -> Trial {
        Trial {
            measurements: m,
            seconds: s,
            cycles: c,
        }
    }

    #[test]
    fn loop_stats_follow_the_harness_definitions() {
        let trials = [t(100, 1.0, 2000), t(100, 3.0, 4000), t(200, 2.0, 6000)];
        let s = loop_stats(&trials, 32).unwrap();
        assert_eq!(s.measurements, 400);
        assert_eq!(s.mean_seconds, 6.0 / 400.0);
        assert_eq!(s.mean_cycles, Some(12000.0 / 400.0));
        assert_eq!(s.median_trial_seconds, 0.01);
        assert_eq!((s.min_trial_seconds, s.max_trial_seconds), (0.01, 0.03));
        assert_eq!(s.median_trial_cycles, Some(30.0));
        assert_eq!(s.throughput_mb_per_second, 32.0 * 400.0 / 6.0 / 1e6);
    }

    #[test]
    fn a_trial_without_cycles_nulls_the_cycle_figures() {
        let s = loop_stats(&[t(10, 1.0, 0), t(10, 1.0, 5)], 1).unwrap();
        assert_eq!((s.mean_cycles, s.median_trial_cycles), (None, None));
        assert!(loop_stats(&[], 1).is_none());
    }

    #[test]
    fn median_is_pythons() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(vec![]), None);
    }

    #[test]
    fn t95_beyond_the_table_follows_students_t() {
        // Quantiles of t(0.975) from tables: df 31, 60, 120, 1000.
        for (df, want) in [(31, 2.0395), (60, 2.0003), (120, 1.9799), (1000, 1.9623)] {
            assert!((t95(df) - want).abs() < 2e-4, "df {df}: {}", t95(df));
        }
    }

    #[test]
    fn spread_and_percentiles() {
        let s = trial_spread(&[t(1, 1.0, 100), t(1, 1.0, 102), t(1, 1.0, 98)]).unwrap();
        assert!((s.trial_mean_cycles_sd - 2.0).abs() < 1e-12);
        assert!((s.ci95_half_width_cycles - 4.303 * 2.0 / 3f64.sqrt()).abs() < 1e-9);
        let mut h = new_histogram();
        for v in 1..=1000u64 {
            h.record(v).unwrap();
        }
        h.record(1_000_000).unwrap();
        let p = per_call(&h).unwrap();
        assert_eq!(p.samples, 1001);
        assert!((499..=501).contains(&p.p50), "{}", p.p50);
        assert_eq!(p.outliers, 1);
        assert!(p.max >= 999_000);
    }
}
