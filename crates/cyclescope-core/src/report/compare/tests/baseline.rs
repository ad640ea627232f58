//! Comparisons on the baseline pseudoXOF ratios: a doubtful figure on either side, a host
//! slower for a whole run, two counters, a doubtful helper the ratio divides by, and
//! instruction counts that never divide cycles.

use super::*;

/// `rec` of an instance `digest_bits` wide (records carry it in `sizes.digest_bytes`).
fn wide(label: &str, bits: u64, bytes: u64, per_call: &[f64]) -> TimingRecord {
    let mut r = rec(label, bytes, per_call);
    r.sizes
        .insert("digest_bytes".into(), serde_json::json!(bits / 8));
    r
}

#[test]
fn a_doubtful_figure_on_either_side_gets_no_faster_or_slower_verdict() {
    let a = [rec("x", 32, &[1000.0, 1001.0, 999.0])];
    // Trials ±25 %: the figure's 95 % CI is wide, so the tables mark it ⚠.
    let mut wide_ci = counted_by(rec("x", 32, &[1500.0, 2500.0, 2000.0]), "tsc");
    let spread = trial_spread(&wide_ci.trials);
    wide_ci.cyclescope.as_mut().unwrap().trial_spread = spread;
    let a = [counted_by(a[0].clone(), "tsc")];
    let b = [wide_ci];
    let rows = compare(&a, &b);
    let Verdict::Doubtful(Side::B, why) = &rows[0].verdict else {
        panic!("{:?}", rows[0].verdict)
    };
    assert!(why.contains("95 % CI"), "{why}");
    assert!(!rows[0].regressed(0.0));
    assert!(
        table(&rows).contains("doubtful (⚠ B: 95 % CI"),
        "{}",
        table(&rows)
    );
    assert!(matches!(
        compare(&b, &a)[0].verdict,
        Verdict::Doubtful(Side::A, _)
    ));
}

#[test]
fn a_host_slower_during_a_whole_run_is_no_difference_on_the_baseline_ratio() {
    // Run B: everything 2× slower, the job and its baseline alike.
    let a = [
        wide("h-512", 512, 64, &[1000.0, 1005.0, 995.0]),
        wide("pseudoXOF-512", 512, 64, &[2000.0, 2010.0, 1990.0]),
        wide("pseudoXOF-256", 256, 64, &[1500.0, 1505.0, 1495.0]),
    ];
    let b = [
        wide("h-512", 512, 64, &[2000.0, 2010.0, 1990.0]),
        wide("pseudoXOF-512", 512, 64, &[4000.0, 4020.0, 3980.0]),
        wide("pseudoXOF-256", 256, 64, &[3000.0, 3010.0, 2990.0]),
    ];
    let rows = compare(&a, &b);
    assert!(
        rows.iter().all(|r| r.verdict == Verdict::WithinNoise),
        "{rows:?}"
    );
    assert!(
        rows.iter()
            .all(|r| r.judged_ratio().unwrap().3 == JudgedOn::BaselineRatio)
    );
    assert!(
        table(&rows).contains("1.00× [0.98, 1.02] × pseudoXOF"),
        "{}",
        table(&rows)
    );
    // Without the baselines the same figures read as a slowdown.
    assert_eq!(verdicts(&a[..1], &b[..1]), [Verdict::Slower]);
    // A real slowdown of the job against unchanged baselines still shows.
    let slower = [wide("h-512", 512, 64, &[1200.0, 1206.0, 1194.0])];
    let b2 = [slower[0].clone(), a[1].clone()];
    assert_eq!(compare(&a[..2], &b2)[0].verdict, Verdict::Slower);
}

#[test]
fn two_counters_compare_on_the_baseline_ratios_counter_free() {
    let a = [
        counted_by(wide("h-512", 512, 64, &[1000.0, 1005.0, 995.0]), "tsc"),
        counted_by(
            wide("pseudoXOF-512", 512, 64, &[2000.0, 2010.0, 1990.0]),
            "tsc",
        ),
    ];
    let b = [
        counted_by(wide("h-512", 512, 64, &[410.0, 412.0, 408.0]), "cntvct_el0"),
        counted_by(
            wide("pseudoXOF-512", 512, 64, &[820.0, 824.0, 816.0]),
            "cntvct_el0",
        ),
    ];
    let rows = compare(&a, &b);
    assert_eq!(rows[0].verdict, Verdict::WithinNoise, "{rows:?}");
    assert_eq!(
        rows[0].judged_ratio().unwrap().3,
        JudgedOn::BaselineRatioAcrossCounters
    );
    let t = table(&rows);
    assert!(t.contains("× pseudoXOF, counter-free"), "{t}");
    assert!(
        t.contains("counter-free: the two runs were counted by different cycle counters"),
        "{t}"
    );
    assert_eq!(
        rows_json(&rows)[0]["judged"]["on"],
        "ratio_to_pseudoxof_counter_free"
    );
}

