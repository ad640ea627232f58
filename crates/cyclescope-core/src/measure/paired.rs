//! The statistic of an interleaved A/B comparison: trials of A and B run alternately, so each
//! pair shares whatever the host was doing at that moment. Per pair the log of B's mean cycles
//! per call over A's; the mean of those logs with its Student-t 95 % interval, exponentiated,
//! is the geometric-mean ratio B/A and its confidence interval. Logs make the interval
//! symmetric for "twice as fast" and "twice as slow" and keep it positive. Pure arithmetic: it
//! never runs anything.

use serde::{Deserialize, Serialize};

use super::stats::{Trial, t95};

/// Fewest pairs for an interval (one degree of freedom gives t = 12.7: useless but honest).
pub const MIN_PAIRS: usize = 2;

/// How far beyond 1 the whole interval must lie for two builds to be called different: 1 %.
/// Interleaved, two identical builds (bench/verdicts.py --live --work ilp, this 2-core VM,
/// 2026-12-04, 6 rounds × 3 lengths, as the host was and with a busy loop on the measurement
/// CPU) had intervals that left out 1 in 3 of 36 comparisons, each within 0.8 % of it
/// (0.980–0.992, 1.000–1.005, 0.983–0.998): one copy of the code laid out at other addresses,
/// or a spell of the host longer than a pair, is a real but not a build's difference. With
/// the margin none of the 36 is called; a build 5 % slower still is in 17 of 18 quiet and 13
/// of 18 loaded (15 of 18 without it).
pub const SAME_WITHIN: f64 = 0.01;

/// What the per-trial figures were counted in: cycles when every trial of both sides counted
/// them, else seconds (a worker without a cycle counter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RatioBasis {
    Cycles,
    Seconds,
}

/// Where the interval puts B against A.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PairedVerdict {
    /// The whole interval is below 1 − `SAME_WITHIN`.
    Faster,
    /// The whole interval is above 1 + `SAME_WITHIN`.
    Slower,
    /// The interval reaches within `SAME_WITHIN` of 1.
    Indistinguishable,
}

impl std::fmt::Display for PairedVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PairedVerdict::Faster => "B faster (95 % CI below 0.99)",
            PairedVerdict::Slower => "B slower (95 % CI above 1.01)",
            PairedVerdict::Indistinguishable => "no difference shown (95 % CI reaches 0.99–1.01)",
        })
    }
}

/// B/A over the pairs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairedRatio {
    pub pairs: usize,
    /// exp(mean of ln(B_i/A_i)).
    pub ratio: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
    pub basis: RatioBasis,
}

impl PairedRatio {
    pub fn verdict(&self) -> PairedVerdict {
        if self.ci95_high < 1.0 - SAME_WITHIN {
            PairedVerdict::Faster
        } else if self.ci95_low > 1.0 + SAME_WITHIN {
            PairedVerdict::Slower
        } else {
            PairedVerdict::Indistinguishable
        }
    }
}

/// The per-call figure of one trial in `basis`; None for a trial without calls.
fn per_call(t: &Trial, basis: RatioBasis) -> Option<f64> {
    let v = match basis {
        RatioBasis::Cycles => t.cycles as f64,
        RatioBasis::Seconds => t.seconds,
    };
    (t.measurements > 0 && v > 0.0).then(|| v / t.measurements as f64)
}

