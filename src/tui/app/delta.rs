//! The Δ of a finished job against the same instance × length measured earlier — in the
//! pinned baseline run (`b`), else the newest earlier run of this session that has it (a run
//! reloaded with `--run` is run #1) — with the ratio and the verdict of `compare` (the core's
//! `report::compare::judge`, never a second rule), and the earlier figures of each curve for
//! the curve to overlay. Derived on demand from the jobs; nothing stored.

use crate::report::compare::{Figure, JudgedOn, Verdict, judge_with};
use crate::vocabulary::{JobKey, JobSummary};

use super::{App, CurveSeries, JobState, ResultRow};

/// A row's figure against its earlier one.
#[derive(Debug, Clone, PartialEq)]
pub struct Delta {
    /// Where the earlier figure comes from: `#2` (a run of this session) or `b3` (build 3
    /// of the History panel, pinned).
    pub from: String,
    pub earlier: Figure,
    /// This figure over the earlier one: mean cycles, or the uninterrupted-call means when
    /// the verdict was judged on them.
    pub ratio: f64,
    pub verdict: Verdict,
    /// Judged on the uninterrupted-call means (`measure::robust`): a mean was doubtful.
    pub robust: bool,
}

impl Delta {
    /// `now` against `earlier`, by `compare`'s rule.
    fn of(from: String, earlier: Figure, now: &Figure) -> Self {
        let (verdict, weighed) = judge_with(&earlier, now, None);
        let (ratio, robust) = match weighed {
            Some((w, JudgedOn::RobustMean)) => (w.ratio(), true),
            _ => (now.mean_cycles / earlier.mean_cycles, false),
        };
        Delta {
            from,
            earlier,
            ratio,
            verdict,
            robust,
        }
    }
}

impl App {
    /// The finished figure of `key` (candidate, label, length) in `run`: a label two
    /// candidates share (`iccs` and `iccs-c`) is never compared across them.
    fn done_in(&self, key: &JobKey, run: usize) -> Option<&JobSummary> {
        self.jobs.iter().find_map(|j| match &j.state {
            JobState::Done(s) if j.run == run && &j.key == key => Some(&**s),
            _ => None,
        })
    }

    /// The run whose figure of `key` a figure of run `than` is compared with: the pinned
    /// baseline when it has one and is earlier, else the newest earlier run. A later run is
    /// never "earlier", pinned or not.
    fn earlier_run(&self, key: &JobKey, than: usize) -> Option<usize> {
        let has = |run: usize| run < than && self.done_in(key, run).is_some();
        if let Some(b) = self.baseline.filter(|&b| has(b)) {
            return Some(b);
        }
        (0..than).rev().find(|&run| has(run))
    }

    /// The Δ of a finished row; None for a failed row, one without cycles, or a first figure.
    pub fn delta(&self, r: &ResultRow) -> Option<Delta> {
        let now = Figure::of_summary(r.summary?)?;
        if let Some(p) = &self.pinned_build {
            let e = &p.row.entry;
            if e.label == r.key.label
                && e.input_bytes == r.key.input_bytes
                && let Some(earlier) = e.figure()
            {
                return Some(Delta::of(format!("b{}", p.number), earlier, &now));
            }
        }
        let run = self.earlier_run(r.key, r.run)?;
        let earlier = Figure::of_summary(self.done_in(r.key, run)?)?;
        Some(Delta::of(format!("#{}", run + 1), earlier, &now))
    }

