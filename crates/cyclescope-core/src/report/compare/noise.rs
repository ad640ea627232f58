//! The noise a verdict weighs a difference against: variation between runs, not only between
//! the trials of one run. A figure's trials are separate worker processes, so their spread
//! (the relative standard deviation of the per-process means) measures how much one process's
//! mean wanders; a run's mean then carries that spread over √n, and the run as a whole is taken
//! to stray from the host's long-run figure by as much as one more process does (a later run is
//! a fresh set of processes at another moment), and never by less than [`HOST_RUN_STRAY`] (the
//! host itself moves between runs). When both runs measured the baseline
//! `pseudoXOF-<bits>` at the job's length, the difference is judged on the `× pseudoXOF` ratios
//! instead: a host that was slower during one whole run weighs on the job and its baseline
//! alike and cancels, and two counters (another host) become comparable. What the bundled
//! helpers measured in both runs (one program twice: an A/A comparison each) still stray beyond
//! that model is added to every row's variance. Pure arithmetic; it never reads a file.

/// The normal quantile of a two-sided 95 % test.
const Z95: f64 = 1.96;

/// One side's figure as the noise rule reads it: the mean and the spread of its per-process
/// means.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Spread {
    pub(crate) mean: f64,
    /// Relative standard deviation of the per-process (trial) means.
    pub(crate) relative_sd: f64,
    /// How many processes (trials) the mean is of.
    pub(crate) processes: u32,
}

/// How far a whole run's figures stray from another run's, at least (relative standard
/// deviation per run), whatever its trials say, when the two are not divided by a baseline
/// measured in the same run. The host itself moves between runs, and the guest cannot see it:
/// on this 2-core VM other tenants share the physical cores, and while they do, code with
/// much instruction-level parallelism (SM3, the bundled helpers) runs up to 1.75× slower per
/// call — preemption-free calls included, so no per-call statistic filters it. Such a spell
/// lasts from milliseconds to minutes: a whole run can fall in it, its trials then agree with
/// each other, and nothing inside the run shows it. A CI run saw sm3hash-256's
/// uninterrupted-call mean at 64 B 1.46× apart between two runs of one build, each with a
/// tight interval; `bench/verdicts.py --work ilp` measures how far two runs of one build
/// stray (A/A) on such code. A floor of 20 % per run puts two runs' 95 % interval at ×1.74,
/// beyond every A/A pair measured; a 4.9× change is still called, and anything finer between
/// two separate runs is the interleaved A/B's to judge (`compare --live`, the workbench's
/// `B`), whose builds share every spell. Where both runs measured the baseline, the ratios
/// cancel the run's offset and this floor does not apply.
pub(crate) const HOST_RUN_STRAY: f64 = 0.20;

impl Spread {
    /// The variance, in squared natural-log units, this figure brings into a comparison of two
    /// runs: its mean's own error (s²/n) and its run's offset (one more process's s², at least
    /// `floor`²).
    fn log_variance(&self, floor: f64) -> f64 {
        let s2 = self.relative_sd * self.relative_sd;
        s2 / f64::from(self.processes.max(1)) + s2.max(floor * floor)
    }
}

/// B against A on the log scale: the log difference judged, and the half-width of its 95 %
/// interval under the between-run noise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weighed {
    /// ln(B / A), or ln of the ratio of the two `× pseudoXOF` ratios.
    pub(crate) log_ratio: f64,
    pub(crate) half_width: f64,
}

impl Weighed {
    /// B's figures over A's (`b` / `a`), each side optionally divided by its run's baseline
    /// figure at the same length (`refs` = (A's, B's)).
    pub(crate) fn of(a: &Spread, b: &Spread, refs: Option<(&Spread, &Spread)>) -> Option<Self> {
        let ln = |s: &Spread| (s.mean > 0.0 && s.mean.is_finite()).then(|| s.mean.ln());
        let mut log_ratio = ln(b)? - ln(a)?;
        // A run's offset weighs on its job and its baseline alike: divided, it cancels.
        let floor = if refs.is_some() { 0.0 } else { HOST_RUN_STRAY };
        let mut variance = a.log_variance(floor) + b.log_variance(floor);
        if let Some((ra, rb)) = refs {
            log_ratio -= ln(rb)? - ln(ra)?;
            variance += ra.log_variance(floor) + rb.log_variance(floor);
        }
        Some(Self {
            log_ratio,
            half_width: Z95 * variance.sqrt(),
        })
    }

    /// B / A (the ratio of the ratios when judged on baselines).
    pub fn ratio(&self) -> f64 {
        self.log_ratio.exp()
    }

    /// The verdict of this weighing.
    pub(crate) fn verdict(&self) -> super::Verdict {
        if !self.is_beyond() {
            super::Verdict::WithinNoise
        } else if self.log_ratio < 0.0 {
            super::Verdict::Faster
        } else {
            super::Verdict::Slower
        }
    }

