//! Comparing two runs job by job (the evaluator's "did my change help?"): mean cycles of each,
//! their ratio, and a verdict that counts a difference only when it exceeds both runs' 95 %
//! confidence intervals of the mean (from the trial means); a job without an interval (one
//! trial) is not comparable, never faster, and a job whose record the record check rejects
//! (the check `validate`, `report` and `merge` apply) gets no verdict at all but `invalid`,
//! naming the record and its finding. Also the regression gate of `--fail-above` and the rows
//! in every export format. Pure once the runs are read (`RunRecords::read`): it gets the
//! records (or, for the workbench's Δ, the finished jobs' summaries through
//! `Figure::of_summary`).

use std::collections::BTreeMap;
use std::path::Path;

use crate::format;
use crate::measure::stats::trial_spread;
use crate::record::TimingRecord;
use crate::record::check::CheckedRecord;

/// How B compares with A for one job.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Faster,
    Slower,
    WithinNoise,
    OnlyInA,
    OnlyInB,
    NotComparable(String),
    /// The record of this job in one run breaks a rule of the record check: the record and
    /// its first finding.
    Invalid(Side, String),
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
            Verdict::Invalid(..) => "invalid",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verdict::Faster => f.write_str("faster (beyond both 95 % CIs)"),
            Verdict::Slower => f.write_str("slower (beyond both 95 % CIs)"),
            Verdict::WithinNoise => f.write_str("within noise"),
            Verdict::OnlyInA => f.write_str("only in A"),
            Verdict::OnlyInB => f.write_str("only in B"),
            Verdict::NotComparable(why) => write!(f, "not comparable: {why}"),
            Verdict::Invalid(side, finding) => write!(f, "invalid ({side}): {finding}"),
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
    pub(crate) verdict: Verdict,
}

impl Comparison {
    /// How far B's interval lies above A's, relative to A's mean: (B − A − both half-widths)
    /// / A, for a job that is slower beyond both intervals; None otherwise.
    pub fn excess_slowdown(&self) -> Option<f64> {
        if self.verdict != Verdict::Slower {
            return None;
        }
        let (a, b) = (self.a?, self.b?);
        Some((b - a - self.ci_a? - self.ci_b?) / a)
    }

    /// The message length of the job.
    pub fn input_bytes(&self) -> u64 {
        self.input_bytes
    }

    /// False when the two figures cannot be weighed (other counter, no interval, no cycles).
    pub fn is_comparable(&self) -> bool {
        !matches!(self.verdict, Verdict::NotComparable(_))
    }

    /// True when a record of this job breaks a rule of the record check (no verdict then).
    pub fn is_invalid(&self) -> bool {
        matches!(self.verdict, Verdict::Invalid(..))
    }

    /// Whether B is slower than A beyond both intervals by more than `margin` of A's mean
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
/// than two trials) and the counter that counted it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figure {
    pub mean_cycles: f64,
    pub ci95_half_width: Option<f64>,
    pub source: Option<crate::counter::CycleSource>,
}

impl Figure {
    fn of_record(r: &TimingRecord) -> Option<Self> {
        Some(Self {
            mean_cycles: r.mean_cycles?,
            ci95_half_width: trial_spread(&r.trials).map(|s| s.ci95_half_width_cycles),
            source: r.cyclescope.as_ref().and_then(|x| x.cycle_source),
        })
    }

    /// A finished job's figure as the frontends hold it (the workbench's results).
    pub fn of_summary(s: &crate::vocabulary::JobSummary) -> Option<Self> {
        let mean = s.mean_cycles?;
        Some(Self {
            mean_cycles: mean,
            ci95_half_width: s.ci95_relative.map(|r| r * mean),
            source: s.cycle_source,
        })
    }
}