    /// For each curve of an instance measured in more than one run, the figures of the run
    /// its newest figures are compared with, labelled `<label> #<run>`.
    pub(super) fn earlier_curves(&self, shown: &[CurveSeries]) -> Vec<CurveSeries> {
        shown
            .iter()
            .filter(|s| !s.reference && s.earlier.is_none())
            .filter_map(|s| {
                // The curve's candidate is that of its newest figure.
                let newest = self
                    .jobs
                    .iter()
                    .filter(|j| j.key.label == s.label && matches!(j.state, JobState::Done(_)))
                    .max_by_key(|j| j.run)?;
                let key = |bytes: u64| JobKey {
                    candidate: newest.key.candidate.clone(),
                    label: s.label.clone(),
                    input_bytes: bytes,
                };
                let run = s
                    .points
                    .iter()
                    .find_map(|&(bytes, _)| self.earlier_run(&key(bytes), newest.run))?;
                let mut points: Vec<(u64, f64)> = s
                    .points
                    .iter()
                    .filter_map(|&(bytes, _)| {
                        let c = self.done_in(&key(bytes), run)?.mean_cycles?;
                        Some((bytes, c / bytes.max(1) as f64))
                    })
                    .collect();
                points.sort_by_key(|p| p.0);
                Some(CurveSeries {
                    label: format!("{} #{}", s.label, run + 1),
                    points,
                    reference: false,
                    earlier: Some(run),
                    outliers: false,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::report::compare::Verdict;
    use crate::tui::app::JobState;
    use crate::tui::demo;
    use crate::tui::panel::results;

    /// The C baselines (`iccs-c`) share their labels with the bundled ones on purpose: their
    /// rows name the candidate, and a figure is never compared with the other candidate's.
    #[test]
    fn a_label_two_candidates_share_is_named_and_never_compared_across_them() {
        use crate::vocabulary::{EngineEvent, JobKey};
        let mut app = demo::rerun();
        app.apply(EngineEvent::RunStarted {
            run_dir: "runs/demo-20260101T000200Z".into(),
            labels: vec!["sm3hash-256".into()],
            lengths: vec![32],
            cpus: vec![1],
            reference_jobs: Vec::new(),
        });
        let key = JobKey {
            candidate: "iccs-c".into(),
            label: "sm3hash-256".into(),
            input_bytes: 32,
        };
        app.apply(EngineEvent::JobFinished {
            job: key.clone(),
            summary: Box::new(demo::summary(3100.0, 32)),
            record: "r.json".into(),
            snapshot: None,
        });
        let rows = app.result_rows();
        let c = rows.iter().find(|r| r.key == &key).unwrap();
        assert!(c.shared_label);
        assert_eq!(results::cells(c)[0], "`iccs-c/sm3hash-256`");
        assert!(
            app.delta(c).is_none(),
            "compared with another candidate's figure"
        );
        let bundled = rows
            .iter()
            .find(|r| r.run == 1 && r.key.input_bytes == 32)
            .unwrap();
        assert_eq!(
            results::cells(bundled)[0],
            format!("`{}/sm3hash-256`", bundled.key.candidate)
        );
        assert_eq!(app.delta(bundled).unwrap().earlier.mean_cycles, 1469.0);
    }

    #[test]
    fn a_second_run_shows_the_earlier_figure_ratio_and_verdict() {
        let mut app = demo::rerun();
        // The rerun's 32 B figure made 2.5× cheaper: beyond what two separate runs stray with
        // the host (see `compare`'s rule), which the demo's 1 % difference is not.
        for j in app.jobs.iter_mut() {
            if let JobState::Done(s) = &mut j.state
                && j.run == 1
                && j.key.input_bytes == 32
            {
                s.mean_cycles = Some(1455.0 / 2.5);
            }
        }
        let rows = app.result_rows();
        let at = |run: usize, bytes: u64| {
            rows.iter()
                .position(|r| r.run == run && r.key.input_bytes == bytes)
                .unwrap()
        };
        // 582 against the baseline's 1469.
        let d = app.delta(&rows[at(1, 32)]).unwrap();
        assert_eq!((d.from.as_str(), d.earlier.mean_cycles), ("#1", 1469.0));
        assert!((d.ratio - 582.0 / 1469.0).abs() < 1e-12);
        assert_eq!(d.verdict, Verdict::Faster);
        // 128 B was never measured before; the baseline's own rows have nothing earlier.
        assert!(app.delta(&rows[at(1, 128)]).is_none());
        assert!(app.delta(&rows[at(0, 32)]).is_none());
        let text = demo::draw_text(150, 12, |f| {
            results::render(f, f.area(), &app);
        });
        assert!(text.contains("earlier ×      Δ"), "{text}");
        assert!(text.contains("#1 1469 ×0.396 faster"), "{text}");
    }

    /// Pinning the newer run as the baseline compares nothing of the older run with it: its
    /// "earlier" column would name a later run.
    #[test]
    fn a_pinned_later_run_is_never_the_earlier_figure() {
        let mut app = demo::rerun();
        app.baseline = Some(1);
        let rows = app.result_rows();
        let older = rows
            .iter()
            .find(|r| r.run == 0 && r.key.input_bytes == 32)
            .unwrap();
        assert!(app.delta(older).is_none(), "{:?}", app.delta(older));
    }

    #[test]
    fn within_both_intervals_is_noise_and_the_detail_says_so() {
        let mut app = demo::rerun();
        // Widen the second run's interval at 32 B to ±2 %: 14 cycles apart is then noise.
        for j in app.jobs.iter_mut().filter(|j| j.run == 1) {
            if let JobState::Done(s) = &mut j.state {
                s.ci95_relative = Some(0.02);
            }
        }
        let rows = app.result_rows();
        let r = rows
            .iter()
            .find(|r| r.run == 1 && r.key.input_bytes == 32)
            .unwrap();
        assert_eq!(app.delta(r).unwrap().verdict, Verdict::WithinNoise);
        let lines = results::detail(&app, r);
        assert_eq!(
            lines[1].0,
            "Δ ≈ =: A/B of 2 instances · i: instructions · vs run #1: 1469 → 1455 cycles, \
             ×0.990, within noise"
        );
    }

    #[test]
    fn without_a_baseline_the_newest_earlier_run_is_compared_and_the_curve_overlays_it() {
        let mut app = demo::rerun();
        app.baseline = None;
        let rows = app.result_rows();
        let r = rows
            .iter()
            .find(|r| r.run == 1 && r.key.input_bytes == 32)
            .unwrap();
        assert_eq!(app.delta(r).unwrap().from, "#1");
        let curves = app.curves();
        let earlier = curves
            .iter()
            .find(|s| s.earlier.is_some())
            .expect("an overlay of the earlier run");
        assert_eq!(earlier.label, "sm3hash-256 #1");
        assert_eq!(earlier.points[0], (32, 1469.0 / 32.0));
    }

    /// A robust figure of five trials at `mean` ticks, ±0.5 %.
    fn robust(mean: f64) -> Option<crate::measure::robust::Robust> {
        let body = |m: f64| crate::measure::robust::TrialBody {
            mean_ticks: m,
            calls: 1000,
            excluded: 10,
        };
        crate::measure::robust::of_trials(
            &[0.995, 1.0, 1.005, 0.998, 1.002].map(|f| body(f * mean)),
            1.0,
        )
    }

    #[test]
    fn a_doubtful_mean_is_judged_on_the_uninterrupted_calls_and_says_so() {
        let mut app = demo::rerun();
        // The second run's 32 B was measured beside a busy loop: its mean doubled, its
        // uninterrupted calls did not move.
        for j in app.jobs.iter_mut() {
            if let JobState::Done(s) = &mut j.state {
                s.robust = robust(1200.0);
                if j.run == 1 && j.key.input_bytes == 32 {
                    s.mean_cycles = Some(2910.0);
                    s.doubts = vec![crate::measure::doubt::Doubt::DisturbedTrialKept {
                        trials: 5,
                        reason: "preempted: waited 48 % of the trial for the CPU".into(),
                    }];
                }
            }
        }
        let rows = app.result_rows();
        let r = rows
            .iter()
            .find(|r| r.run == 1 && r.key.input_bytes == 32)
            .unwrap();
        let d = app.delta(r).unwrap();
        assert_eq!((d.verdict.clone(), d.robust), (Verdict::WithinNoise, true));
        assert!(
            (d.ratio - 1.0).abs() < 1e-9,
            "the robust ratio: {}",
            d.ratio
        );
        assert_eq!(crate::tui::panel::results::delta_cells(&d)[2], "≈ noise*");
        let lines = results::detail(&app, r);
        assert_eq!(
            lines[1].0,
            "Δ* ≈ =: A/B of 2 instances · i: instructions · vs run #1: the mean is doubtful, \
             so judged on the uninterrupted-call means 1200 → 1200, ×1.000, within noise"
        );
        assert!(
            lines.iter().any(|l| l
                .0
                .contains("uninterrupted-call mean 1200.0 [1194.3, 1205.7] over 5 trial(s)")),
            "{lines:?}"
        );
        // A build 4.9× slower is called slower through the same doubt.
        for j in app.jobs.iter_mut().filter(|j| j.run == 1) {
            if let JobState::Done(s) = &mut j.state {
                s.robust = robust(4.9 * 1200.0);
            }
        }
        let rows = app.result_rows();
        let r = rows
            .iter()
            .find(|r| r.run == 1 && r.key.input_bytes == 32)
            .unwrap();
        assert_eq!(app.delta(r).unwrap().verdict, Verdict::Slower);
    }
}
