//! A run whose instances lack the baseline pseudoXOF of their width measures it once per
//! width, as a reference job of its own.

use super::*;

#[test]
fn a_missing_baseline_is_measured_once_per_width_as_a_reference_job() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let hash = |label: &str| Instance {
        candidate: "hash-10".into(),
        label: label.into(),
        ..instance()
    };
    let o = RequestOverrides {
        lengths: Some(vec![32, 1024]),
        host_root: Some(fixture_host()),
        reference_pool: vec![instance()],
        ..RequestOverrides::default()
    };
    let settings = Settings {
        trial_target_s: 0.01,
        ..Settings::default()
    };
    let selected = vec![hash("FEILIAN512"), hash("FEILIAN512x")];
    let mut req = RunRequest::build(&settings, selected, dir.clone(), o).unwrap();
    req.cpus = vec![2];
    assert_eq!(req.reference_jobs, ["pseudoXOF-512"]);
    assert_eq!(
        req.instances.len(),
        3,
        "one baseline for both 512-bit instances"
    );
    let ran = run(&req, &mut Scripted::new(&[]));
    assert_eq!(ran.outcome.finished, 6, "3 instances × 2 lengths");
    let marked: Vec<(String, u64)> = ran
        .records
        .iter()
        .filter(|r| r.cyclescope.as_ref().is_some_and(|a| a.reference_job))
        .map(|r| (r.label.clone(), r.input_bytes))
        .collect();
    assert_eq!(marked.len(), 2, "{marked:?}");
    assert!(marked.iter().all(|(l, _)| l == "pseudoXOF-512"));
    // The mark survives in campaign.json, so a resumed run keeps it.
    let c = read_campaign(&dir).unwrap();
    assert_eq!(c.cyclescope.reference_jobs, ["pseudoXOF-512"]);
    assert_eq!(c.cyclescope.baseline.as_deref(), Some("iccs"));
    let mut c = c;
    c.cyclescope.cpu = 0;
    c.cyclescope.cpus = vec![0];
    let again = RunRequest::resume(&settings, c, dir, RequestOverrides::default()).unwrap();
    assert!(again.is_reference_job("iccs", "pseudoXOF-512"));
    assert!(!again.is_reference_job("hash-10", "FEILIAN512"));
    // A selection that holds the baseline already adds nothing.
    let o = RequestOverrides {
        reference_pool: vec![instance()],
        ..RequestOverrides::default()
    };
    let both = vec![hash("FEILIAN512"), instance()];
    let r = RunRequest::build(&settings, both, tmp.path().join("r2"), o).unwrap();
    assert!(r.reference_jobs.is_empty() && r.instances.len() == 2);
}