#[test]
fn across_two_counters_a_doubtful_baseline_makes_the_row_doubtful_not_incomparable() {
    let a = [
        counted_by(wide("h-512", 512, 64, &[1000.0, 1005.0, 995.0]), "tsc"),
        counted_by(
            wide("pseudoXOF-512", 512, 64, &[1500.0, 2500.0, 2000.0]),
            "tsc",
        ),
    ];
    // The baseline's trials scatter by ±25 %: ⚠, as on a loaded host.
    let mut a = a;
    let spread = trial_spread(&a[1].trials);
    a[1].cyclescope.as_mut().unwrap().trial_spread = spread;
    let b = [
        counted_by(wide("h-512", 512, 64, &[410.0, 412.0, 408.0]), "cntvct_el0"),
        counted_by(
            wide("pseudoXOF-512", 512, 64, &[820.0, 824.0, 816.0]),
            "cntvct_el0",
        ),
    ];
    let rows = compare(&a, &b);
    let Verdict::Doubtful(Side::A, why) = &rows[0].verdict else {
        panic!("{:?}", rows[0].verdict)
    };
    // The doubt is the baseline's, named; the row's own clean figure is not blamed.
    assert!(
        why.contains("divides by pseudoXOF-512 at 64 B, whose figure is doubtful (95 % CI"),
        "{why}"
    );
    assert_eq!(rows[0].doubtful_divisor.as_deref(), Some("pseudoXOF-512"));
    assert_eq!(rows[1].doubtful_divisor, None, "the baseline's own row");
}

#[test]
fn a_baseline_row_divided_by_a_doubtful_helper_names_the_helper_on_its_ratio() {
    // The row: pseudoXOF-256 at 32 B, clean, divided (no other pseudoXOF width in both
    // runs) by sm3hash-256, whose figure here is ⚠.
    let mut a = [
        counted_by(
            wide("pseudoXOF-256", 256, 32, &[385.0, 386.0, 384.0]),
            "tsc",
        ),
        counted_by(wide("sm3hash-256", 256, 32, &[300.0, 500.0, 400.0]), "tsc"),
    ];
    let spread = trial_spread(&a[1].trials);
    a[1].cyclescope.as_mut().unwrap().trial_spread = spread;
    let b = [
        counted_by(
            wide("pseudoXOF-256", 256, 32, &[150.0, 151.0, 149.0]),
            "cntvct_el0",
        ),
        counted_by(
            wide("sm3hash-256", 256, 32, &[140.0, 141.0, 139.0]),
            "cntvct_el0",
        ),
    ];
    let rows = compare(&a, &b);
    let row = rows.iter().find(|r| r.label == "pseudoXOF-256").unwrap();
    let Verdict::Doubtful(Side::A, why) = &row.verdict else {
        panic!("{:?}", row.verdict)
    };
    assert!(
        why.contains("divides by sm3hash-256 at 32 B, whose figure is doubtful"),
        "{why}"
    );
    assert!(!why.contains("baseline pseudoXOF is doubtful"), "{why}");
    assert_eq!(row.doubtful_divisor.as_deref(), Some("sm3hash-256"));
    let t = table(&rows);
    let line = t
        .lines()
        .find(|l| l.starts_with("| `pseudoXOF-256` |"))
        .unwrap();
    assert!(
        line.contains("| ⚠ × pseudoXOF: divisor `sm3hash-256` doubtful |"),
        "{t}"
    );
    assert_eq!(rows_json(&rows)[0]["doubtful_divisor"], "sm3hash-256");
    // The helper's own row is doubtful for its own figure, with no divisor named.
    let own = rows.iter().find(|r| r.label == "sm3hash-256").unwrap();
    assert!(own.is_doubtful());
    assert_eq!(own.doubtful_divisor, None);
}

#[test]
fn instruction_counts_head_their_columns_and_never_divide_cycles() {
    let counted = |per_call: f64, source: &str| {
        counted_by(
            wide("h-512", 512, 64, &[per_call, per_call, per_call]),
            source,
        )
    };
    let ir = "valgrind:callgrind:Ir";
    let rows = compare(&[counted(6342.0, ir)], &[counted(6100.0, ir)]);
    assert_eq!(
        rows[0].verdict,
        Verdict::Exact(std::cmp::Ordering::Less),
        "{rows:?}"
    );
    let t = table(&rows);
    assert!(
        t.starts_with("| instance | message | A instructions/call | B instructions/call |"),
        "{t}"
    );
    assert!(t.contains("× exact"), "{t}");
    assert_eq!(rows_json(&rows)[0]["a_counter"], "instructions");
    // One side counted instructions, the other cycles, with baselines on both: never
    // weighed, not even on the ratios, and each cell names its unit.
    let a = [
        counted(6342.0, ir),
        counted_by(wide("pseudoXOF-512", 512, 64, &[9000.0; 3]), ir),
    ];
    let b = [
        counted_by(wide("h-512", 512, 64, &[1000.0, 1005.0, 995.0]), "tsc"),
        counted_by(
            wide("pseudoXOF-512", 512, 64, &[2000.0, 2010.0, 1990.0]),
            "tsc",
        ),
    ];
    let rows = compare(&a, &b);
    let Verdict::NotComparable(why) = &rows[0].verdict else {
        panic!("{:?}", rows[0].verdict)
    };
    assert!(why.contains("A counted instructions, B cycles"), "{why}");
    let t = table(&rows);
    assert!(t.contains("| A mean | B mean |"), "{t}");
    assert!(t.contains("| 6342 instr | 1000 cycles |"), "{t}");
    assert!(
        rows_csv(&rows)
            .lines()
            .next()
            .unwrap()
            .ends_with(",a_counter,b_counter")
    );
}
