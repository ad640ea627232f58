//! A trial process still running far past what its plan expects is announced while it runs
//! (`TrialOverdue`), once the wait passes the threshold, and journalled for `watch`; a process
//! that ends in time is not. The scripted runner's timeout step is waited for up to its
//! deadline, which the plan now sets from its own estimate.

use std::time::Duration;

use super::script::{Scripted, Step};
use super::{request, run};
use crate::vocabulary::EngineEvent;

#[test]
fn a_process_waited_for_past_its_plan_is_announced_as_overdue() {
    let tmp = tempfile::tempdir().unwrap();
    let req = request(&tmp.path().join("run"), &[1024], None);
    let mut runner = Scripted::new(&[Step::Clean, Step::Timeout]);
    let ran = run(&req, &mut runner);
    let [rec] = ran.records.as_slice() else {
        panic!("one record, not {}", ran.records.len());
    };
    let plan = rec.plan;
    let overdue: Vec<_> = ran
        .events
        .iter()
        .filter_map(|e| match e {
            EngineEvent::TrialOverdue {
                trial,
                trials,
                elapsed,
                expected,
                ..
            } => Some((*trial, *trials, *elapsed, *expected)),
            _ => None,
        })
        .collect();
    // Only the second process (the one that hung), with the plan's figures.
    let [(trial, trials, elapsed, expected)] = overdue.as_slice() else {
        panic!("one overdue notice, not {overdue:?}");
    };
    assert_eq!((*trial, *trials), (2, 5));
    assert_eq!(
        *elapsed,
        Duration::from_secs_f64(plan.timeout_per_process_s)
    );
    let per_process = plan.estimated_s / f64::from(plan.trials);
    assert!(
        (expected.as_secs_f64() - per_process).abs() < 1e-9,
        "{plan:?}"
    );
    // The deadline comes from the plan: ten times its estimate, at least 5 s, not 300 s.
    assert!(
        (5.0..60.0).contains(&plan.timeout_per_process_s),
        "{plan:?}"
    );
    let journal = std::fs::read_to_string(req.run_dir.join("journal.jsonl")).unwrap();
    assert!(journal.contains("\"event\":\"trial_overdue\""), "{journal}");
}
