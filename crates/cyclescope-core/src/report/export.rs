//! Tables in the two plain formats every export shares: Markdown (header, rule, rows, as the
//! pages write them) and CSV (RFC 4180 through the `csv` crate), so `run`, `compare` and
//! `report --csv` cannot quote differently. Also the CSV of every record of a dataset. Never
//! measures; writes only into the `String` it returns.

use crate::record::TimingRecord;

/// A Markdown table: header, `|---|` rule, one line per row; cells are written as given.
pub fn markdown(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = format!(
        "| {} |\n|{}\n",
        header.join(" | "),
        "---|".repeat(header.len())
    );
    for r in rows {
        out += &format!("| {} |\n", r.join(" | "));
    }
    out
}

/// `table` (from [`markdown`]) with one more column at its right: `header`, then `cells` in
/// the order of its rows.
pub fn with_column(table: &str, header: &str, cells: &[String]) -> String {
    let mut out = String::new();
    let mut rows = cells.iter();
    for (i, line) in table.lines().enumerate() {
        let extra = match i {
            0 => format!(" {header} |"),
            1 => "---|".to_string(),
            _ => format!(" {} |", rows.next().map_or("", String::as_str)),
        };
        out += &format!("{line}{extra}\n");
    }
    out
}

/// A CSV table, header first; fields are quoted where RFC 4180 needs it.
pub fn csv(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    // Writing into a Vec cannot fail, and every row has the header's length by construction;
    // a short row would still be written (flexible), never dropped.
    let _ = w.write_record(header);
    for r in rows {
        let _ = w.write_record(r);
    }
    let bytes = w.into_inner().unwrap_or_default();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A number as a CSV cell: empty when absent, else Rust's shortest round-trip form.
pub fn number(x: Option<f64>) -> String {
    x.map_or_else(String::new, |v| format!("{v}"))
}

/// The columns of the figure preemption cannot move, in every CSV that carries a job's figure.
pub const ROBUST_COLUMNS: [&str; 4] = [
    "robust_mean_cycles",
    "robust_ci95_low",
    "robust_ci95_high",
    "robust_statistic",
];

/// The [`ROBUST_COLUMNS`] cells of a job (empty without a robust figure).
pub fn robust_cells(r: Option<&crate::measure::robust::Robust>) -> [String; 4] {
    [
        number(r.map(|x| x.mean_cycles)),
        number(r.and_then(|x| x.ci95_low)),
        number(r.and_then(|x| x.ci95_high)),
        r.map_or_else(String::new, |x| x.statistic.clone()),
    ]
}

/// The columns of `records_csv` (then [`ROBUST_COLUMNS`]).
pub const RECORD_COLUMNS: [&str; 18] = [
    "candidate",
    "instance",
    "message_bytes",
    "status",
    "kat",
    "mean_cycles",
    "cycles_per_byte",
    "mean_seconds",
    "mb_per_second",
    "measurements",
    "trials",
    "iterations_per_trial",
    "ci95_relative",
    "cycle_source",
    "core_type",
    "x_pseudoxof",
    "x_pseudoxof_doubtful",
    "reference_job",
];

/// Every record of a dataset as CSV, one line per record in the order given, with its
/// "× pseudoXOF" against `baseline`'s records among the same set.
pub fn records_csv(records: &[TimingRecord], baseline: &crate::baseline::Baseline) -> String {
    let summaries: Vec<_> = records.iter().map(|r| (r.job_key(), r.summary())).collect();
    let means =
        crate::baseline::BaselineMeans::from_jobs(baseline, summaries.iter().map(|(k, s)| (k, s)));
    let rows: Vec<Vec<String>> = records
        .iter()
        .zip(&summaries)
        .map(|(r, (k, s))| {
            let add = r.cyclescope.as_ref();
            let ratio = r.digest_bits().and_then(|bits| means.ratio_of(bits, k, s));
            vec![
                r.candidate.clone(),
                r.label.clone(),
                r.input_bytes.to_string(),
                r.status.as_str().to_string(),
                r.kat.to_string(),
                number(r.mean_cycles),
                number(r.mean_cycles.map(|c| c / r.input_bytes.max(1) as f64)),
                number(s.mean_seconds.into()),
                number(s.throughput_mb_per_second.into()),
                s.measurements.to_string(),
                s.trials.to_string(),
                s.iterations_per_trial.to_string(),
                number(s.ci95_relative),
                add.map_or("", |a| a.cycle_source_name()).to_string(),
                crate::report::core_type(&r.environment)
                    .map(|t| crate::sanitize::log_field(t).into_owned())
                    .unwrap_or_default(),
                number(ratio.map(|r| r.value)),
                ratio.is_some_and(|r| r.doubtful).to_string(),
                add.is_some_and(|a| a.reference_job).to_string(),
            ]
            .into_iter()
            .chain(robust_cells(s.robust.as_ref()))
            .collect()
        })
        .collect();
    let header: Vec<&str> = RECORD_COLUMNS
        .iter()
        .chain(&ROBUST_COLUMNS)
        .copied()
        .collect();
    csv(&header, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_and_csv_hold_the_same_cells() {
        let rows = vec![
            vec!["`a`".to_string(), "1, 2".into()],
            vec!["say \"b\"".into(), String::new()],
        ];
        assert_eq!(
            markdown(&["x", "y"], &rows),
            "| x | y |\n|---|---|\n| `a` | 1, 2 |\n| say \"b\" |  |\n"
        );
        let text = csv(&["x", "y"], &rows);
        assert_eq!(text, "x,y\n`a`,\"1, 2\"\n\"say \"\"b\"\"\",\n");
        // Round trip: the csv reader gets the cells back.
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let back: Vec<Vec<String>> = r
            .records()
            .map(|x| x.unwrap().iter().map(str::to_string).collect())
            .collect();
        assert_eq!(back, rows);
    }
}
