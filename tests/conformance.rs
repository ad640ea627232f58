//! The conformance checks of the KAT gate, end to end through the real binary: each fixture
//! of `tests/fixtures/conform/` passes the KAT and breaks one property; `kat` must name the
//! check it breaks (NONCONFORM for a failure, PASS with a finding for a finding) and `run`
//! must refuse to measure a failure without `--allow-kat-fail`. The honest libraries — the
//! bundled baselines and the fixture submissions — must pass every check (a false positive is
//! a defect).

mod common;

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use common::conform::{evidence_bits, fixtures, harness_tree};

fn run_in(dir: &Path, args: &[&str]) -> Output {
    common::cyclescope()
        .args(args)
        .current_dir(dir)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .output()
        .expect("running cyclescope")
}

/// `kat --json` of `source` (e.g. `["--scan", tree]`): the objects, and the whole output.
fn kat_json(dir: &Path, source: &[&str]) -> (Vec<Value>, String) {
    let out_dir = dir.join("kat-run");
    let mut args = vec!["kat", "--json", "--out", out_dir.to_str().unwrap()];
    args.extend_from_slice(source);
    let o = run_in(dir, &args);
    let text = common::output_text(&o);
    let objects: Vec<Value> = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("kat --json printed no JSON list ({e}):\n{text}"));
    (objects, text)
}

/// The outcome word and detail of `check` in one `kat --json` object.
fn outcome(obj: &Value, check: &str) -> (String, String) {
    let c = obj["conformance"]
        .as_array()
        .and_then(|l| l.iter().find(|c| c["check"] == check))
        .unwrap_or_else(|| panic!("no {check} in {obj}"));
    (
        c["outcome"].as_str().unwrap().to_string(),
        c["detail"].as_str().unwrap().to_string(),
    )
}

/// `name` passes the KAT's files and fails `check`: `kat` says NONCONFORM naming it (exit 9)
/// and `run` measures nothing, saying why.
fn fails(name: &str, check: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let tree = harness_tree(tmp.path(), name);
    let (objects, text) = kat_json(tmp.path(), &["--scan", tree.to_str().unwrap()]);
    let [obj] = objects.as_slice() else {
        panic!("one instance expected:\n{text}");
    };
    let (word, detail) = outcome(obj, check);
    assert_eq!(word, "fail", "{name}: {check}: {detail}\n{text}");
    assert_eq!(obj["status"], "NONCONFORM", "{text}");
    let kat_detail = obj["detail"].as_str().unwrap();
    assert!(
        kat_detail.starts_with(&format!("{check}: ")),
        "the KAT detail names the check: {kat_detail}"
    );
    let log = std::fs::read_to_string(
        tmp.path()
            .join("kat-run")
            .join(obj["log"].as_str().unwrap()),
    )
    .unwrap();
    assert!(
        log.contains(&format!("conform  {check} fail ")),
        "the KAT log has the outcome:\n{log}"
    );
    assert!(
        log.lines()
            .last()
            .unwrap()
            .starts_with(&format!("RESULT hash-90 FIXH-256 NONCONFORM {check}: ")),
        "{log}"
    );

    let runs = tmp.path().join("runs");
    let o = run_in(
        tmp.path(),
        &[
            "run",
            "--scan",
            tree.to_str().unwrap(),
            "--no-baselines",
            "--lengths",
            "32",
            "--trials",
            "2",
            "--trial-target",
            "0.01",
            "--allow-unfixed-host",
            "--out",
            runs.to_str().unwrap(),
        ],
    );
    let text = common::output_text(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!("{name} not measured: KAT NONCONFORM ({check})")),
        "run names the check that held the instance back:\n{text}"
    );
    // The baseline the ratio needs may be measured (a reference job); the fixture is not.
    assert!(
        !text.contains(&format!("done {name} @")),
        "the fixture was not timed:\n{text}"
    );
    assert!(
        text.contains("1 not measured for their KAT"),
        "the summary counts it:\n{text}"
    );
}