    /// The same difference with `extra` (squared log units) more variance.
    pub(crate) fn widened(&self, extra: f64) -> Self {
        let v = (self.half_width / Z95).powi(2) + extra;
        Self {
            log_ratio: self.log_ratio,
            half_width: Z95 * v.sqrt(),
        }
    }

    /// Whether the difference lies beyond the noise.
    pub(crate) fn is_beyond(&self) -> bool {
        self.log_ratio.abs() > self.half_width
    }

    /// How far B lies above A beyond the noise, as a share: exp(d − half-width) − 1 when
    /// positive.
    pub(crate) fn excess_slowdown(&self) -> Option<f64> {
        let x = (self.log_ratio - self.half_width).exp_m1();
        (x > 0.0).then_some(x)
    }
}

/// The variance the model misses between these two runs, from rows that measured one program
/// in both (the bundled helpers: an A/A comparison each): the mean over them of how far d²
/// exceeds the model's V (0 where it does not), when there are at least two; else none.
pub(crate) fn extra_variance(same_program: &[Weighed]) -> f64 {
    if same_program.len() < 2 {
        return 0.0;
    }
    let excess: f64 = same_program
        .iter()
        .map(|w| (w.log_ratio.powi(2) - (w.half_width / Z95).powi(2)).max(0.0))
        .sum::<f64>()
        / same_program.len() as f64;
    excess
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(mean: f64, relative_sd: f64) -> Spread {
        Spread {
            mean,
            relative_sd,
            processes: 5,
        }
    }

    #[test]
    fn a_difference_counts_only_beyond_the_noise_of_two_runs() {
        // Two runs alone: each strays by the host's floor, whatever its trials say. The 1.46×
        // a CI run saw between two runs of one build (tight intervals on both) is no
        // difference; a 4.9× change is one.
        let w = Weighed::of(&s(100.0, 0.01), &s(146.0, 0.01), None).unwrap();
        let v = 2.0 * (1e-4 / 5.0 + HOST_RUN_STRAY * HOST_RUN_STRAY);
        assert!((w.half_width - 1.96 * v.sqrt()).abs() < 1e-12, "{w:?}");
        assert!(!w.is_beyond(), "{w:?}");
        let w = Weighed::of(&s(100.0, 0.01), &s(490.0, 0.01), None).unwrap();
        assert!(w.is_beyond() && w.excess_slowdown().unwrap() > 1.0, "{w:?}");
        // Trials that disagree more than the floor widen it further.
        let wide = Weighed::of(&s(100.0, 0.3), &s(146.0, 0.3), None).unwrap();
        assert!(wide.half_width > w.half_width, "{wide:?}");
        // Divided by baselines of the same runs, the offset cancels and the floor goes: 3 %
        // apart with 1 % process spread on each side is no difference, 10 % is.
        let base = s(2000.0, 0.01);
        let by_ratio = |b: f64| Weighed::of(&s(100.0, 0.01), &s(b, 0.01), Some((&base, &base)));
        assert!(!by_ratio(103.0).unwrap().is_beyond());
        assert!(by_ratio(110.0).unwrap().is_beyond());
    }

    #[test]
    fn a_host_slower_for_a_whole_run_cancels_in_the_baseline_ratio() {
        // Run B was 2× slower throughout: the job and its baseline alike.
        let (a, ra) = (s(1000.0, 0.01), s(2000.0, 0.01));
        let (b, rb) = (s(2000.0, 0.01), s(4000.0, 0.01));
        assert!(Weighed::of(&a, &b, None).unwrap().is_beyond());
        let w = Weighed::of(&a, &b, Some((&ra, &rb))).unwrap();
        assert!(w.log_ratio.abs() < 1e-12 && !w.is_beyond(), "{w:?}");
        // A real change still shows: B's job 20 % slower against an unchanged baseline.
        let w = Weighed::of(&a, &s(1200.0, 0.01), Some((&ra, &ra))).unwrap();
        assert!(w.is_beyond(), "{w:?}");
    }

    #[test]
    fn helpers_that_stray_beyond_the_model_widen_every_interval() {
        let strayed = Weighed {
            log_ratio: 0.10,
            half_width: 0.02,
        };
        let calm = Weighed {
            log_ratio: 0.0,
            half_width: 0.02,
        };
        assert_eq!(extra_variance(&[strayed]), 0.0, "one is no estimate");
        let x = extra_variance(&[strayed, calm]);
        assert!(
            (x - (0.01 - (0.02f64 / 1.96).powi(2)) / 2.0).abs() < 1e-12,
            "{x}"
        );
        assert!(strayed.is_beyond() && !strayed.widened(x).is_beyond());
        assert_eq!(extra_variance(&[calm, calm]), 0.0);
    }

    #[test]
    fn no_mean_no_weighing() {
        assert_eq!(Weighed::of(&s(0.0, 0.01), &s(1.0, 0.01), None), None);
    }
}
