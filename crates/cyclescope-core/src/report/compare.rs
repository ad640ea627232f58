//! Comparing two runs job by job (the evaluator's "did my change help?"): mean cycles of each,
//! their ratio, and a verdict that counts a difference only beyond the noise between runs
//! (`noise`: the per-process spread of each figure, a run's own offset, and — when both runs
//! measured the baseline pseudoXOF of the job's width and length — on the `× pseudoXOF`
//! ratios, which also makes two counters comparable); a figure marked ⚠ on either side gets no
//! faster/slower verdict but `doubtful`; a job without an interval (one
//! trial) is not comparable, never faster, and a job whose record the record check rejects
//! (the check `validate`, `report` and `merge` apply) gets no verdict at all but `invalid`,
//! naming the record and its finding. Also the regression gate of `--fail-above` and the rows
//! in every export format. Pure once the runs are read (`RunRecords::read`): it gets the
//! records (or, for the workbench's Δ, the finished jobs' summaries through
//! `Figure::of_summary`).

use std::collections::BTreeMap;
use std::path::Path;

use crate::record::TimingRecord;
use crate::record::check::CheckedRecord;

mod drift;
mod judge;
mod noise;
mod render;
mod verdict;

use drift::{baselines, is_helper, probe};

pub use judge::{Figure, judge, judge_with};
pub use noise::Weighed;
pub use render::{rows_csv, rows_json, table};
pub use verdict::{Side, Verdict};

#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub label: String,
    pub(crate) input_bytes: u64,
    pub(crate) a: Option<f64>,
    pub(crate) b: Option<f64>,
    /// The 95 % half-widths of the two means, in cycles.
    pub(crate) ci_a: Option<f64>,
    pub(crate) ci_b: Option<f64>,
    /// The difference as the verdict weighed it, and on what.
    pub(crate) weighed: Option<(Weighed, JudgedOn)>,
    pub(crate) verdict: Verdict,
    /// What counted A's and B's figure (cycles or instructions), where the side has one.
    pub(crate) counters: [Option<crate::counter::Counter>; 2],
    /// The instance whose doubtful figure this row's `× pseudoXOF` divides by (the row's own
    /// figures are clean): its ratio, not its figure, is what the doubt is about.
    pub(crate) doubtful_divisor: Option<String>,
}

/// The reason of a row doubtful through the figure its ratio divides by, naming that
/// instance and its own doubt.
fn divisor_doubt(divisor: &str, bytes: u64, why: &str) -> String {
    format!(
        "its × pseudoXOF divides by {divisor} at {bytes} B, whose figure is doubtful ({why}); \
         the row's own figures are clean, and across two counters only the ratios compare"
    )
}

/// What a verdict compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JudgedOn {
    /// The two runs' mean cycles.
    MeanCycles,
    /// Each run's `× pseudoXOF` ratio at that length (same counter in both runs).
    BaselineRatio,
    /// Two exact instruction counts: B / A as it is, no interval.
    ExactCount,
    /// The `× pseudoXOF` ratios of two runs counted by different counters (another host):
    /// counter-free.
    BaselineRatioAcrossCounters,
    /// Both sides' uninterrupted-call means (`measure::robust`): one side's mean was doubtful.
    RobustMean,
}

impl JudgedOn {
    /// The word exports write.
    pub fn word(self) -> &'static str {
        match self {
            JudgedOn::MeanCycles => "mean_cycles",
            JudgedOn::BaselineRatio => "ratio_to_pseudoxof",
            JudgedOn::ExactCount => "exact_instructions",
            JudgedOn::BaselineRatioAcrossCounters => "ratio_to_pseudoxof_counter_free",
            JudgedOn::RobustMean => crate::measure::robust::STATISTIC,
        }
    }
}

impl Comparison {
    /// How far B lies above A beyond the between-run noise, as a share of A (the judged
    /// ratio's lower 95 % bound minus one), for a job judged slower; None otherwise.
    pub fn excess_slowdown(&self) -> Option<f64> {
        if let Verdict::Exact(std::cmp::Ordering::Greater) = self.verdict {
            return self.weighed.map(|(w, _)| w.log_ratio.exp() - 1.0);
        }
        if self.verdict != Verdict::Slower {
            return None;
        }
        self.weighed.and_then(|(w, _)| w.excess_slowdown())
    }

    /// The judged B/A (of the `× pseudoXOF` ratios where both runs have them) with its 95 %
    /// interval under the between-run noise.
    pub fn judged_ratio(&self) -> Option<(f64, f64, f64, JudgedOn)> {
        let (w, on) = self.weighed?;
        Some((
            w.log_ratio.exp(),
            (w.log_ratio - w.half_width).exp(),
            (w.log_ratio + w.half_width).exp(),
            on,
        ))
    }

