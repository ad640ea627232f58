use super::*;

#[test]
fn measured_by_names_counter_clock_and_cpu() {
    let env = serde_json::json!({"cpu_model": "AMD EPYC", "cpu_number": 1, "virtualized": true,
            "reference_clock_hz": 2596154450u64, "core_clock_hz": null});
    let env = env.as_object().unwrap();
    assert_eq!(
        measured_by(env, "tsc", true),
        "cycles: tsc (reference cycles at 2.596 GHz), CPU 1 (AMD EPYC), virtualized"
    );
    let env = serde_json::json!({"cpu_model": "Qualcomm Oryon", "cpu_number": 3, "core_clock_hz": 2695228108u64});
    assert_eq!(
        measured_by(env.as_object().unwrap(), "perf_event:cpu-cycles:u", false),
        "cycles: perf_event:cpu-cycles:u (core cycles, clock 2.695 GHz), CPU 3 (Qualcomm Oryon)"
    );
    let env = serde_json::json!({"cpu_model": "12th Gen Intel(R) Core(TM) i7-12700",
            "cpu_number": 16, "core_type": "cpu_atom"});
    assert_eq!(
        measured_by(env.as_object().unwrap(), "perf_event:cpu-cycles:u", false),
        "cycles: perf_event:cpu-cycles:u (core cycles), CPU 16 (12th Gen Intel(R) Core(TM) \
             i7-12700) on cpu_atom"
    );
}

#[test]
fn perf_rows_follow_the_published_layout() {
    let key = JobKey {
        candidate: "hash-10".into(),
        label: "FEILIAN512".into(),
        input_bytes: 1024,
    };
    let s = JobSummary {
        status: crate::vocabulary::RecordStatus::Complete,
        kat: crate::kat::KatStatus::Pass.into(),
        mean_cycles: Some(17_900.0),
        mean_seconds: 6.63099948e-06,
        throughput_mb_per_second: 154.43,
        measurements: 87_915,
        trials: 5,
        iterations_per_trial: 17_583,
        cycle_source: Some(crate::counter::CycleSource::PerfUserCycles),
        per_call: None,
        disturbed_retries: 0,
        ci95_relative: None,
        robust: None,
        doubts: vec![],
        layouts: None,
        cpu_wait: None,
    };
    let table = perf_table([
        perf_cells(&key, Some(&s), None),
        perf_cells(&key, None, Some("CRASH")),
    ]);
    assert_eq!(
        table,
        "| instance | message | mean cycles | cycles/byte | mean time | MB/s | n |\n|---|---|---|---|---|---|---|\n\
             | `FEILIAN512` | 1024 B | 17.9 k | 17.5 | 6.63 µs | 154.4 | 87915 (5 × 17583) |\n\
             | `FEILIAN512` | 1024 B | failed | – | – | – | CRASH |\n"
    );
    assert_eq!(perf_table(Vec::new()), "");
}

#[test]
fn the_mean_carries_its_interval_and_a_doubtful_figure_its_mark() {
    let key = JobKey {
        candidate: "hash-10".into(),
        label: "FEILIAN512".into(),
        input_bytes: 512,
    };
    let s = JobSummary {
        status: crate::vocabulary::RecordStatus::Complete,
        kat: crate::kat::KatStatus::Nokat.into(),
        mean_cycles: Some(17_300.0),
        mean_seconds: 6.6e-06,
        throughput_mb_per_second: 77.6,
        measurements: 100_000,
        trials: 5,
        iterations_per_trial: 20_000,
        cycle_source: Some(crate::counter::CycleSource::Tsc),
        per_call: None,
        disturbed_retries: 10,
        ci95_relative: Some(0.012),
        robust: None,
        doubts: vec![
            Doubt::MeanOutsideBody {
                mean: 17_300.0,
                low: 5800.0,
                high: 7647.0,
            },
            Doubt::KatNotPassed {
                kat: "NOKAT".into(),
            },
        ],
        layouts: None,
        cpu_wait: None,
    };
    assert_eq!(perf_cells(&key, Some(&s), None)[2], "17.3 k ±1.2 % ⚠");
    assert_eq!(
        perf_cells_unmarked(&key, Some(&s), None)[2],
        "17.3 k ±1.2 %"
    );
    // Only the doubt about the figure is noted under the table; the KAT has its section.
    assert_eq!(
        doubt_notes([(&key, &s)]),
        vec![
            "⚠ `FEILIAN512` 512 B: loop mean 17.3 k outside the per-call body 5800…7647: \
                 the loop was disturbed or the calls vary; measure again and compare"
        ]
    );
    let clean = JobSummary {
        ci95_relative: Some(0.25),
        doubts: vec![],
        measurements: 87,
        ..s
    };
    assert_eq!(
        perf_cells(&key, Some(&clean), None)[2],
        "17.3 k ±25 % (n=87)"
    );
}
