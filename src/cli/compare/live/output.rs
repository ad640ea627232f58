//! What `compare --live` prints when it is done: the comparison as a Markdown table with how
//! it was measured, or as one JSON document.

use crate::campaign::{InterleaveOutcome, LiveComparison, RunRequest};

/// The comparison as a Markdown table, with what measured it.
pub(super) fn table(req: &RunRequest, pairs: u32, rows: &[LiveComparison]) -> String {
    let [a, b] = [&req.instances[0], &req.instances[1]];
    let mut out = format!(
        "A = {}/{} ({})\nB = {}/{} ({})\ninterleaved on CPU {}: {pairs} pairs per length, A B / B A alternately, \
         each trial a fresh worker process\n\n",
        a.candidate,
        a.label,
        crate::sanitize::terminal_path(&a.library),
        b.candidate,
        b.label,
        crate::sanitize::terminal_path(&b.library),
        req.cpu()
    );
    let result = crate::campaign::ab_result::AbResult::new(req, pairs, rows.to_vec());
    let table = result.markdown();
    // The table's rows, then the method, then why a length has no interval.
    let (rows_part, problems): (Vec<&str>, Vec<&str>) =
        table.lines().partition(|l| !l.starts_with('⚠'));
    out += &(rows_part.join("\n") + "\n");
    out += "\nB / A: geometric mean of the pairs' ratios of mean cycles per call; 95 % CI: Student t on their logarithms.\n";
    if let Some(basis) = rows.iter().find_map(|c| c.ratio.map(|r| r.basis))
        && basis == crate::measure::paired::RatioBasis::Seconds
    {
        out += "The workers counted no cycles: the ratios are of seconds per call.\n";
    }
    for p in problems {
        out += &format!("{p}\n");
    }
    out
}

pub(super) fn json_of(
    req: &RunRequest,
    pairs: u32,
    r: &InterleaveOutcome,
    measured_by: Option<&str>,
) -> serde_json::Value {
    let rows: Vec<serde_json::Value> = r
        .comparisons
        .iter()
        .map(|c| {
            serde_json::json!({
                "input_bytes": c.input_bytes,
                "a_mean_cycles": c.a_mean_cycles,
                "b_mean_cycles": c.b_mean_cycles,
                "ratio": c.ratio,
                "verdict": c.ratio.map(|r| r.verdict()),
                "problem": c.problem,
            })
        })
        .collect();
    serde_json::json!({
        "a": {"candidate": req.instances[0].candidate, "label": req.instances[0].label},
        "b": {"candidate": req.instances[1].candidate, "label": req.instances[1].label},
        "cpu": req.cpu(),
        "pairs_requested": pairs,
        "statistic": "geometric mean of per-pair B/A, Student t 95 % CI on the log ratios",
        "run_dir": crate::catalog::display_path(&req.run_dir),
        "measured_by": measured_by,
        "cancelled": r.run.cancelled,
        "lengths": rows,
    })
}
