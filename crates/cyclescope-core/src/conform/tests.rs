//! Unit tests of the checks' names, outcomes, grades and how they read.

use super::*;

fn ev() -> Evidence {
    Evidence {
        bits: 1000,
        offset: Some(-3),
        byte: Some((0x12, 0x00)),
        what: "the 16 bytes before the digest".into(),
    }
}

#[test]
fn names_round_trip_and_follow_the_issue() {
    let names: Vec<&str> = Check::all().iter().map(|c| c.name()).collect();
    assert_eq!(names.len(), 11);
    for c in Check::all() {
        assert_eq!(Check::from_name(c.name()), Some(c));
        assert_eq!(serde_json::to_value(c).unwrap(), c.name());
    }
    for c in [Check::UnusedBits, Check::DigestLength] {
        assert!(c.grades().contains(&Grade::OutOfDomain), "{c}");
        assert_eq!(c.death_grade(), Grade::OutOfDomain, "{c}");
    }
    for c in [Check::OverRead, Check::OutputBounds, Check::Determinism] {
        assert_eq!(c.grades(), &[Grade::Blocking], "{c}");
        assert_eq!(c.death_grade(), Grade::Blocking, "{c}");
    }
}

#[test]
fn a_failure_reads_with_its_evidence_on_one_log_line() {
    let r = CheckResult::new(Check::OutputBounds, Outcome::Fail { evidence: ev() });
    assert_eq!(
        r.log_line(),
        "conform  output_bounds fail the 16 bytes before the digest at 1000 bits, byte offset -3: 0x12 expected, 0x00 found"
    );
    assert_eq!(r.to_json()["outcome"], "fail");
    let json = serde_json::to_string(&r).unwrap();
    assert_eq!(serde_json::from_str::<CheckResult>(&json).unwrap(), r);
    let mut hostile = ev();
    hostile.what = "x\nRESULT a b PASS ".into();
    let r = CheckResult::new(Check::Alignment, Outcome::Finding { evidence: hostile });
    assert_eq!(r.log_line().lines().count(), 1);
}

#[test]
fn the_summary_names_what_did_not_pass() {
    let rs = vec![
        CheckResult::new(Check::InputUnchanged, Outcome::Pass),
        CheckResult::new(Check::Alignment, Outcome::Fail { evidence: ev() }),
        CheckResult::new(Check::UnusedBits, Outcome::Finding { evidence: ev() }),
        CheckResult::new(
            Check::LongMessage,
            Outcome::Skipped {
                why: "opt-in".into(),
            },
        ),
    ];
    assert_eq!(
        summary(&rs),
        "1 pass, 1 failed (alignment), 1 finding (unused_bits), 1 skipped (long_message)"
    );
    assert_eq!(first_failure(&rs).unwrap().check, Check::Alignment);
    let mut later = rs.clone();
    later.insert(
        0,
        CheckResult::new(Check::OverRead, Outcome::Fail { evidence: ev() }),
    );
    assert_eq!(
        first_failure(&later).unwrap().check,
        Check::Alignment,
        "in run order"
    );
}

#[test]
fn findings_are_kept_apart_from_failures_and_noted_beside_the_verdict() {
    let rs = vec![
        CheckResult::new(Check::DigestLength, Outcome::Finding { evidence: ev() }),
        CheckResult::new(Check::OutputBounds, Outcome::Fail { evidence: ev() }),
        CheckResult::new(Check::UnusedBits, Outcome::Finding { evidence: ev() }),
    ];
    let found: Vec<Check> = findings(&rs).iter().map(|r| r.check).collect();
    assert_eq!(found, [Check::UnusedBits, Check::DigestLength], "run order");
    assert!(!rs[0].is_failure() && rs[0].is_finding() && rs[1].is_failure());
    assert_eq!(
        findings_note(&rs[..1]).unwrap(),
        "finding, not blocking: digest_length: the 16 bytes before the digest at 1000 bits, \
         byte offset -3: 0x12 expected, 0x00 found"
    );
    assert!(
        findings_note(&rs)
            .unwrap()
            .starts_with("findings, not blocking: digest_length: ")
    );
    assert_eq!(findings_note(&rs[1..2]), None, "a failure is no finding");
    assert_eq!(Outcome::Pass.grade(), None);
    assert_eq!(
        Outcome::graded(Grade::OutOfDomain, ev()),
        Outcome::Finding { evidence: ev() }
    );
}
