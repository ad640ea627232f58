//! The comparison's rows in every export format (Markdown table, CSV, JSON), numbers of the
//! shared formatting module; the verdict's reason and the judged ratio travel in each.

use super::{Comparison, JudgedOn, Verdict};
use crate::counter::Counter;
use crate::format;

/// The columns of `rows_csv` (the means are of the row's counter: `a_counter`, `b_counter`).
pub(super) const COLUMNS: [&str; 14] = [
    "instance",
    "message_bytes",
    "a_mean_cycles",
    "a_ci95_cycles",
    "b_mean_cycles",
    "b_ci95_cycles",
    "b_over_a",
    "judged_b_over_a",
    "judged_low",
    "judged_high",
    "judged_on",
    "verdict",
    "a_counter",
    "b_counter",
];

/// The counter's name of one side of the row, empty without a figure.
fn counter_name(r: &Comparison, side: usize) -> &'static str {
    r.counters[side].map_or("", Counter::name)
}

/// What the two mean columns of a table hold.
#[derive(Clone, Copy)]
enum Unit {
    /// Every figure was counted by this counter.
    One(Counter),
    /// Figures of both counters: each cell names its unit.
    Both,
    /// No row has a figure.
    NoFigure,
}

fn mean_unit(rows: &[Comparison]) -> Unit {
    let mut all = rows.iter().flat_map(|r| r.counters.iter().flatten());
    match all.next() {
        None => Unit::NoFigure,
        Some(&first) if all.all(|c| *c == first) => Unit::One(first),
        Some(_) => Unit::Both,
    }
}

fn raw_cells(r: &Comparison) -> Vec<String> {
    use crate::report::export::number;
    let judged = r.judged_ratio();
    vec![
        r.label.clone(),
        r.input_bytes.to_string(),
        number(r.a),
        number(r.ci_a),
        number(r.b),
        number(r.ci_b),
        number(crate::baseline::ratio(r.b, r.a)),
        number(judged.map(|j| j.0)),
        number(judged.map(|j| j.1)),
        number(judged.map(|j| j.2)),
        judged.map_or("", |j| j.3.word()).to_string(),
        r.verdict.word().to_string(),
        counter_name(r, 0).to_string(),
        counter_name(r, 1).to_string(),
    ]
}

/// The comparison as CSV, numbers unformatted.
pub fn rows_csv(rows: &[Comparison]) -> String {
    let cells: Vec<Vec<String>> = rows.iter().map(raw_cells).collect();
    crate::report::export::csv(&COLUMNS, &cells)
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
            "judged": r.judged_ratio().map(|(x, lo, hi, on)| serde_json::json!({
                "b_over_a": x, "low": lo, "high": hi, "on": on.word(),
            })),
            "verdict": r.verdict.word(),
            "a_counter": r.counters[0].map(Counter::name),
            "b_counter": r.counters[1].map(Counter::name),
            "why": match &r.verdict {
                Verdict::NotComparable(w) => Some(w.clone()),
                Verdict::Doubtful(side, w) => Some(format!("{side}: {w}")),
                Verdict::Invalid(side, finding) => Some(format!("{side}: {finding}")),
                _ => None,
            },
            "excess_slowdown": r.excess_slowdown(),
            "doubtful_divisor": r.doubtful_divisor,
        })
    };
    serde_json::Value::Array(rows.iter().map(one).collect())
}

/// The comparison as a Markdown table: the judged ratio with its interval under the
/// between-run noise beside the raw B / A, and what it was judged on.
pub fn table(rows: &[Comparison]) -> String {
    let unit = mean_unit(rows);
    let (head_a, head_b) = match unit {
        Unit::One(Counter::Instructions) => ("A instructions/call", "B instructions/call"),
        Unit::One(Counter::Cycles) | Unit::NoFigure => ("A mean cycles", "B mean cycles"),
        Unit::Both => ("A mean", "B mean"),
    };
    let mut out = format!(
        "| instance | message | {head_a} | {head_b} | B / A | judged B / A (95 % between runs) | verdict |\n|---|---|---|---|---|---|---|\n",
    );
    // Rows of both counters name each cell's unit.
    let cell = |x: Option<f64>, c: Option<Counter>| match (unit, c, x) {
        (Unit::Both, Some(c), Some(_)) => format!("{} {}", format::int(x), c.unit()),
        _ => format::int(x),
    };
    for r in rows {
        out += &format!(
            "| {} | {} B | {} | {} | {} | {} | {} |\n",
            crate::sanitize::markdown_code(&r.label),
            r.input_bytes,
            cell(r.a, r.counters[0]),
            cell(r.b, r.counters[1]),
            format::ratio(r.b, r.a),
            judged_cell(r),
            // An invalid record's finding quotes what the file holds.
            crate::sanitize::markdown(&r.verdict.to_string())
        );
    }
    if rows.iter().any(|r| {
        r.judged_ratio().is_some_and(|j| {
            matches!(
                j.3,
                JudgedOn::BaselineRatio | JudgedOn::BaselineRatioAcrossCounters
            )
        })
    }) {
        out += "\n× pseudoXOF: judged on each run's ratio to its own baseline pseudoXOF of the same \
                width and length, so what the host did during a whole run cancels";
        if rows.iter().any(|r| {
            r.judged_ratio()
                .is_some_and(|j| j.3 == JudgedOn::BaselineRatioAcrossCounters)
        }) {
            out += "; counter-free: the two runs were counted by different cycle counters, and \
                    only these ratios are compared across them";
        }
        out += ".\n";
    }
    if rows.iter().any(|r| {
        r.judged_ratio()
            .is_some_and(|j| j.3 == JudgedOn::RobustMean)
    }) {
        out += "\nuninterrupted calls: a side's mean was doubtful (⚠), so the row is judged on \
                each side's uninterrupted-call mean, which waiting for the CPU does not move \
                (docs/statistics.md).\n";
    }
    out
}

/// `0.97× [0.90, 1.05]`, with `× pseudoXOF` when judged on the baseline ratios; `–` unjudged;
/// a ratio left unjudged because the figure it divides by is doubtful names that instance.
fn judged_cell(r: &Comparison) -> String {
    match r.judged_ratio() {
        None => match &r.doubtful_divisor {
            Some(d) => format!(
                "⚠ × pseudoXOF: divisor {} doubtful",
                crate::sanitize::markdown_code(d)
            ),
            None => "–".into(),
        },
        Some((x, .., JudgedOn::ExactCount)) => format!("{x:.4}× exact"),
        Some((x, lo, hi, on)) => format!(
            "{:.2}× [{lo:.2}, {hi:.2}]{}",
            x,
            match on {
                JudgedOn::MeanCycles => "",
                JudgedOn::BaselineRatio => " × pseudoXOF",
                JudgedOn::BaselineRatioAcrossCounters => " × pseudoXOF, counter-free",
                JudgedOn::ExactCount => " exact",
                JudgedOn::RobustMean => " uninterrupted calls",
            }
        ),
    }
}
