//! The candidate page's extra section for a run that holds a length sweep (`sweep.json`): the
//! cost model of each of the candidate's instances, every coefficient with its 95 % interval.
//! The published pages have no such section and a dataset without a sweep gets none, so the
//! harness's layout is untouched. Never reads files; numbers go through `format`.

use crate::format::with_interval;
use crate::sweep::{Interval, SweepFile};

/// The section's lines for `candidate`, or None when the sweep fitted none of its instances.
pub(crate) fn render(sweep: &SweepFile, candidate: &str) -> Option<Vec<String>> {
    let iv = |i: &Interval| with_interval(i.value, i.low, i.high);
    let rows: Vec<String> = sweep
        .instances
        .iter()
        .filter(|s| s.candidate == candidate)
        .filter_map(|s| {
            let m = s.model.as_ref()?;
            Some(format!(
                "| {} | {} B | {} B | {} | {} | {} | {} | {} |",
                s.label,
                m.block_bytes,
                m.padding_bytes,
                iv(&m.fixed_cycles),
                iv(&m.cycles_per_block),
                iv(&m.cycles_per_byte),
                m.points_fitted,
                m.outliers.len()
            ))
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    let what = sweep
        .instances
        .iter()
        .find(|s| s.candidate == candidate)
        .map_or("", |s| s.statistic.describe());
    let mut l = vec![
        "## 8. Cost model from a length sweep (cyclescope)".to_string(),
        String::new(),
        format!(
            "cyclescope measured every length of its sweep and fitted T(n) = a + b·⌈(n + p)/B⌉ \
             to the {what} of each, with the block size B and the padding threshold p chosen by \
             the data. Each figure carries its 95 % confidence interval; the points, the fit and \
             the outliers left out of it are in `sweep.json`."
        ),
        String::new(),
        "| Instance | Block | Padding | Fixed cost (cycles) | Cycles per block | Cycles/byte, long messages | Lengths fitted | Outliers |".to_string(),
        "|---|---|---|---|---|---|---|---|".to_string(),
    ];
    l.extend(rows);
    l.push(String::new());
    Some(l)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::{InstanceSweep, PointStatistic, SweepLengths, SweepPoint, fit};

    fn sweep(candidate: &str) -> SweepFile {
        let points: Vec<SweepPoint> = (1..=40u64)
            .map(|k| 8 * k)
            .chain(25..32)
            .map(|n| SweepPoint {
                input_bytes: n,
                cycles: (2000 + 1000 * (n + 5).div_ceil(32)) as f64,
            })
            .collect();
        SweepFile {
            lengths: SweepLengths::default(),
            adaptive_precision: Some(0.01),
            instances: vec![InstanceSweep {
                candidate: candidate.into(),
                label: "blocks32-256".into(),
                statistic: PointStatistic::PerCallLow,
                counter: "tsc".into(),
                model: Some(fit::fit(&points).unwrap()),
                points,
                unfitted: None,
            }],
        }
    }

    #[test]
    fn a_fitted_instance_gets_a_row_and_others_no_section() {
        let lines = render(&sweep("blocks32"), "blocks32").unwrap();
        assert!(lines[0].starts_with("## 8. "));
        let row = lines
            .iter()
            .find(|l| l.starts_with("| blocks32-256 "))
            .unwrap();
        assert!(row.contains("| 32 B | 5 B |"), "{row}");
        assert!(lines[2].contains("per-call 1st percentile"));
        assert_eq!(render(&sweep("blocks32"), "other"), None);
    }
}