    /// The message length of the job.
    pub fn input_bytes(&self) -> u64 {
        self.input_bytes
    }

    /// False when the two figures cannot be weighed (other counter, no interval, no cycles).
    pub fn is_comparable(&self) -> bool {
        !matches!(self.verdict, Verdict::NotComparable(_))
    }

    /// True when a figure of this job is marked ⚠ (no faster/slower verdict then).
    pub fn is_doubtful(&self) -> bool {
        matches!(self.verdict, Verdict::Doubtful(..))
    }

    /// True when only one of the two sides has the job.
    pub fn is_one_sided(&self) -> bool {
        matches!(self.verdict, Verdict::OnlyInA | Verdict::OnlyInB)
    }

    /// True when a record of this job breaks a rule of the record check (no verdict then).
    pub fn is_invalid(&self) -> bool {
        matches!(self.verdict, Verdict::Invalid(..))
    }

    /// Whether B is slower than A beyond the between-run noise by more than `margin`
    /// (`compare --fail-above`).
    pub fn regressed(&self, margin: f64) -> bool {
        self.excess_slowdown().is_some_and(|x| x > margin)
    }
}

type Key = (String, u64);

fn by_job<'a>(records: impl Iterator<Item = &'a TimingRecord>) -> BTreeMap<Key, &'a TimingRecord> {
    records
        .filter(|r| r.status.is_complete())
        .map(|r| ((r.label.clone(), r.input_bytes), r))
        .collect()
}

/// One run as `compare` reads it: the records the record check accepts, and those it rejects.
#[derive(Debug, Default)]
pub struct RunRecords {
    pub valid: Vec<TimingRecord>,
    pub rejected: Vec<CheckedRecord>,
    /// A published harness dataset (no cyclescope request in its campaign), not a run of
    /// this host: `compare` then shows only the jobs both sides have, unless told otherwise.
    pub published: bool,
}

impl RunRecords {
    /// Reads the run directory or dataset at `root` as the report does. A rejected record
    /// that does not even say which job it is (not JSON, a link) cannot be given a row, so
    /// it is an error naming it, never a job "only in" the other run.
    pub fn read(root: &Path) -> Result<Self, super::ReportError> {
        let (dataset, rejected) = super::Dataset::read(root)?;
        let (rejected, unplaced): (Vec<_>, Vec<_>) =
            rejected.into_iter().partition(|c| c.job().is_some());
        if !unplaced.is_empty() {
            return Err(super::dataset::rejected_records(root, unplaced));
        }
        Ok(Self {
            published: dataset.is_harness(),
            valid: dataset.into_records().into_iter().map(|(_, r)| r).collect(),
            rejected,
        })
    }
}

/// Compares two runs: their valid records job by job as [`compare`] does, and every job whose
/// record either run's check rejected marked `invalid` (naming that record and its first
/// finding), with no figure from that run and no verdict.
pub fn compare_runs(a: &RunRecords, b: &RunRecords) -> Vec<Comparison> {
    let mut rows = compare_records(a.valid.iter(), b.valid.iter());
    for (side, run) in [(Side::A, a), (Side::B, b)] {
        for c in &run.rejected {
            let Some(job) = c.job() else { continue };
            mark_invalid(&mut rows, side, job, c);
        }
    }
    rows
}

fn mark_invalid(rows: &mut Vec<Comparison>, side: Side, job: Key, c: &CheckedRecord) {
    let at = match rows
        .binary_search_by(|r| (r.label.as_str(), r.input_bytes).cmp(&(job.0.as_str(), job.1)))
    {
        Ok(i) => i,
        Err(i) => {
            rows.insert(
                i,
                Comparison {
                    label: job.0,
                    input_bytes: job.1,
                    a: None,
                    b: None,
                    ci_a: None,
                    ci_b: None,
                    weighed: None,
                    verdict: Verdict::OnlyInA,
                    counters: [None, None],
                    doubtful_divisor: None,
                },
            );
            i
        }
    };
    let row = &mut rows[at];
    match side {
        Side::A => (row.a, row.ci_a, row.counters[0]) = (None, None, None),
        Side::B => (row.b, row.ci_b, row.counters[1]) = (None, None, None),
    }
    row.weighed = None;
    row.doubtful_divisor = None;
    if row.is_invalid() {
        return;
    }
    let first = c
        .findings
        .first()
        .map(ToString::to_string)
        .unwrap_or_default();
    let text = match c.findings.len() {
        0 | 1 => first,
        n => format!("{first} (and {} more)", n - 1),
    };
    row.verdict = Verdict::Invalid(side, text);
}

