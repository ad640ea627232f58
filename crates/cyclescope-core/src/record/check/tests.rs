use super::*;

fn published(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/reference/harness-data/performance/data/arm_1/records/hash-05")
        .join(name);
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The published record with cyclescope's additions, as a cyclescope run writes them.
fn with_additions(failure: Value) -> Value {
    let mut r = published("uHash-512__hash_32.json");
    r["cyclescope"] = serde_json::json!({
        "version": "0.1.0", "mode": "guide", "cycle_source": "tsc",
        "reference_cycles": true, "per_call_source": "tsc", "timer_overhead_ticks": 40.0,
        "per_call": null, "per_call_by_process": [], "trial_spread": null,
        "preempted_ns_by_trial": [], "histogram_v2_base64": null, "elf_load_bytes": null,
        "measurement_cpu": 1, "worker": "cyclescope-worker", "tui_attached": false,
        "host_problems": [], "failure": failure
    });
    r
}

fn findings(r: &Value) -> Vec<String> {
    let rel = Path::new("records/hash-05/uHash-512__hash_32.json");
    let bytes = serde_json::to_vec(r).unwrap();
    check_record(rel, &bytes)
        .findings
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn a_published_record_and_one_with_a_well_formed_failure_are_valid() {
    let r = published("uHash-512__hash_32.json");
    assert_eq!(findings(&r), Vec::<String>::new());
    let c = check_record(Path::new("x.json"), &serde_json::to_vec(&r).unwrap());
    assert!(c.valid().is_some() && c.complete);
    assert_eq!(c.job(), Some(("uHash-512".into(), 32)));
    let r = with_additions("TIMEOUT: worker killed after 5 s".into());
    assert_eq!(findings(&r), Vec::<String>::new());
}

#[test]
fn a_malformed_failure_is_named_by_its_field() {
    let f = findings(&with_additions("garbage".into()));
    assert_eq!(
        f,
        [
            "records/hash-05/uHash-512__hash_32.json: not a timing record: cyclescope.failure: \
             a failure reads `KIND: detail`, not \"garbage\""
        ]
    );
    let f = findings(&with_additions(42.into()));
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].contains("cyclescope.failure: invalid type: integer `42`"),
        "{f:?}"
    );
}

#[test]
fn a_figure_that_does_not_follow_from_the_trials_is_found() {
    let mut r = published("uHash-512__hash_32.json");
    r["mean_cycles"] = (-5.0).into();
    let f = findings(&r);
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].contains(": mean_cycles = Some(-5.0), recomputed Some("),
        "{f:?}"
    );
    // Still a timing record, and its job can be named.
    let c = check_record(Path::new("x.json"), &serde_json::to_vec(&r).unwrap());
    assert!(c.record.is_some() && c.valid().is_none());
    assert_eq!(c.job(), Some(("uHash-512".into(), 32)));
}

#[test]
fn a_wrong_field_of_the_harness_schema_and_an_unsafe_label_are_found() {
    let mut r = published("uHash-512__hash_32.json");
    r["kat_not_passed"] = "no".into();
    let f = findings(&r);
    assert!(
        f.len() == 1 && f[0].contains("not a timing record: kat_not_passed: invalid type"),
        "{f:?}"
    );
    let mut r = published("uHash-512__hash_32.json");
    r["label"] = "a/../../etc".into();
    let f = findings(&r);
    assert!(
        f.len() == 1 && f[0].contains("label \"a/../../etc\" contains '/'"),
        "{f:?}"
    );
}

#[test]
fn a_file_that_is_not_json_has_one_finding_and_no_job() {
    let c = check_record(Path::new("r.json"), b"{\"schema\": 2, \"sta");
    assert_eq!(c.findings.len(), 1);
    assert!(c.findings[0].message.starts_with("not readable JSON: "));
    assert_eq!(c.job(), None);
}

#[test]
fn isclose_is_relative() {
    assert!(isclose(6.6309994799999995e-06, 6.63099948e-06));
    assert!(!isclose(1.0, 1.000001));
}