/// B against A: a difference counts only beyond both 95 % confidence intervals, only between
/// figures of the same counter, and never without an interval on both sides.
pub fn judge(a: &Figure, b: &Figure) -> Verdict {
    if a.source != b.source {
        return Verdict::NotComparable("different cycle counters".into());
    }
    let Some((ha, hb)) = a.ci95_half_width.zip(b.ci95_half_width) else {
        return Verdict::NotComparable("no confidence interval (fewer than 2 trials)".into());
    };
    if (b.mean_cycles - a.mean_cycles).abs() <= ha + hb {
        Verdict::WithinNoise
    } else if b.mean_cycles < a.mean_cycles {
        Verdict::Faster
    } else {
        Verdict::Slower
    }
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
                    verdict: Verdict::OnlyInA,
                },
            );
            i
        }
    };
    let row = &mut rows[at];
    match side {
        Side::A => (row.a, row.ci_a) = (None, None),
        Side::B => (row.b, row.ci_b) = (None, None),
    }
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
    keys.into_iter()
        .map(|k| {
            let (ra, rb) = (ma.get(k), mb.get(k));
            let (fa, fb) = (
                ra.and_then(|r| Figure::of_record(r)),
                rb.and_then(|r| Figure::of_record(r)),
            );
            let verdict = match (ra, rb, &fa, &fb) {
                (Some(_), None, ..) => Verdict::OnlyInA,
                (None, Some(_), ..) => Verdict::OnlyInB,
                (Some(_), Some(_), Some(fa), Some(fb)) => judge(fa, fb),
                _ => Verdict::NotComparable("no cycle counts".into()),
            };
            Comparison {
                label: k.0.clone(),
                input_bytes: k.1,
                a: fa.map(|f| f.mean_cycles),
                b: fb.map(|f| f.mean_cycles),
                ci_a: fa.and_then(|f| f.ci95_half_width),
                ci_b: fb.and_then(|f| f.ci95_half_width),
                verdict,
            }
        })
        .collect()
}

/// The columns of `rows_csv` and `rows_json`.
const COLUMNS: [&str; 8] = [
    "instance",
    "message_bytes",
    "a_mean_cycles",
    "a_ci95_cycles",
    "b_mean_cycles",
    "b_ci95_cycles",
    "b_over_a",
    "verdict",
];

fn raw_cells(r: &Comparison) -> Vec<String> {
    use super::export::number;
    vec![
        r.label.clone(),
        r.input_bytes.to_string(),
        number(r.a),
        number(r.ci_a),
        number(r.b),
        number(r.ci_b),
        number(crate::baseline::ratio(r.b, r.a)),
        r.verdict.word().to_string(),
    ]
}

/// The comparison as CSV, numbers unformatted.
pub fn rows_csv(rows: &[Comparison]) -> String {
    let cells: Vec<Vec<String>> = rows.iter().map(raw_cells).collect();
    super::export::csv(&COLUMNS, &cells)
}

/// The comparison as JSON objects, one per job (numbers as numbers, the reason of a
/// not-comparable verdict in `why`).
pub fn rows_json(rows: &[Comparison]) -> serde_json::Value {
    let one = |r: &Comparison| {
        serde_json::json!({
            "instance": r.label,
            "message_bytes": r.input_bytes,
            "a_mean_cycles": r.a,
            "a_ci95_cycles": r.ci_a,
            "b_mean_cycles": r.b,
            "b_ci95_cycles": r.ci_b,
            "b_over_a": crate::baseline::ratio(r.b, r.a),
            "verdict": r.verdict.word(),
            "why": match &r.verdict {
                Verdict::NotComparable(w) => Some(w.clone()),
                Verdict::Invalid(side, finding) => Some(format!("{side}: {finding}")),
                _ => None,
            },
            "excess_slowdown": r.excess_slowdown(),
        })
    };
    serde_json::Value::Array(rows.iter().map(one).collect())
}

/// The comparison as a Markdown table.
pub fn table(rows: &[Comparison]) -> String {
    let mut out = String::from(
        "| instance | message | A mean cycles | B mean cycles | B / A | verdict |\n|---|---|---|---|---|---|\n",
    );
    for r in rows {
        out += &format!(
            "| {} | {} B | {} | {} | {} | {} |\n",
            crate::sanitize::markdown_code(&r.label),
            r.input_bytes,
            format::int(r.a),
            format::int(r.b),
            format::ratio(r.b, r.a),
            // An invalid record's finding quotes what the file holds.
            crate::sanitize::markdown(&r.verdict.to_string())
        );
    }
    out
}

#[cfg(test)]
mod tests;
