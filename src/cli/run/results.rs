//! The finished jobs of a headless run as it prints them: the §4 table with the `× pseudoXOF`
//! column (Markdown, the default), `--json` rows (with `x_pseudoxof` and `reference_job`) and
//! `--csv`. The ratio comes from `baseline`, the one implementation the pages use too.

use std::path::Path;

use crate::baseline::{self, Baseline, BaselineMeans};
use crate::campaign::RunRequest;
use crate::vocabulary::{JobKey, JobSummary};

/// One finished job, as `--json` prints it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    #[serde(flatten)]
    pub job: JobKey,
    #[serde(flatten)]
    pub summary: JobSummary,
    /// What measured it (counter, clock, CPU), from the record.
    pub measured_by: String,
    /// The core type (PMU) of the CPU it was counted on, from the record (`host::pmu`).
    pub core_type: Option<String>,
    /// Output bits of the instance (the width its baseline has).
    pub digest_bits: u32,
    /// Mean cycles over the baseline's pseudoXOF of the same width, length and counter.
    pub x_pseudoxof: Option<f64>,
    /// The row's figure or its baseline's is doubtful, so the ratio is too.
    pub x_pseudoxof_doubtful: bool,
    /// The candidate `x_pseudoxof` divides by.
    pub baseline: String,
    /// True when the run added this job only to have the baseline.
    pub reference_job: bool,
}

/// What measured a finished job (counter, clock, CPU), from its record in `run_dir`.
pub fn measured_by(run_dir: &Path, s: &JobSummary, record: &Path) -> String {
    measured_by_and_core_type(run_dir, s, record).0
}

/// [`measured_by`] and the record's core type.
fn measured_by_and_core_type(
    run_dir: &Path,
    s: &JobSummary,
    record: &Path,
) -> (String, Option<String>) {
    let source = s.cycle_source.map_or("", crate::counter::CycleSource::name);
    std::fs::read(run_dir.join(record))
        .ok()
        .and_then(|b| serde_json::from_slice::<crate::record::TimingRecord>(&b).ok())
        .map(|r| {
            let reference = r.cyclescope.as_ref().is_some_and(|a| a.reference_cycles);
            (
                crate::report::measured_by(&r.environment, source, reference),
                crate::report::core_type(&r.environment)
                    .map(|t| crate::sanitize::log_field(t).into_owned()),
            )
        })
        .unwrap_or_else(|| (format!("cycles: {source}"), None))
}

impl Row {
    pub(super) fn from(req: &RunRequest, job: &JobKey, s: &JobSummary, record: &Path) -> Self {
        let (measured_by, core_type) = measured_by_and_core_type(&req.run_dir, s, record);
        let digest_bits = req
            .instances
            .iter()
            .find(|i| i.candidate == job.candidate && i.label == job.label)
            .map_or(0, |i| i.digest_bits);
        Row {
            job: job.clone(),
            summary: s.clone(),
            measured_by,
            core_type,
            digest_bits,
            x_pseudoxof: None,
            x_pseudoxof_doubtful: false,
            baseline: req.baseline.candidate.clone(),
            reference_job: req.is_reference_job(&job.candidate, &job.label),
        }
    }
}

impl Row {
    /// The row's ratio as the tables print it.
    fn ratio(&self) -> Option<baseline::XofRatio> {
        self.x_pseudoxof.map(|value| baseline::XofRatio {
            value,
            doubtful: self.x_pseudoxof_doubtful,
        })
    }
}

/// Fills `x_pseudoxof` of every row from the baseline rows among them.
pub(super) fn with_ratios(rows: &mut [Row], baseline: &Baseline) {
    let means = BaselineMeans::from_jobs(baseline, rows.iter().map(|r| (&r.job, &r.summary)));
    for r in rows {
        let ratio = means.ratio_of(r.digest_bits, &r.job, &r.summary);
        r.x_pseudoxof = ratio.map(|x| x.value);
        r.x_pseudoxof_doubtful = ratio.is_some_and(|x| x.doubtful);
    }
}

fn sorted(rows: &[Row]) -> Vec<Row> {
    let mut rows = rows.to_vec();
    rows.sort_by(|a, b| (&a.job.label, a.job.input_bytes).cmp(&(&b.job.label, b.job.input_bytes)));
    rows
}