/// Compares the complete records of two runs, job by job, in label and length order.
pub fn compare(a: &[TimingRecord], b: &[TimingRecord]) -> Vec<Comparison> {
    compare_records(a.iter(), b.iter())
}

fn compare_records<'a>(
    a: impl Iterator<Item = &'a TimingRecord>,
    b: impl Iterator<Item = &'a TimingRecord>,
) -> Vec<Comparison> {
    let (ma, mb) = (by_job(a), by_job(b));
    let keys: std::collections::BTreeSet<&Key> = ma.keys().chain(mb.keys()).collect();
    let mut rows: Vec<Comparison> = keys
        .into_iter()
        .map(|k| {
            let (ra, rb) = (ma.get(k), mb.get(k));
            let (fa, fb) = (
                ra.and_then(|r| Figure::of_record(r)),
                rb.and_then(|r| Figure::of_record(r)),
            );
            let divisor = baselines(&ma, &mb, k);
            let (verdict, weighed) = match (ra, rb, &fa, &fb) {
                (Some(_), None, ..) => (Verdict::OnlyInA, None),
                (None, Some(_), ..) => (Verdict::OnlyInB, None),
                (Some(_), Some(_), Some(fa), Some(fb)) => {
                    judge_with(fa, fb, divisor.as_ref().map(|d| (&d.a, &d.b)))
                }
                _ => (Verdict::NotComparable("no cycle counts".into()), None),
            };
            // A doubt that is not the row's own is the doubt of the figure its ratio divides
            // by: the row says whose, and its own clean figure is not blamed.
            let own_doubt = [&fa, &fb]
                .iter()
                .any(|f| f.as_ref().is_some_and(|f| f.doubt.is_some()));
            let (verdict, doubtful_divisor) = match (verdict, &divisor) {
                (Verdict::Doubtful(side, why), Some(d)) if !own_doubt => {
                    let of_side = match side {
                        Side::A => &d.a,
                        Side::B => &d.b,
                    };
                    let why = of_side.doubt.clone().unwrap_or(why);
                    (
                        Verdict::Doubtful(side, divisor_doubt(&d.label, k.1, &why)),
                        Some(d.label.clone()),
                    )
                }
                (v, _) => (v, None),
            };
            Comparison {
                label: k.0.clone(),
                input_bytes: k.1,
                a: fa.as_ref().map(|f| f.mean_cycles),
                b: fb.as_ref().map(|f| f.mean_cycles),
                ci_a: fa.as_ref().and_then(|f| f.ci95_half_width),
                ci_b: fb.as_ref().and_then(|f| f.ci95_half_width),
                weighed,
                verdict,
                counters: [fa.as_ref(), fb.as_ref()].map(|f| f.map(Figure::counter)),
                doubtful_divisor,
            }
        })
        .collect();
    // The bundled helpers are the same program in both runs: how far their judged ratios
    // still stray beyond the model is noise between these two runs, and weighs on every row.
    // A doubtful helper row counts here too: its figure gets no verdict, but how far it
    // strayed is what the host did between the runs. A row judged on mean cycles is exposed to
    // the whole run's offset, one judged on the ratios only to what the ratios missed.
    let helper_keys: Vec<Key> = rows
        .iter()
        .filter(|r| is_helper(&ma, &mb, r))
        .map(|r| (r.label.clone(), r.input_bytes))
        .collect();
    let extra = |on_ratio: bool| {
        let probes: Vec<Weighed> = helper_keys
            .iter()
            .filter_map(|k| probe(&ma, &mb, k, on_ratio))
            .collect();
        noise::extra_variance(&probes)
    };
    let (on_means, on_ratios) = (extra(false), extra(true));
    let robust_probes: Vec<Weighed> = helper_keys
        .iter()
        .filter_map(|k| {
            judge::on_robust(
                &Figure::of_record(ma.get(k)?)?,
                &Figure::of_record(mb.get(k)?)?,
            )
        })
        .filter_map(|(_, w)| w.map(|(w, _)| w))
        .collect();
    let on_robust = noise::extra_variance(&robust_probes);
    for r in &mut rows {
        if let Some((w, on)) = r.weighed {
            // An exact count has no noise between runs to widen it by.
            if on == JudgedOn::ExactCount {
                continue;
            }
            let more = match on {
                JudgedOn::MeanCycles => on_means,
                JudgedOn::RobustMean => on_robust,
                _ => on_ratios,
            };
            let w = w.widened(more);
            r.verdict = w.verdict();
            r.weighed = Some((w, on));
        }
    }
    rows
}

#[cfg(test)]
mod tests;
