//! The interleaved A/B comparison with the scripted runner: the order the sides alternate in,
//! the ratio of what the script made B cost, the records each side gets, and the refusals.

use std::sync::atomic::AtomicBool;

use super::script::{Scripted, Step};
use super::{instance, request};
use crate::campaign::interleave::interleave_with;
use crate::campaign::{CampaignError, InterleaveOutcome, RunRequest};
use crate::measure::paired::PairedVerdict;
use crate::record::run_dir::list_records;

fn pair_request(dir: &std::path::Path, lengths: &[u64]) -> RunRequest {
    let mut req = request(dir, lengths, None);
    let mut b = instance();
    b.label = "pseudoXOF-512-O2".into();
    req.instances.push(b);
    req
}

fn interleave(req: &RunRequest, runner: &mut Scripted, pairs: u32) -> InterleaveOutcome {
    let cancel = runner.cancel.clone();
    interleave_with(req, runner, false, pairs, &mut |_| {}, &cancel)
        .expect("the scripted run completes")
}

#[test]
fn sides_alternate_a_b_then_b_a_and_the_ratio_is_what_b_cost() {
    let tmp = tempfile::tempdir().unwrap();
    let req = pair_request(&tmp.path().join("run"), &[64, 1024]);
    let mut runner = Scripted::new(&[]);
    // Twice the cycles in the same seconds: the scripted clock must not look slow (a slow
    // clock would be retried as a disturbance).
    runner.label_factor = Some(("pseudoXOF-512-O2".into(), 2.0));
    let out = interleave(&req, &mut runner, 4);
    let (a, b) = ("pseudoXOF-512", "pseudoXOF-512-O2");
    let one_length = [a, b, b, a, a, b, b, a];
    let expected: Vec<&str> = one_length.iter().chain(&one_length).copied().collect();
    assert_eq!(runner.order, expected);
    assert_eq!(
        runner.calibrations, 4,
        "one calibration per side and length"
    );
    assert_eq!(out.comparisons.len(), 2);
    for c in &out.comparisons {
        let r = c.ratio.expect("four pairs give a ratio");
        assert_eq!(r.pairs, 4);
        assert!((r.ratio - 2.0).abs() < 1e-3, "{r:?}");
        assert!(r.ci95_low <= r.ratio && r.ratio <= r.ci95_high);
        assert_eq!(r.verdict(), PairedVerdict::Slower);
        assert!(c.problem.is_none());
    }
    // Each side's trials are an ordinary record: four single-trial processes.
    let records = list_records(&req.run_dir);
    assert_eq!(records.len(), 4);
    for (_, r) in &records {
        assert_eq!((r.plan.trials, r.trials.len()), (4, 4), "{}", r.label);
        assert!(r.plan.separate_processes);
    }
    assert_eq!(out.run.finished, 4);
}

#[test]
fn a_crashing_side_stops_its_length_and_says_which() {
    let tmp = tempfile::tempdir().unwrap();
    let req = pair_request(&tmp.path().join("run"), &[64]);
    // A, B, B, then A crashes in the second pair.
    let mut runner = Scripted::new(&[Step::Clean, Step::Clean, Step::Clean, Step::Crash]);
    let out = interleave(&req, &mut runner, 5);
    let c = &out.comparisons[0];
    assert!(c.ratio.is_none(), "one pair is no interval");
    let problem = c.problem.as_deref().unwrap();
    assert!(
        problem.starts_with("pseudoXOF-512 @ 64 B failed") && problem.contains("CRASH"),
        "{problem}"
    );
    assert_eq!(runner.processes, 4);
    assert_eq!(out.run.failed, 1);
}

#[test]
fn anything_but_two_distinct_instances_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let cancel = AtomicBool::new(false);
    let mut same = request(&tmp.path().join("run"), &[64], None);
    same.instances.push(instance());
    let one = request(&tmp.path().join("run2"), &[64], None);
    for (req, words) in [(&same, "same instance"), (&one, "not 1")] {
        let err = interleave_with(req, &mut Scripted::new(&[]), false, 3, &mut |_| {}, &cancel)
            .unwrap_err();
        assert!(matches!(err, CampaignError::NotAPair(_)));
        assert!(err.to_string().contains(words), "{err}");
        assert!(
            !req.run_dir.exists(),
            "a refused comparison leaves no folder"
        );
    }
}