/// Rows for the jobs of the plan that `run_dir` holds complete records of and this process
/// did not measure (a resumed run's earlier jobs), so the table is the whole run's.
pub(super) fn add_from_folder(req: &RunRequest, rows: &mut Vec<Row>) {
    for (path, rec) in crate::record::run_dir::list_records(&req.run_dir) {
        let key = rec.job_key();
        let summary = rec.summary();
        let planned = req
            .instances
            .iter()
            .any(|i| i.candidate == key.candidate && i.label == key.label)
            && req.lengths.contains(&key.input_bytes);
        if planned && summary.status.is_complete() && !rows.iter().any(|r| r.job == key) {
            rows.push(Row::from(req, &key, &summary, &path));
        }
    }
}

/// `incomplete 3/4 — not measured: `X-512` 1024 B` when jobs of the plan have no finished
/// row (cancelled, failed or not measured for their KAT); None when the run is whole.
pub(super) fn missing_line(req: &RunRequest, rows: &[Row]) -> Option<String> {
    let mut missing = Vec::new();
    for i in &req.instances {
        for &len in &req.lengths {
            let done = rows.iter().any(|r| {
                r.job.candidate == i.candidate && r.job.label == i.label && r.job.input_bytes == len
            });
            if !done {
                missing.push(format!(
                    "`{}` {} B",
                    crate::sanitize::terminal(&i.label),
                    len
                ));
            }
        }
    }
    let total = req.instances.len() * req.lengths.len();
    (!missing.is_empty()).then(|| {
        format!(
            "incomplete {}/{total} — not measured: {}",
            total - missing.len(),
            missing.join(", ")
        )
    })
}

/// The report's §4 table of the finished jobs plus `× pseudoXOF`, by instance and length, with
/// the doubts explained, the baseline named and the counter named; with `run_dir`, also how
/// each instance was built and how the run was made (the lines the workbench prints too).
pub fn results_table(rows: &[Row], baseline: &Baseline, run_dir: Option<&Path>) -> String {
    let rows = sorted(rows);
    if rows.is_empty() {
        return String::new();
    }
    // A label two candidates share (the bundled `iccs` and the C `iccs-c` baselines) is named
    // with its candidate, as the catalog selects it.
    let shared = |r: &Row| {
        rows.iter()
            .any(|o| o.job.label == r.job.label && o.job.candidate != r.job.candidate)
    };
    let counter = crate::report::counter_of(rows.iter().map(|r| &r.summary));
    let mut out = crate::report::perf_table_with_ratio(
        counter,
        rows.iter().map(|r| {
            let mut cells = crate::report::perf_cells(&r.job, Some(&r.summary), None);
            if shared(r) {
                cells[0] = format!("`{}/{}`", r.job.candidate, r.job.label);
            }
            crate::report::mark_kat(&mut cells, Some(&r.summary));
            (cells, r.reference_job, r.ratio())
        }),
    );
    if rows.iter().any(|r| r.summary.robust.is_some()) {
        let cells: Vec<String> = rows
            .iter()
            .map(|r| {
                r.summary
                    .robust
                    .as_ref()
                    .map_or_else(|| "–".into(), |x| x.text())
            })
            .collect();
        out = crate::report::export::with_column(&out, ROBUST_HEADER, &cells);
    }
    // Why a figure carries ⚠ (the core's doubt rule), which were timed without a passing KAT,
    // and the spread of the buffer layouts, one line each.
    let mut notes = crate::report::doubt_notes(rows.iter().map(|r| (&r.job, &r.summary)));
    notes.extend(crate::report::kat_notes(
        rows.iter().map(|r| (&r.job, &r.summary)),
    ));
    notes.extend(crate::report::layout_notes(
        rows.iter().map(|r| (&r.job, &r.summary)),
    ));
    if !notes.is_empty() {
        out.push('\n');
        for note in notes {
            out += &format!("{note}\n");
        }
    }
    // An instance timed without a passing KAT (consent given), once each: which status, and
    // for NONCONFORM which check.
    let mut unverified: Vec<String> = Vec::new();
    for r in &rows {
        for d in r.summary.doubts.iter().filter(|d| !d.of_figure()) {
            let line = format!("⚠ `{}`: {}", r.job.label, d.text());
            if matches!(d, crate::measure::doubt::Doubt::KatNotPassed { .. })
                && !unverified.contains(&line)
            {
                unverified.push(line);
            }
        }
    }
    if !unverified.is_empty() {
        out.push('\n');
        for line in unverified {
            out += &format!("{line}\n");
        }
    }
    out += &format!("\n{}\n", baseline::divides_by(baseline, counter));
    if rows.iter().any(|r| r.summary.robust.is_some()) {
        out += &format!("{ROBUST_NOTE}\n");
    }
    if rows.iter().any(|r| r.x_pseudoxof_doubtful) {
        out += &format!("{}\n", baseline::DOUBTFUL_RATIO_NOTE);
    }
    if rows.iter().any(|r| r.reference_job) {
        out += "(reference): a baseline job the run added for the ratio.\n";
    }
    let readback = run_dir.map(|d| {
        use crate::report::readback;
        (readback::built_with_line(d), readback::run_notes(d))
    });
    if let Some((Some(built), _)) = &readback {
        out += &format!("\n{built}\n");
    }
    out += &format!("\n{}\n", rows[0].measured_by);
    for note in readback.map(|(_, notes)| notes).unwrap_or_default() {
        out += &format!("{note}\n");
    }
    out
}