/// The geometric-mean ratio of `b` over `a`, trial `i` of one paired with trial `i` of the
/// other. None with fewer than `MIN_PAIRS` pairs or a trial without a positive figure.
pub fn paired_ratio(a: &[Trial], b: &[Trial]) -> Option<PairedRatio> {
    let basis = if a.iter().chain(b).all(|t| t.cycles > 0) {
        RatioBasis::Cycles
    } else {
        RatioBasis::Seconds
    };
    let logs: Vec<f64> = a
        .iter()
        .zip(b)
        .map(|(x, y)| Some((per_call(y, basis)? / per_call(x, basis)?).ln()))
        .collect::<Option<_>>()?;
    if logs.len() < MIN_PAIRS {
        return None;
    }
    let n = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / n;
    let var = logs.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let half = t95(logs.len() as u64 - 1) * (var / n).sqrt();
    Some(PairedRatio {
        pairs: logs.len(),
        ratio: mean.exp(),
        ci95_low: (mean - half).exp(),
        ci95_high: (mean + half).exp(),
        basis,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(cycles_per_call: f64) -> Trial {
        Trial {
            measurements: 1000,
            seconds: cycles_per_call * 1e-6,
            cycles: (cycles_per_call * 1000.0) as u64,
        }
    }

    fn trials(per_call: &[f64]) -> Vec<Trial> {
        per_call.iter().map(|&c| trial(c)).collect()
    }

    #[test]
    fn a_constant_ratio_has_a_zero_width_interval() {
        let a = trials(&[100.0, 200.0, 400.0]);
        let b = trials(&[50.0, 100.0, 200.0]);
        let r = paired_ratio(&a, &b).unwrap();
        assert!((r.ratio - 0.5).abs() < 1e-12);
        assert!((r.ci95_low - 0.5).abs() < 1e-12 && (r.ci95_high - 0.5).abs() < 1e-12);
        assert_eq!(
            (r.pairs, r.basis, r.verdict()),
            (3, RatioBasis::Cycles, PairedVerdict::Faster)
        );
    }

    #[test]
    fn known_log_ratios_give_the_t_interval() {
        // ln ratios ln2, 0, −ln2, 0 (mean 0, sd √(2·ln²2/3)), t(3) = 3.182:
        // the interval is exp(±3.182·sd/2) around 1.
        let a = trials(&[100.0, 100.0, 100.0, 100.0]);
        let b = trials(&[200.0, 100.0, 50.0, 100.0]);
        let r = paired_ratio(&a, &b).unwrap();
        let ln2 = 2f64.ln();
        let half = 3.182 * (2.0 * ln2 * ln2 / 3.0).sqrt() / 2.0;
        assert!((r.ratio - 1.0).abs() < 1e-12);
        assert!((r.ci95_low - (-half).exp()).abs() < 1e-9);
        assert!((r.ci95_high - half.exp()).abs() < 1e-9);
        assert_eq!(r.verdict(), PairedVerdict::Indistinguishable);
        // Swapping the sides inverts the ratio and its interval.
        let s = paired_ratio(&b, &a).unwrap();
        assert!((s.ci95_high - 1.0 / r.ci95_low).abs() < 1e-9);
    }

    #[test]
    fn slower_when_the_whole_interval_is_above_one() {
        let a = trials(&[100.0, 101.0, 99.0, 100.0, 100.5]);
        let b = trials(&[150.0, 152.0, 149.0, 151.0, 150.0]);
        let r = paired_ratio(&a, &b).unwrap();
        assert!(r.ci95_low > 1.45 && r.ci95_high < 1.55 && r.ci95_low <= r.ratio);
        assert_eq!(r.verdict(), PairedVerdict::Slower);
    }

    /// An interval wholly above 1 but within the margin is no difference: what two identical
    /// builds showed (1.000–1.005); just past it, it is.
    #[test]
    fn an_interval_within_one_percent_of_one_is_no_difference() {
        let within = PairedRatio {
            pairs: 10,
            ratio: 1.003,
            ci95_low: 1.0005,
            ci95_high: 1.005,
            basis: RatioBasis::Cycles,
        };
        assert_eq!(within.verdict(), PairedVerdict::Indistinguishable);
        let below = PairedRatio {
            ratio: 0.986,
            ci95_low: 0.980,
            ci95_high: 0.992,
            ..within
        };
        assert_eq!(below.verdict(), PairedVerdict::Indistinguishable);
        let beyond = PairedRatio {
            ratio: 1.02,
            ci95_low: 1.011,
            ci95_high: 1.03,
            ..within
        };
        assert_eq!(beyond.verdict(), PairedVerdict::Slower);
        let faster = PairedRatio {
            ratio: 0.98,
            ci95_low: 0.97,
            ci95_high: 0.989,
            ..within
        };
        assert_eq!(faster.verdict(), PairedVerdict::Faster);
    }

    #[test]
    fn too_few_pairs_or_an_empty_trial_give_nothing() {
        assert!(paired_ratio(&trials(&[100.0]), &trials(&[50.0])).is_none());
        let mut b = trials(&[50.0, 60.0]);
        b[1].measurements = 0;
        assert!(paired_ratio(&trials(&[100.0, 100.0]), &b).is_none());
    }

    #[test]
    fn without_cycles_the_ratio_is_of_seconds() {
        let a = trials(&[100.0, 100.0]);
        let mut b = trials(&[300.0, 300.0]);
        b[0].cycles = 0;
        let r = paired_ratio(&a, &b).unwrap();
        assert_eq!(r.basis, RatioBasis::Seconds);
        assert!((r.ratio - 3.0).abs() < 1e-9);
    }
}
