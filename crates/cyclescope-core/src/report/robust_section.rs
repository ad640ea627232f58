//! The figure preemption cannot move, on a candidate page: under §4's guide table (which stays
//! the headline, as published), one row per job that has one, beside its mean, with the line
//! that says what it is. Absent when no record carries one (a harness dataset).

use crate::vocabulary::{JobKey, JobSummary};

/// The table and its note, or None when no job has a robust figure.
pub(crate) fn table<'a>(
    rows: impl IntoIterator<Item = (&'a JobKey, &'a JobSummary)>,
) -> Option<String> {
    let cells: Vec<Vec<String>> = rows
        .into_iter()
        .filter_map(|(k, s)| {
            let r = s.robust.as_ref()?;
            let mark = if s.doubts.iter().any(|d| d.of_figure()) {
                " ⚠"
            } else {
                ""
            };
            Some(vec![
                crate::sanitize::markdown_code(&k.label),
                crate::format::size(k.input_bytes),
                format!("{}{mark}", crate::format::int(s.mean_cycles)),
                r.text(),
                format!(
                    "{:.1} %",
                    100.0 * r.excluded as f64 / (r.calls + r.excluded).max(1) as f64
                ),
            ])
        })
        .collect();
    if cells.is_empty() {
        return None;
    }
    let mut out = super::export::markdown(&HEADER, &cells);
    out += &format!("\n{NOTE}\n");
    Some(out)
}

const HEADER: [&str; 5] = [
    "instance",
    "message",
    "mean cycles",
    "uninterrupted calls [95 % CI]",
    "calls left out",
];

const NOTE: &str = "Uninterrupted calls: each trial's per-call samples, less those an interruption \
     touched (more than ten lower-half spreads above the median), averaged per trial and over \
     trials, with a 95 % interval over trials. Waiting for the CPU moves the mean cycles, not \
     this figure; comparisons judge on it when a mean is doubtful (⚠).";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_with_a_robust_figure_get_a_row_and_the_rest_none() {
        let key = |bytes| JobKey {
            candidate: "c".into(),
            label: "X-256".into(),
            input_bytes: bytes,
        };
        let plain = crate::vocabulary::JobSummary {
            mean_cycles: Some(3791.0),
            doubts: vec![crate::measure::doubt::Doubt::WideInterval { relative: 0.2 }],
            ..serde_json::from_value(serde_json::json!({
                "status": "complete", "kat": "PASS", "mean_cycles": null, "mean_seconds": 0.0,
                "throughput_mb_per_second": 0.0, "measurements": 0, "trials": 5,
                "iterations_per_trial": 0, "cycle_source": "tsc", "per_call": null,
                "disturbed_retries": 0
            }))
            .unwrap()
        };
        assert_eq!(table([(&key(32), &plain)]), None);
        let body = |m| crate::measure::robust::TrialBody {
            mean_ticks: m,
            calls: 990,
            excluded: 10,
        };
        let with = JobSummary {
            robust: crate::measure::robust::of_trials(
                &[body(1630.0), body(1640.0), body(1645.0)],
                1.0,
            ),
            ..plain.clone()
        };
        let t = table([(&key(32), &with), (&key(64), &plain)]).unwrap();
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(
            lines[0],
            "| instance | message | mean cycles | uninterrupted calls [95 % CI] | calls left out |"
        );
        assert_eq!(
            lines[2],
            "| `X-256` | 32 B | 3791 ⚠ | 1638 [1619, 1657] | 1.0 % |"
        );
        assert_eq!(lines.len(), 5, "{t}");
    }
}
