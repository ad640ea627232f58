//! The pace of the last jobs that ended: their trials' wall seconds together over their planned
//! seconds together, so a long job counts for its plan, not as one vote.

use super::*;

/// A job of an `est` s plan that ended at `pace` times it, started at `at`.
fn ended(est: f64, pace: f64, at: f64) -> JobTime {
    JobTime {
        started_at_s: Some(at),
        ..job(Some(est), 1.0, Some(est * pace))
    }
}

#[test]
fn the_pace_follows_the_last_jobs_that_ended_when_the_run_slows() {
    // Six short jobs ended at twice their plans, then five longer ones at four times: the pace
    // is the recent jobs' four, not the run's mean.
    let mut jobs: Vec<JobTime> = (0..6).map(|i| ended(1.0, 2.0, f64::from(i))).collect();
    jobs.extend((6..11).map(|i| ended(5.0, 4.0, f64::from(i))));
    jobs.extend([job(Some(10.0), 0.0, None), job(Some(10.0), 0.0, None)]);
    assert!(close(pace(&jobs), 4.0));
    // Fewer than five ended: every started job counts, with the plans' prior.
    let few = [
        ended(1.0, 2.0, 0.0),
        ended(5.0, 4.0, 1.0),
        job(Some(10.0), 0.0, None),
    ];
    let p = pace(&few).unwrap();
    assert!(p < 3.8 && p > 3.0, "{p}");
}

#[test]
fn the_recent_jobs_count_by_their_plans_not_one_vote_each() {
    // The last five ended, as a loaded run has them: three short jobs at twice their plans,
    // two long ones at five times (their many trials more often run again). Two more long
    // jobs are left, and go as the long ones went.
    let mut jobs = vec![ended(0.5, 1.0, 0.0)];
    jobs.extend(
        [0.5, 0.5, 0.5]
            .iter()
            .zip(1..)
            .map(|(&e, i)| ended(e, 2.0, f64::from(i))),
    );
    jobs.extend([ended(4.0, 5.0, 4.0), ended(4.0, 5.0, 5.0)]);
    jobs.extend([job(Some(8.0), 0.0, None), job(Some(8.0), 0.0, None)]);
    // Their seconds together over their plans together: 43 s for 9.5 s (the median job's
    // pace would be 2).
    assert!(close(pace(&jobs), 43.0 / 9.5));
    let truth = 2.0 * 8.0 * 5.0;
    let eta = seconds_left(&jobs, jobs.len(), 1).expect("planned");
    assert!(
        (eta - truth).abs() / truth < 0.1,
        "ETA {eta:.1} s, truly {truth} s left"
    );
}

#[test]
fn a_lumpy_job_moves_the_pace_by_its_share_of_the_plans() {
    // Five alike plans, one job's trials all run again (14 times its plan, the others 6): it
    // moves the pace by a fifth of its excess, (4 × 6 + 14) / 5, where a median passed over it.
    let mut lumpy: Vec<JobTime> = (0..5)
        .map(|i| ended(5.0, if i == 3 { 14.0 } else { 6.0 }, f64::from(i)))
        .collect();
    lumpy.push(job(Some(10.0), 0.0, None));
    assert!(close(pace(&lumpy), 7.6));
    // A plan cut to nothing (its calibration call disturbed) promised no time: its job is
    // one of the last five ended (the first drops out), but its 3 s are not set against the
    // other four's plans.
    let mut cut = lumpy.clone();
    cut.insert(5, ended(0.0, 1.0, 5.0));
    cut[5].spent_s = Some(3.0);
    assert!(close(pace(&cut), (3.0 * 30.0 + 70.0) / 20.0));
}
