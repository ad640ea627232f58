//! Comparing two runs job by job (the evaluator's "did my change help?"): mean cycles of each,
//! their ratio, and a verdict that counts a difference only when it exceeds both runs' 95 %
//! confidence intervals of the mean (from the trial means); a job without an interval (one
//! trial) is not comparable, never faster. Also the regression gate of `--fail-above` and
//! the rows in every export format. Pure: it gets the records (or, for the workbench's Δ, the
//! finished jobs' summaries through `Figure::of_summary`).

use std::collections::BTreeMap;

use crate::format;
use crate::measure::stats::trial_spread;
use crate::record::TimingRecord;

/// How B compares with A for one job.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Faster,
    Slower,
    WithinNoise,
    OnlyInA,
    OnlyInB,
    NotComparable(String),
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

    /// Whether B is slower than A beyond both intervals by more than `margin` of A's mean
    /// (`compare --fail-above`).
    pub fn regressed(&self, margin: f64) -> bool {
        self.excess_slowdown().is_some_and(|x| x > margin)
    }
}

type Key = (String, u64);

fn by_job(records: &[TimingRecord]) -> BTreeMap<Key, &TimingRecord> {
    records
        .iter()
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

/// Compares the complete records of two runs, job by job, in label and length order.
pub fn compare(a: &[TimingRecord], b: &[TimingRecord]) -> Vec<Comparison> {
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
            "why": match &r.verdict { Verdict::NotComparable(w) => Some(w.as_str()), _ => None },
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
            r.verdict
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::stats::Trial;

    pub(super) fn rec(label: &str, bytes: u64, per_call: &[f64]) -> TimingRecord {
        let trials: Vec<Trial> = per_call
            .iter()
            .map(|&c| Trial {
                measurements: 1000,
                seconds: 0.001,
                cycles: (c * 1000.0) as u64,
            })
            .collect();
        let n = 1000 * trials.len() as u64;
        let mean = trials.iter().map(|t| t.cycles).sum::<u64>() as f64 / n as f64;
        let json = serde_json::json!({
            "schema": 2, "status": "complete", "candidate": "c", "label": label, "instance": label,
            "variant": "reference", "flags": "guide", "operation": "hash", "input_bytes": bytes,
            "plan": {"iterations_per_trial": 1000, "warmups": 3, "trials": trials.len(),
                     "separate_processes": true, "estimated_s": 0.0, "timeout_per_process_s": 1.0},
            "kat": "PASS", "kat_not_passed": false, "disturbed_retries": 0, "library": "l",
            "library_sha256": "", "kat_log": null, "kat_log_sha256": null,
            "started_utc": "", "ended_utc": "", "load_average_start": [0.0, 0.0, 0.0],
            "load_average_end": [0.0, 0.0, 0.0], "environment": {}, "processes": [],
            "trials": trials, "measurements": n, "guide_100_measurements_met": true,
            "mean_seconds": 1e-6, "median_trial_seconds": 1e-6, "min_trial_seconds": 1e-6,
            "max_trial_seconds": 1e-6, "mean_cycles": mean, "median_trial_cycles": mean,
            "operations_per_second": 1.0, "throughput_MB_per_second": 1.0, "sizes": {}, "kex": {},
            "build_flags": "", "baseline_rss_bytes": 0, "peak_rss_bytes": 0, "timing_scope": "loop"
        });
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn verdicts_respect_the_confidence_intervals() {
        let a = [
            rec("x", 32, &[100.0, 101.0, 99.0]),
            rec("x", 64, &[100.0, 100.5, 99.5]),
            rec("y", 32, &[1.0, 1.0]),
        ];
        let b = [
            rec("x", 32, &[150.0, 151.0, 149.0]),
            rec("x", 64, &[100.4, 100.9, 99.9]),
            rec("z", 32, &[1.0, 1.0]),
        ];
        let rows = compare(&a, &b);
        let v: Vec<(&str, u64, &Verdict)> = rows
            .iter()
            .map(|r| (r.label.as_str(), r.input_bytes, &r.verdict))
            .collect();
        assert_eq!(
            v,
            [
                ("x", 32, &Verdict::Slower),
                ("x", 64, &Verdict::WithinNoise),
                ("y", 32, &Verdict::OnlyInA),
                ("z", 32, &Verdict::OnlyInB),
            ]
        );
        let t = table(&rows);
        assert!(
            t.contains("| `x` | 32 B | 100 | 150 | 1.50× | slower (beyond both 95 % CIs) |"),
            "{t}"
        );
        assert!(
            t.contains("| `y` | 32 B | 1 | – | (ratio –) | only in A |"),
            "{t}"
        );
    }

    /// `rec` as cyclescope would write it: with its additions naming the loop counter.
    fn counted_by(mut r: TimingRecord, source: &str) -> TimingRecord {
        r.cyclescope = Some(
            serde_json::from_value(serde_json::json!({
                "version": "0.1.0", "mode": "guide", "cycle_source": source,
                "reference_cycles": source == "tsc", "per_call_source": source,
                "timer_overhead_ticks": 40.0, "per_call": null, "per_call_by_process": [],
                "trial_spread": null, "preempted_ns_by_trial": [], "histogram_v2_base64": null,
                "elf_load_bytes": null, "measurement_cpu": 1, "worker": "cyclescope-worker",
                "tui_attached": false, "host_problems": [], "failure": null
            }))
            .unwrap(),
        );
        r
    }

    fn verdicts(a: &[TimingRecord], b: &[TimingRecord]) -> Vec<Verdict> {
        compare(a, b).into_iter().map(|c| c.verdict).collect()
    }

    #[test]
    fn a_drop_beyond_both_intervals_is_faster() {
        let a = [rec("x", 1024, &[20_000.0, 20_100.0, 19_900.0])];
        let b = [rec("x", 1024, &[15_000.0, 15_050.0, 14_950.0])];
        let rows = compare(&a, &b);
        assert_eq!(rows[0].verdict, Verdict::Faster);
        assert!(
            table(&rows).contains(
                "| `x` | 1024 B | 20.0 k | 15.0 k | 0.75× | faster (beyond both 95 % CIs) |"
            ),
            "{}",
            table(&rows)
        );
    }

    #[test]
    fn a_difference_inside_a_wide_interval_is_noise_either_way() {
        // B is 5 % slower on average but its trials scatter by ±20 %: no verdict.
        let a = [rec("x", 32, &[1000.0, 1001.0, 999.0])];
        let b = [rec("x", 32, &[850.0, 1050.0, 1250.0])];
        assert_eq!(verdicts(&a, &b), [Verdict::WithinNoise]);
        // The same means with tight trials are a real slowdown.
        let b = [rec("x", 32, &[1049.0, 1050.0, 1051.0])];
        assert_eq!(verdicts(&a, &b), [Verdict::Slower]);
    }

    #[test]
    fn different_counters_or_missing_cycles_are_not_comparable() {
        let a = [counted_by(rec("x", 32, &[100.0, 100.0]), "tsc")];
        let b = [counted_by(
            rec("x", 32, &[50.0, 50.0]),
            "perf_event:cpu-cycles:u",
        )];
        let rows = compare(&a, &b);
        assert_eq!(
            rows[0].verdict,
            Verdict::NotComparable("different cycle counters".into())
        );
        assert!(
            table(&rows).contains("| 0.50× | not comparable: different cycle counters |"),
            "{}",
            table(&rows)
        );
        // The same counter on both sides compares again.
        let b = [counted_by(rec("x", 32, &[50.0, 50.0]), "tsc")];
        assert_eq!(verdicts(&a, &b), [Verdict::Faster]);

        let mut timed_only = rec("x", 32, &[100.0, 100.0]);
        timed_only.mean_cycles = None;
        assert_eq!(
            verdicts(&[rec("x", 32, &[100.0, 100.0])], &[timed_only]),
            [Verdict::NotComparable("no cycle counts".into())]
        );
    }

    #[test]
    fn records_that_are_not_complete_are_left_out() {
        // Through JSON, as a failed record is read from disk.
        let mut failed = serde_json::to_value(rec("x", 32, &[50.0, 50.0])).unwrap();
        failed["status"] = "failed_or_partial".into();
        let failed: TimingRecord = serde_json::from_value(failed).unwrap();
        assert_eq!(
            verdicts(&[rec("x", 32, &[100.0, 100.0])], &[failed]),
            [Verdict::OnlyInA]
        );
    }
}

#[cfg(test)]
mod gate_tests {
    use super::tests::rec;
    use super::*;

    #[test]
    fn one_trial_is_not_comparable_never_faster() {
        let a = [rec("x", 32, &[1000.0, 1001.0, 999.0])];
        let b = [rec("x", 32, &[500.0])];
        let rows = compare(&a, &b);
        assert_eq!(rows[0].verdict.word(), "not_comparable");
        assert!(!rows[0].regressed(0.0));
    }

    #[test]
    fn the_gate_counts_only_what_lies_beyond_both_intervals_and_the_margin() {
        // A: 1000 ± ~2.5; B: 1050 ± ~2.5: 5 % slower, about 4.5 % beyond both intervals.
        let a = [rec("x", 32, &[1000.0, 1001.0, 999.0])];
        let b = [rec("x", 32, &[1049.0, 1050.0, 1051.0])];
        let rows = compare(&a, &b);
        let excess = rows[0].excess_slowdown().unwrap();
        assert!((0.04..0.05).contains(&excess), "{excess}");
        assert!(rows[0].regressed(0.02));
        assert!(!rows[0].regressed(0.05));
        // Faster or within noise never trips the gate.
        assert!(!compare(&b, &a)[0].regressed(0.0));
        let noisy = [rec("x", 32, &[850.0, 1050.0, 1250.0])];
        assert!(!compare(&a, &noisy)[0].regressed(0.0));
    }

    #[test]
    fn csv_and_json_carry_the_same_rows() {
        let a = [rec("x", 32, &[1000.0, 1001.0, 999.0])];
        let b = [rec("x", 32, &[1049.0, 1050.0, 1051.0])];
        let rows = compare(&a, &b);
        let text = rows_csv(&rows);
        let mut r = csv::Reader::from_reader(text.as_bytes());
        assert_eq!(r.headers().unwrap().iter().collect::<Vec<_>>(), COLUMNS);
        let line = r.records().next().unwrap().unwrap();
        assert_eq!((&line[0], &line[1], &line[7]), ("x", "32", "slower"));
        assert_eq!(line[2].parse::<f64>().unwrap(), 1000.0);
        let json = rows_json(&rows);
        assert_eq!(json[0]["verdict"], "slower");
        assert_eq!(json[0]["b_over_a"], 1.05);
    }
}
