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

use crate::measure::stats::trial_spread;
use crate::record::TimingRecord;
use crate::record::check::CheckedRecord;

mod drift;
mod noise;
mod render;

use drift::{baselines, is_helper, probe};

use noise::Spread;
pub use noise::Weighed;
pub use render::{rows_csv, rows_json, table};

/// How B compares with A for one job.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Faster,
    Slower,
    WithinNoise,
    OnlyInA,
    OnlyInB,
    NotComparable(String),
    /// A figure of this job is marked ⚠ (on the side named): no faster/slower verdict.
    Doubtful(Side, String),
    /// The record of this job in one run breaks a rule of the record check: the record and
    /// its first finding.
    Invalid(Side, String),
    /// Both runs counted instructions exactly (`valgrind:callgrind:Ir`): B's count against A's,
    /// with no interval because there is no noise to weigh.
    Exact(std::cmp::Ordering),
}

/// Which of the two runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Side::A => "A",
            Side::B => "B",
        })
    }
}

impl Verdict {
    /// The verdict as exports write it.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::WithinNoise => "within_noise",
            Verdict::OnlyInA => "only_in_a",
            Verdict::OnlyInB => "only_in_b",
            Verdict::NotComparable(_) => "not_comparable",
            Verdict::Doubtful(..) => "doubtful",
            Verdict::Invalid(..) => "invalid",
            Verdict::Exact(std::cmp::Ordering::Less) => "fewer_instructions",
            Verdict::Exact(std::cmp::Ordering::Equal) => "same_instructions",
            Verdict::Exact(std::cmp::Ordering::Greater) => "more_instructions",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verdict::Faster => f.write_str("faster (beyond run-to-run noise)"),
            Verdict::Slower => f.write_str("slower (beyond run-to-run noise)"),
            Verdict::WithinNoise => f.write_str("within noise"),
            Verdict::OnlyInA => f.write_str("only in A"),
            Verdict::OnlyInB => f.write_str("only in B"),
            Verdict::NotComparable(why) => write!(f, "not comparable: {why}"),
            Verdict::Doubtful(side, why) => write!(f, "doubtful (⚠ {side}: {why})"),
            Verdict::Invalid(side, finding) => write!(f, "invalid ({side}): {finding}"),
            Verdict::Exact(o) => write!(
                f,
                "{} (exact count, no interval needed)",
                match o {
                    std::cmp::Ordering::Less => "fewer instructions",
                    std::cmp::Ordering::Equal => "the same instructions",
                    std::cmp::Ordering::Greater => "more instructions",
                }
            ),
        }
    }
}

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
}

impl JudgedOn {
    /// The word exports write.
    pub fn word(self) -> &'static str {
        match self {
            JudgedOn::MeanCycles => "mean_cycles",
            JudgedOn::BaselineRatio => "ratio_to_pseudoxof",
            JudgedOn::ExactCount => "exact_instructions",
            JudgedOn::BaselineRatioAcrossCounters => "ratio_to_pseudoxof_counter_free",
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
        })
    }

    /// What counted the figure: cycles unless its source says instructions (a record of
    /// before the counter was named counted cycles).
    pub fn counter(&self) -> crate::counter::Counter {
        self.source
            .map_or(crate::counter::Counter::Cycles, |s| s.counter())
    }

    fn spread(&self) -> Option<Spread> {
        Some(Spread {
            mean: self.mean_cycles,
            relative_sd: self.process_sd_relative?,
            processes: self.processes,
        })
    }
}

/// B against A, each without its run's baseline figure: see [`judge_with`].
pub fn judge(a: &Figure, b: &Figure) -> Verdict {
    judge_with(a, b, None).0
}

/// B against A: a figure marked ⚠ on either side gets no verdict but `doubtful`; a difference
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
            return (Verdict::Doubtful(side, why.clone()), None);
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

/// One run as `compare` reads it: the records the record check accepts, and those it rejects.
#[derive(Debug, Default)]
pub struct RunRecords {
    pub valid: Vec<TimingRecord>,
    pub rejected: Vec<CheckedRecord>,
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
            let refs = baselines(&ma, &mb, k);
            let (verdict, weighed) = match (ra, rb, &fa, &fb) {
                (Some(_), None, ..) => (Verdict::OnlyInA, None),
                (None, Some(_), ..) => (Verdict::OnlyInB, None),
                (Some(_), Some(_), Some(fa), Some(fb)) => {
                    judge_with(fa, fb, refs.as_ref().map(|(x, y)| (x, y)))
                }
                _ => (Verdict::NotComparable("no cycle counts".into()), None),
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
    for r in &mut rows {
        if let Some((w, on)) = r.weighed {
            // An exact count has no noise between runs to widen it by.
            if on == JudgedOn::ExactCount {
                continue;
            }
            let more = if on == JudgedOn::MeanCycles {
                on_means
            } else {
                on_ratios
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
