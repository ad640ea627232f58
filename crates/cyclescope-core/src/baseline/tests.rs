//! The ratio against published figures, and which reference jobs a selection needs.

use super::*;
use crate::catalog::Instance;
use crate::vocabulary::RecordStatus;

fn inst(candidate: &str, label: &str, bits: u32) -> Instance {
    Instance {
        candidate: candidate.into(),
        algorithm: label.into(),
        label: label.into(),
        library: format!("lib/lib{label}.so").into(),
        digest_bits: bits,
        variant: String::new(),
        flags: String::new(),
        kat_manifest: None,
        kat_name: None,
        abi: crate::plugin::Abi::Iccs,
        oracle: None,
        kat_dir: None,
    }
}

#[test]
fn the_ratio_reproduces_published_x86_1_figures() {
    // Spec §8, x86_1 mean cycles: sm3hash-256 1469 / 23.0 k / 1.39 M over pseudoXOF-256
    // 1536 / 23.1 k / 1.40 M; pseudohash-1024 32.6 k over pseudoXOF-1024 6009 at 32 B.
    let cases = [
        (1469.0, 1536.0, "0.96×"),
        (23.0e3, 23.1e3, "1.00×"),
        (1.39e6, 1.40e6, "0.99×"),
        (32.6e3, 6009.0, "5.43×"),
        (10000.0, 3009.0, "3.32×"),
    ];
    for (own, base, want) in cases {
        assert_eq!(cell(ratio(Some(own), Some(base))), want, "{own}/{base}");
    }
    assert_eq!(ratio(Some(1.0), None), None);
    assert_eq!(ratio(None, Some(1.0)), None);
    assert_eq!(
        ratio(Some(1.0), Some(0.0)),
        None,
        "no division by a zero baseline"
    );
    assert_eq!(cell(None), "–");
}

#[test]
fn missing_baselines_are_added_once_per_width() {
    let pool = vec![
        inst("iccs", "pseudoXOF-512", 512),
        inst("iccs", "pseudoXOF-256", 256),
        inst("iccs-c", "pseudoXOF-512", 512),
    ];
    let selected = vec![
        inst("hash-10", "FEILIAN512", 512),
        inst("hash-10", "FEILIAN512b", 512),
        inst("hash-05", "uHash-256", 256),
        inst("hash-05", "uHash-1024", 1024),
        inst("iccs", "pseudoXOF-512", 512),
        inst("iccs", "sm3hash-256", 256),
    ];
    let b = Baseline::default();
    let (add, unknown) = b.missing(&selected, &pool);
    let labels: Vec<_> = add.iter().map(|i| i.label.as_str()).collect();
    assert_eq!(
        labels,
        ["pseudoXOF-256"],
        "512 is selected already; the helpers' own sm3hash-256 needs none"
    );
    assert_eq!(unknown, [1024]);
    assert!(b.missing(&selected[5..], &pool).0.is_empty());
    // Asked to (`run`), the helpers' own sm3hash-256 alone gets the pseudoXOF its ratio
    // divides by; the baseline's pseudoXOF instances still need none.
    let (add, _) = b.missing_for(&selected[4..], &pool, true);
    assert_eq!(add.len(), 1, "{add:?}");
    assert_eq!(add[0].label, "pseudoXOF-256");
    let refs = vec!["pseudoXOF-256".to_string()];
    assert_eq!(
        super::reference_reasons(&refs, &selected),
        ["pseudoXOF-256 (uHash-256, sm3hash-256 divide by it)"]
    );
    assert_eq!(
        super::reference_reasons(&refs, &selected[5..]),
        ["pseudoXOF-256 (sm3hash-256 divides by it)"]
    );
    let c = Baseline::new("iccs-c");
    let (add, unknown) = c.missing(&selected[..2], &pool);
    assert_eq!(add.len(), 1);
    assert_eq!(add[0].candidate, "iccs-c");
    assert!(unknown.is_empty());
}

#[test]
fn baseline_means_divide_only_complete_jobs_of_the_same_length() {
    let key = |c: &str, l: &str, b| JobKey {
        candidate: c.into(),
        label: l.into(),
        input_bytes: b,
    };
    let s = |mean, status| JobSummary {
        status,
        mean_cycles: Some(mean),
        kat: crate::kat::KatStatus::Pass.into(),
        mean_seconds: 0.0,
        throughput_mb_per_second: 0.0,
        measurements: 100,
        trials: 5,
        iterations_per_trial: 20,
        cycle_source: None,
        per_call: None,
        disturbed_retries: 0,
        ci95_relative: None,
        robust: None,
        doubts: vec![],
        layouts: None,
        cpu_wait: None,
    };
    let jobs = [
        (
            key("iccs", "pseudoXOF-512", 32),
            s(2810.0, RecordStatus::Complete),
        ),
        (
            key("iccs", "pseudoXOF-512", 1024),
            s(43.5e3, RecordStatus::FailedOrPartial),
        ),
        (
            key("iccs-c", "pseudoXOF-512", 1024),
            s(1.0, RecordStatus::Complete),
        ),
    ];
    let means = BaselineMeans::from_jobs(&Baseline::default(), jobs.iter().map(|(k, s)| (k, s)));
    let own = key("hash-05", "uHash-512", 32);
    // arm_1: uHash-512 at 32 B, 61.6 k over pseudoXOF-512's 2810 (the summary's 21.91×).
    let r = means.ratio_of(512, &own, &s(61_570.0, RecordStatus::Complete));
    assert_eq!(ratio_cell(r), "21.91×");
    let at_1k = key("hash-05", "uHash-512", 1024);
    assert_eq!(
        means.ratio_of(512, &at_1k, &s(1.0, RecordStatus::Complete)),
        None
    );
    // A doubtful figure on either side makes the ratio doubtful.
    let wide = JobSummary {
        doubts: vec![crate::measure::doubt::Doubt::WideInterval { relative: 0.33 }],
        ..s(61_570.0, RecordStatus::Complete)
    };
    assert_eq!(ratio_cell(means.ratio_of(512, &own, &wide)), "21.91× ⚠");
    let doubtful_base = BaselineMeans::from_jobs(
        &Baseline::default(),
        [(
            &jobs[0].0,
            &JobSummary {
                doubts: wide.doubts.clone(),
                ..jobs[0].1.clone()
            },
        )],
    );
    let r = doubtful_base.ratio_of(512, &own, &s(61_570.0, RecordStatus::Complete));
    assert_eq!(ratio_cell(r), "21.91× ⚠");
    // A caveat about the job (few measurements) is not a doubt about the figure.
    let few = JobSummary {
        doubts: vec![crate::measure::doubt::Doubt::FewMeasurements { measurements: 5 }],
        ..s(61_570.0, RecordStatus::Complete)
    };
    assert_eq!(ratio_cell(means.ratio_of(512, &own, &few)), "21.91×");
    assert_eq!(
        means.ratio_of(256, &own, &s(1.0, RecordStatus::Complete)),
        None
    );
    // Another counter is another unit: no ratio.
    let tsc = JobSummary {
        cycle_source: Some(crate::counter::CycleSource::Tsc),
        ..s(61_570.0, RecordStatus::Complete)
    };
    assert_eq!(means.ratio_of(512, &own, &tsc), None);
}
