use super::*;
use crate::measure::stats::{Trial, trial_spread};

mod baseline;

fn rec(label: &str, bytes: u64, per_call: &[f64]) -> TimingRecord {
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
        rec("x", 32, &[250.0, 251.0, 249.0]),
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
        t.contains(
            "| `x` | 32 B | 100 | 250 | 2.50× | 2.50× [1.44, 4.35] | slower (beyond run-to-run noise) |"
        ),
        "{t}"
    );
    assert!(
        t.contains("| `y` | 32 B | 1 | – | (ratio –) | – | only in A |"),
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
    let b = [rec("x", 1024, &[7_500.0, 7_525.0, 7_475.0])];
    let rows = compare(&a, &b);
    assert_eq!(rows[0].verdict, Verdict::Faster);
    assert!(
        table(&rows).contains(
            "| `x` | 1024 B | 20.0 k | 7500 | 0.38× | 0.38× [0.22, 0.65] | faster (beyond run-to-run noise) |"
        ),
        "{}",
        table(&rows)
    );
}

#[test]
fn a_difference_inside_a_wide_interval_is_noise_either_way() {
    // B is 2.5× slower on average but its trials scatter by ±40 %: no verdict.
    let a = [rec("x", 32, &[1000.0, 1001.0, 999.0])];
    let b = [rec("x", 32, &[1500.0, 2500.0, 3500.0])];
    assert_eq!(verdicts(&a, &b), [Verdict::WithinNoise]);
    // The same means with tight trials are a real slowdown.
    let b = [rec("x", 32, &[2499.0, 2500.0, 2501.0])];
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
    assert!(
        matches!(&rows[0].verdict, Verdict::NotComparable(w) if w.starts_with("different cycle counters, and no clean baseline pseudoXOF")),
        "{:?}",
        rows[0].verdict
    );
    assert!(
        table(&rows).contains("| 0.50× | – | not comparable: different cycle counters"),
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

#[test]
fn one_trial_is_not_comparable_never_faster() {
    let a = [rec("x", 32, &[1000.0, 1001.0, 999.0])];
    let b = [rec("x", 32, &[500.0])];
    let rows = compare(&a, &b);
    assert_eq!(rows[0].verdict.word(), "not_comparable");
    assert!(!rows[0].regressed(0.0));
}

#[test]
fn the_gate_counts_only_what_lies_beyond_the_noise_and_the_margin() {
    // A: 1000, B: 2500, trials ±0.1 %: 2.5× slower, about 44 % beyond the between-run noise
    // (each run's own offset at least `noise::HOST_RUN_STRAY`: half-width ln 1.74).
    let a = [rec("x", 32, &[1000.0, 1001.0, 999.0])];
    let b = [rec("x", 32, &[2499.0, 2500.0, 2501.0])];
    let rows = compare(&a, &b);
    let excess = rows[0].excess_slowdown().unwrap();
    assert!((0.43..0.44).contains(&excess), "{excess}");
    assert!(rows[0].regressed(0.40));
    assert!(!rows[0].regressed(0.45));
    // Faster or within noise never trips the gate.
    assert!(!compare(&b, &a)[0].regressed(0.0));
    let noisy = [rec("x", 32, &[1500.0, 2500.0, 3500.0])];
    assert!(!compare(&a, &noisy)[0].regressed(0.0));
}

#[test]
fn csv_and_json_carry_the_same_rows() {
    let a = [rec("x", 32, &[1000.0, 1001.0, 999.0])];
    let b = [rec("x", 32, &[2499.0, 2500.0, 2501.0])];
    let rows = compare(&a, &b);
    let text = rows_csv(&rows);
    let mut r = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(
        r.headers().unwrap().iter().collect::<Vec<_>>(),
        render::COLUMNS
    );
    let line = r.records().next().unwrap().unwrap();
    assert_eq!((&line[0], &line[1], &line[11]), ("x", "32", "slower"));
    assert_eq!(&line[10], "mean_cycles");
    assert_eq!(line[2].parse::<f64>().unwrap(), 1000.0);
    let json = rows_json(&rows);
    assert_eq!(json[0]["verdict"], "slower");
    assert_eq!(json[0]["b_over_a"], 2.5);
}

#[test]
fn a_rejected_record_takes_its_job_s_row_in_order_with_no_verdict_and_no_figure() {
    let checked = |label: &str| {
        let bytes = serde_json::to_vec(&serde_json::json!({"label": label, "input_bytes": 32}));
        crate::record::check::check_record(
            std::path::Path::new("records/c/r.json"),
            &bytes.unwrap(),
        )
    };
    let a = RunRecords {
        valid: vec![rec("x", 32, &[100.0, 100.0]), rec("z", 32, &[1.0, 1.0])],
        rejected: vec![checked("y")],
        published: false,
    };
    let b = RunRecords {
        valid: vec![rec("x", 32, &[100.0, 100.0]), rec("z", 32, &[1.0, 1.0])],
        rejected: vec![checked("x")],
        published: false,
    };
    let rows = compare_runs(&a, &b);
    let labels: Vec<&str> = rows.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(labels, ["x", "y", "z"]);
    let Verdict::Invalid(Side::B, why) = &rows[0].verdict else {
        panic!("{:?}", rows[0].verdict)
    };
    assert!(
        why.starts_with("records/c/r.json: environment missing (and 1 more)"),
        "{why}"
    );
    assert_eq!((rows[0].a, rows[0].b), (Some(100.0), None));
    assert!(matches!(rows[1].verdict, Verdict::Invalid(Side::A, _)));
    assert_eq!(rows[2].verdict, Verdict::WithinNoise);
    assert!(rows[0].is_invalid() && rows[0].is_comparable() && !rows[0].regressed(0.0));
    assert_eq!(rows_json(&rows)[0]["verdict"], "invalid");
}
