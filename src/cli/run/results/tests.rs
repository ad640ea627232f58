use super::*;
use crate::tui::demo;

fn row(candidate: &str, label: &str, bits: u32, bytes: u64, cycles: f64) -> Row {
    Row {
        job: JobKey {
            candidate: candidate.into(),
            label: label.into(),
            input_bytes: bytes,
        },
        summary: demo::summary(cycles, bytes),
        measured_by: "cycles: perf_event:cpu-cycles:u (core cycles)".into(),
        core_type: Some("cpu_core".into()),
        digest_bits: bits,
        x_pseudoxof: None,
        x_pseudoxof_doubtful: false,
        baseline: "iccs".into(),
        reference_job: candidate == "iccs",
    }
}

#[test]
fn the_table_ends_with_the_ratio_column_and_csv_holds_the_same_rows() {
    // Published arm_1 figures: uHash-512 61.6 k over pseudoXOF-512 2810 at 32 B.
    let mut rows = vec![
        row("hash-05", "uHash-512", 512, 32, 61_570.0),
        row("iccs", "pseudoXOF-512", 512, 32, 2810.0),
        row("hash-05", "uHash-768", 768, 32, 92_500.0),
    ];
    with_ratios(&mut rows, &Baseline::default());
    let table = results_table(&rows, &Baseline::default(), None);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(
        lines[0],
        "| instance | message | mean cycles | cycles/byte | mean time | MB/s | n | × pseudoXOF |"
    );
    assert!(
        lines[2].starts_with("| `pseudoXOF-512` (reference) | 32 B |")
            && lines[2].ends_with("| 1.00× |"),
        "{table}"
    );
    assert!(
        lines[3].starts_with("| `uHash-512` | 32 B |") && lines[3].ends_with("| 21.91× |"),
        "{table}"
    );
    assert!(lines[4].ends_with("| – |"), "no pseudoXOF-768: {table}");
    // The C baseline beside the bundled one: both rows say which they are.
    let mut both = vec![
        row("iccs", "pseudoXOF-512", 512, 1024, 18_900.0),
        row("iccs-c", "pseudoXOF-512", 512, 1024, 46_400.0),
    ];
    with_ratios(&mut both, &Baseline::default());
    let table2 = results_table(&both, &Baseline::default(), None);
    assert!(
        table2.contains("| `iccs/pseudoXOF-512` (reference) | 1024 B |"),
        "{table2}"
    );
    assert!(
        table2.contains("| `iccs-c/pseudoXOF-512` | 1024 B |"),
        "{table2}"
    );
    assert!(table.contains("from candidate `iccs`"), "{table}");

    let text = csv(&rows);
    let mut r = ::csv::Reader::from_reader(text.as_bytes());
    assert_eq!(
        r.headers().unwrap().iter().take(18).collect::<Vec<_>>(),
        CSV_COLUMNS
    );
    let back: Vec<::csv::StringRecord> = r.records().map(Result::unwrap).collect();
    assert_eq!(back.len(), 3);
    let ratio: f64 = back[1][12].parse().unwrap();
    assert!((ratio - 61_570.0 / 2810.0).abs() < 1e-9, "{ratio}");
    assert_eq!((&back[0][1], &back[0][3]), ("pseudoXOF-512", "true"));
    assert_eq!(&back[2][12], "", "no ratio: an empty cell");
}

#[test]
fn the_uninterrupted_call_figure_takes_a_column_and_csv_cells_when_a_row_has_one() {
    let mut rows = vec![
        row("hash-05", "uHash-512", 512, 32, 61_570.0),
        row("iccs", "pseudoXOF-512", 512, 32, 2810.0),
    ];
    let plain = results_table(&rows, &Baseline::default(), None);
    assert!(!plain.contains(ROBUST_HEADER), "{plain}");
    rows[0].summary.robust = crate::measure::robust::of_trials(
        &[1000.0, 1010.0, 990.0].map(|m| crate::measure::robust::TrialBody {
            mean_ticks: m,
            calls: 100,
            excluded: 3,
        }),
        1.0,
    );
    let table = results_table(&rows, &Baseline::default(), None);
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0].ends_with(&format!("| {ROBUST_HEADER} |")),
        "{table}"
    );
    assert!(lines[1].ends_with("---|---|"), "{table}");
    assert!(lines[2].ends_with("| – | – |"), "{table}");
    assert!(lines[3].ends_with("| 1000 [975, 1025] |"), "{table}");
    assert!(table.contains(ROBUST_NOTE), "{table}");
    let text = csv(&rows);
    let mut r = ::csv::Reader::from_reader(text.as_bytes());
    let back: Vec<::csv::StringRecord> = r.records().map(Result::unwrap).collect();
    assert_eq!(
        (&back[1][18], &back[1][21]),
        ("1000", "uninterrupted_call_mean")
    );
    assert_eq!(&back[0][18], "");
}