/// `name` passes the KAT with a finding of `check` (no failure): the `kat --json` object (in
/// `tmp`), whose every other check passes or is skipped for want of an oracle or `--full`.
fn finds(tmp: &Path, name: &str, check: &str) -> Value {
    let tree = harness_tree(tmp, name);
    let (objects, text) = kat_json(tmp, &["--scan", tree.to_str().unwrap()]);
    let [obj] = objects.as_slice() else {
        panic!("one instance expected:\n{text}");
    };
    let (word, detail) = outcome(obj, check);
    assert_eq!(word, "finding", "{name}: {check}: {detail}\n{text}");
    assert_eq!(obj["status"], "PASS", "a finding does not block:\n{text}");
    assert_eq!(obj["detail"], "", "{text}");
    let findings = obj["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{obj}");
    assert_eq!(findings[0]["check"], check, "{obj}");
    assert!(
        text.contains(&format!("{name}: finding, not blocking: {check}: ")),
        "kat shows the finding on stderr:\n{text}"
    );
    for c in obj["conformance"].as_array().unwrap() {
        let word = c["outcome"].as_str().unwrap();
        let skip_ok = matches!(c["check"].as_str(), Some("differential" | "long_message"));
        assert!(
            c["check"] == check || word == "pass" || (word == "skipped" && skip_ok),
            "{c}\n{text}"
        );
    }
    obj.clone()
}

#[test]
fn a_library_that_zeroes_its_const_input_fails_input_unchanged() {
    fails("zero_input", "input_unchanged");
}

#[test]
fn a_write_of_the_guard_pattern_past_the_digest_fails_output_bounds() {
    fails("write_past_digest", "output_bounds");
}

#[test]
fn a_read_of_64_bytes_past_the_message_fails_over_read_naming_the_length() {
    fails("read_past_message", "over_read");
    let tmp = tempfile::tempdir().unwrap();
    let tree = harness_tree(tmp.path(), "read_past_message");
    let (objects, _) = kat_json(tmp.path(), &["--scan", tree.to_str().unwrap()]);
    let (_, detail) = outcome(&objects[0], "over_read");
    assert!(
        detail.contains("SIGSEGV")
            && detail.contains("at 0 bits")
            && detail.contains("flush against an inaccessible page"),
        "{detail}"
    );
}

#[test]
fn a_digest_that_depends_on_the_byte_after_the_message_fails_outside_bytes() {
    fails("byte_after_message", "outside_bytes");
}

/// The same library, honest wherever its process is the checks' worker: the engine's own
/// `outside_bytes`, in a trial-worker job like every other, still sees it (it read PASS while
/// the check ran in the checks' worker, until checks' version 5).
#[test]
fn a_library_honest_only_in_the_checks_worker_fails_the_engines_outside_bytes() {
    fails("outside_bytes_unless_checked", "outside_bytes");
}

#[test]
fn a_library_wrong_when_unaligned_fails_alignment() {
    fails("unaligned", "alignment");
}

#[test]
fn a_library_wrong_after_5000_calls_fails_determinism() {
    fails("after_5000_calls", "determinism");
}

#[test]
fn a_library_with_static_state_fails_reentrancy() {
    fails("static_state", "reentrancy");
}

/// Reentrant only where its process is the checks' worker: the engine's two threads of a trial
/// worker's job find it (checks' version 5 ran `reentrancy` in the checks' worker, and passed it).
#[test]
fn a_library_reentrant_only_in_the_checks_worker_fails_the_engines_reentrancy() {
    fails("reentrancy_unless_checked", "reentrancy");
}

/// An error return in one thread of `reentrancy`'s job ends that job at its record, with every
/// digest before it from both threads in record order: the outcome is that return (no digest
/// differs before it), and every other check, single-threaded, passes.
#[test]
fn an_error_return_in_the_reentrancy_threads_is_that_checks_failure() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = harness_tree(tmp.path(), "busy_refuses");
    let (objects, text) = kat_json(tmp.path(), &["--scan", tree.to_str().unwrap()]);
    let [obj] = objects.as_slice() else {
        panic!("one instance expected:\n{text}");
    };
    let (word, detail) = outcome(obj, "reentrancy");
    assert_eq!(word, "fail", "{detail}\n{text}");
    assert!(detail.contains("CryptHash returned -1"), "{detail}");
    assert_eq!(obj["status"], "NONCONFORM", "{text}");
    let detail = obj["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("reentrancy: "),
        "the first failure: {detail}"
    );
}

