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
    /// Output bits of the instance (the width its baseline has).
    pub digest_bits: u32,
    /// Mean cycles over the baseline's pseudoXOF of the same width, length and counter.
    pub x_pseudoxof: Option<f64>,
    /// The candidate `x_pseudoxof` divides by.
    pub baseline: String,
    /// True when the run added this job only to have the baseline.
    pub reference_job: bool,
}

impl Row {
    pub(super) fn from(req: &RunRequest, job: &JobKey, s: &JobSummary, record: &Path) -> Self {
        let source = s.cycle_source.map_or("", crate::counter::CycleSource::name);
        let measured_by = std::fs::read(req.run_dir.join(record))
            .ok()
            .and_then(|b| serde_json::from_slice::<crate::record::TimingRecord>(&b).ok())
            .map(|r| {
                let reference = r.cyclescope.as_ref().is_some_and(|a| a.reference_cycles);
                crate::report::measured_by(&r.environment, source, reference)
            })
            .unwrap_or_else(|| format!("cycles: {source}"));
        let digest_bits = req
            .instances
            .iter()
            .find(|i| i.candidate == job.candidate && i.label == job.label)
            .map_or(0, |i| i.digest_bits);
        Row {
            job: job.clone(),
            summary: s.clone(),
            measured_by,
            digest_bits,
            x_pseudoxof: None,
            baseline: req.baseline.candidate.clone(),
            reference_job: req.is_reference_job(&job.candidate, &job.label),
        }
    }
}

/// Fills `x_pseudoxof` of every row from the baseline rows among them.
pub(super) fn with_ratios(rows: &mut [Row], baseline: &Baseline) {
    let means = BaselineMeans::from_jobs(baseline, rows.iter().map(|r| (&r.job, &r.summary)));
    for r in rows {
        r.x_pseudoxof = means.ratio_of(r.digest_bits, &r.job, &r.summary);
    }
}

fn sorted(rows: &[Row]) -> Vec<Row> {
    let mut rows = rows.to_vec();
    rows.sort_by(|a, b| (&a.job.label, a.job.input_bytes).cmp(&(&b.job.label, b.job.input_bytes)));
    rows
}

/// The report's §4 table of the finished jobs plus `× pseudoXOF`, by instance and length, with
/// the doubts explained, the baseline named and the counter named.
pub fn results_table(rows: &[Row], baseline: &Baseline) -> String {
    let rows = sorted(rows);
    if rows.is_empty() {
        return String::new();
    }
    let mut header: Vec<&str> = crate::report::PERF_HEADER.to_vec();
    header.push(baseline::COLUMN);
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut c = crate::report::perf_cells(&r.job, Some(&r.summary), None).to_vec();
            if r.reference_job {
                c[0] += " (reference)";
            }
            c.push(baseline::cell(r.x_pseudoxof));
            c
        })
        .collect();
    let mut out = crate::report::export::markdown(&header, &cells);
    // Why a figure carries ⚠ (the core's doubt rule), one line each.
    let notes = crate::report::doubt_notes(rows.iter().map(|r| (&r.job, &r.summary)));
    if !notes.is_empty() {
        out.push('\n');
        for note in notes {
            out += &format!("{note}\n");
        }
    }
    out += &format!("\n{}\n", baseline::divides_by(baseline));
    if rows.iter().any(|r| r.reference_job) {
        out += "(reference): a baseline job the run added for the ratio.\n";
    }
    out += &format!("\n{}\n", rows[0].measured_by);
    out
}

/// The columns of `--csv`.
const CSV_COLUMNS: [&str; 16] = [
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
    "baseline",
    "cycle_source",
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
                r.baseline.clone(),
                s.cycle_source
                    .map_or("", crate::counter::CycleSource::name)
                    .to_string(),
                doubts.join("; "),
            ]
        })
        .collect();
    crate::report::export::csv(&CSV_COLUMNS, &cells)
}
