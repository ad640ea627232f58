//! The calibration call is re-run while it was disturbed, as a trial is: a plan sized from a
//! call that waited for the CPU would size every trial of its job wrong.

use super::script::{Scripted, Step};
use super::{request, run};

#[test]
fn a_preempted_calibration_is_called_again_and_the_third_attempt_counts() {
    for (steps, calibrations) in [
        (vec![], 1),
        (vec![Step::Preempted], 2),
        (vec![Step::SlowClock, Step::Clean], 2),
        (vec![Step::Preempted; 5], 3),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let req = request(&tmp.path().join("run"), &[32], None);
        let mut runner = Scripted::new(&[]);
        runner.calibration_steps = steps.iter().copied().collect();
        let ran = run(&req, &mut runner);
        assert_eq!(runner.calibrations, calibrations, "{steps:?}");
        assert_eq!(ran.outcome.finished, 1, "{steps:?}: the job is measured");
        assert_eq!(runner.processes, 5, "{steps:?}");
    }
}