#[test]
fn a_digest_that_depends_on_the_unused_bits_is_a_finding() {
    let tmp = tempfile::tempdir().unwrap();
    finds(tmp.path(), "unused_bits", "unused_bits");
}

#[test]
fn a_refused_width_that_fills_its_own_bytes_is_a_finding() {
    let tmp = tempfile::tempdir().unwrap();
    let obj = finds(tmp.path(), "digest_len_refused_write", "digest_length");
    let (_, detail) = outcome(&obj, "digest_length");
    assert!(
        detail.contains("refused with -4, wrote its digest bytes"),
        "{detail}"
    );
}

/// Writing past the bytes of a width is a write past a buffer, whichever the width: it blocks
/// (until checks' version 2 this fixture was only a finding).
#[test]
fn a_write_past_the_bytes_of_an_unsupported_width_fails_digest_length() {
    fails("digest_len_write", "digest_length");
}

#[test]
fn a_reference_and_optimized_pair_that_disagree_at_a_long_length_fail_differential() {
    let tmp = tempfile::tempdir().unwrap();
    let src = fixtures().join("diverge");
    let (objects, text) = kat_json(
        tmp.path(),
        &["--src", src.to_str().unwrap(), "--no-baselines"],
    );
    assert_eq!(objects.len(), 2, "{text}");
    for obj in &objects {
        let (word, detail) = outcome(obj, "differential");
        assert_eq!(word, "fail", "{detail}\n{text}");
        // The KAT covers 1 MiB; the pair parts beyond it.
        assert!(evidence_bits(&detail) > 1 << 23, "{detail}");
        assert_eq!(obj["status"], "NONCONFORM", "{text}");
    }
}

/// Every outcome of every object is a pass, or a skip for want of an oracle or of `--full`.
fn all_pass(objects: &[Value], text: &str) {
    for obj in objects {
        for c in obj["conformance"].as_array().unwrap() {
            let word = c["outcome"].as_str().unwrap();
            let skip_ok = matches!(c["check"].as_str(), Some("differential" | "long_message"));
            assert!(
                word == "pass" || (word == "skipped" && skip_ok),
                "{} {}: {c}\n{text}",
                obj["label"],
                c["check"]
            );
        }
        assert_eq!(obj["conformance"].as_array().unwrap().len(), 11, "{obj}");
        assert_eq!(obj["status"], "PASS", "{obj}");
    }
}

#[test]
fn the_bundled_baselines_pass_every_check() {
    let tmp = tempfile::tempdir().unwrap();
    let labels = common::kat::BUNDLED;
    let (objects, text) = kat_json(tmp.path(), &labels);
    assert_eq!(objects.len(), labels.len(), "{text}");
    all_pass(&objects, &text);
}

#[test]
fn the_fixture_submissions_pass_every_check_and_their_pairs_agree() {
    let tmp = tempfile::tempdir().unwrap();
    let fixhash = common::build::submissions().join("fixhash");
    let (objects, text) = kat_json(
        tmp.path(),
        &["--src", fixhash.to_str().unwrap(), "--no-baselines"],
    );
    assert_eq!(objects.len(), 4, "{text}");
    all_pass(&objects, &text);
    for obj in &objects {
        assert_eq!(outcome(obj, "differential").0, "pass", "{obj}");
    }
    let tree = harness_tree(tmp.path(), "honest");
    let (objects, text) = kat_json(tmp.path(), &["--scan", tree.to_str().unwrap()]);
    all_pass(&objects, &text);
    let shared = common::build::submissions().join("sharedlib");
    let config = common::build::submissions().join("config.toml");
    let (objects, text) = kat_json(
        tmp.path(),
        &[
            "--config",
            config.to_str().unwrap(),
            "--src",
            shared.to_str().unwrap(),
            "--no-baselines",
        ],
    );
    assert!(!objects.is_empty(), "{text}");
    for obj in &objects {
        // The shared-lib fixture has no shipped KAT files: NOKAT, but conforming.
        for c in obj["conformance"].as_array().unwrap() {
            assert_ne!(c["outcome"], "fail", "{c}\n{text}");
            assert_ne!(c["outcome"], "finding", "{c}\n{text}");
        }
    }
}