/// The column of the figure preemption cannot move, and the line that says what it is.
pub const ROBUST_HEADER: &str = "uninterrupted calls [95 % CI]";
pub const ROBUST_NOTE: &str = "uninterrupted calls: the mean per-call cost of the calls no \
     interruption touched, per trial, over trials, with its 95 % CI (`cyclescope.robust`, \
     docs/compare.md); waiting for the CPU moves the mean cycles, not this. ⚠: its own \
     interval is wider than ±10 %, or it rests on one trial.";

/// The columns of `--csv` (then `export::ROBUST_COLUMNS`).
const CSV_COLUMNS: [&str; 18] = [
    "candidate",
    "instance",
    "message_bytes",
    "reference_job",
    "mean_cycles",
    "ci95_relative",
    "cycles_per_byte",
    "mean_seconds",
    "mb_per_second",
    "measurements",
    "trials",
    "iterations_per_trial",
    "x_pseudoxof",
    "x_pseudoxof_doubtful",
    "baseline",
    "cycle_source",
    "core_type",
    "doubts",
];

/// The rows as CSV, numbers unformatted, in the table's order.
pub fn csv(rows: &[Row]) -> String {
    use crate::report::export::number;
    let cells: Vec<Vec<String>> = sorted(rows)
        .iter()
        .map(|r| {
            let s = &r.summary;
            let doubts: Vec<String> = s.doubts.iter().map(|d| d.text()).collect();
            vec![
                r.job.candidate.clone(),
                r.job.label.clone(),
                r.job.input_bytes.to_string(),
                r.reference_job.to_string(),
                number(s.mean_cycles),
                number(s.ci95_relative),
                number(s.mean_cycles.map(|c| c / r.job.input_bytes.max(1) as f64)),
                number(Some(s.mean_seconds)),
                number(Some(s.throughput_mb_per_second)),
                s.measurements.to_string(),
                s.trials.to_string(),
                s.iterations_per_trial.to_string(),
                number(r.x_pseudoxof),
                r.x_pseudoxof_doubtful.to_string(),
                r.baseline.clone(),
                s.cycle_source
                    .map_or("", crate::counter::CycleSource::name)
                    .to_string(),
                r.core_type.clone().unwrap_or_default(),
                doubts.join("; "),
            ]
            .into_iter()
            .chain(crate::report::export::robust_cells(s.robust.as_ref()))
            .collect()
        })
        .collect();
    let header: Vec<&str> = CSV_COLUMNS
        .iter()
        .chain(&crate::report::export::ROBUST_COLUMNS)
        .copied()
        .collect();
    crate::report::export::csv(&header, &cells)
}

#[cfg(test)]
mod tests;
