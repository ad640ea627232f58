//! The one ETA every view shows (the workbench's progress, `run`'s status line, `watch
//! --lanes`): the plans' expected seconds of the work not done — for jobs not planned yet, the
//! mean expectation of those that are — corrected by how long the finished jobs really took
//! against their plans (process start-up, retries and a busy host are not in a plan), shared
//! out over the lanes measuring side by side. Before any job is planned there is no ETA; before
//! any finished, the plans stand uncorrected. Pure arithmetic over what the views already hold.

/// What the ETA needs of one job of the run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobTime {
    /// The plan's expected seconds (None while not planned).
    pub estimated_s: Option<f64>,
    /// The share of the job done, 0 … 1 (1 once finished or failed).
    pub fraction_done: f64,
    /// Wall seconds the finished job took (None while not finished, or unknown).
    pub took_s: Option<f64>,
}

/// Seconds left of a run of `total` jobs, `jobs` of which the view has seen, measured on
/// `lanes` CPUs at once.
pub fn seconds_left(jobs: &[JobTime], total: usize, lanes: usize) -> Option<f64> {
    let planned: Vec<(f64, &JobTime)> = jobs
        .iter()
        .filter_map(|j| Some((j.estimated_s?, j)))
        .collect();
    if planned.is_empty() {
        return None;
    }
    let mean = planned.iter().map(|(e, _)| e).sum::<f64>() / planned.len() as f64;
    let left: f64 = planned
        .iter()
        .map(|(e, j)| e * (1.0 - j.fraction_done.clamp(0.0, 1.0)))
        .sum();
    let unplanned = total.saturating_sub(planned.len());
    let (took, est) = planned
        .iter()
        .filter_map(|(e, j)| Some((j.took_s?, *e)))
        .fold((0.0, 0.0), |(a, b), (t, e)| (a + t, b + e));
    let factor = if took > 0.0 && est > 0.0 {
        took / est
    } else {
        1.0
    };
    Some((left + unplanned as f64 * mean) * factor / lanes.max(1) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(est: Option<f64>, done: f64, took: Option<f64>) -> JobTime {
        JobTime {
            estimated_s: est,
            fraction_done: done,
            took_s: took,
        }
    }

    #[test]
    fn the_plans_left_corrected_by_what_finished_jobs_took_over_the_lanes() {
        assert_eq!(seconds_left(&[], 4, 1), None, "nothing planned yet");
        // Plans alone: 2 s each, one half done, two jobs not planned yet (2 s each).
        let jobs = [job(Some(2.0), 0.5, None), job(Some(2.0), 0.0, None)];
        assert_eq!(seconds_left(&jobs, 4, 1), Some(7.0));
        // A finished job took 3 s for a 2 s plan: everything left takes 1.5 × its plan.
        let jobs = [job(Some(2.0), 1.0, Some(3.0)), job(Some(2.0), 0.0, None)];
        assert_eq!(seconds_left(&jobs, 4, 1), Some(9.0));
        // Two lanes share it.
        assert_eq!(seconds_left(&jobs, 4, 2), Some(4.5));
    }

    #[test]
    fn an_early_short_job_does_not_make_a_long_run_look_short() {
        // The case: 16 jobs, the first finished quickly; the plans know the rest are
        // longer, which a mean of finished job times cannot.
        let mut jobs = vec![job(Some(0.5), 1.0, Some(0.5))];
        jobs.extend((0..15).map(|_| job(Some(2.0), 0.0, None)));
        assert_eq!(seconds_left(&jobs, 16, 1), Some(30.0));
    }
}
