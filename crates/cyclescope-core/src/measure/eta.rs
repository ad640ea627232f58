//! The one ETA every view shows (the workbench's progress, `run`'s status line, `watch
//! --lanes`): the plans' expected seconds of the work not done — for jobs not planned yet, the
//! mean expectation of those that are — times the pace the run has kept so far, shared out over
//! the lanes measuring side by side. The pace is learnt from every job that has started, the
//! running ones too: the wall seconds they have taken against the planned seconds of the work
//! they have done. A plan knows nothing of trials run again after a disturbance, of a trial
//! waiting for its CPU or of process start-up under load; all of them spend wall time without
//! advancing the work, so they slow the pace the moment they happen instead of once a job
//! ends. Until a little work is seen the pace leans on the plans (a prior of a twentieth of a
//! mean job at the plans' own pace), so the first instants of a job, mostly start-up, do not
//! read as a run many times slower than planned. Before any job is planned there is no ETA.
//! Pure arithmetic over what the views already hold.

/// What the ETA needs of one job of the run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobTime {
    /// The plan's expected seconds (None while not planned).
    pub estimated_s: Option<f64>,
    /// The share of the job done, 0 … 1 (1 once finished or failed; `share_done`).
    pub fraction_done: f64,
    /// Wall seconds the job has taken so far: since it started while it runs, all of them
    /// once it ended (None before it starts, or unknown).
    pub spent_s: Option<f64>,
}

/// The weight of the plans' own pace in the learnt pace, in mean planned jobs.
const PRIOR_JOBS: f64 = 0.05;

/// The share of a job done at trial `trial` of `trials` (1-based), `calls_done` of that
/// trial's `calls_total` calls in. Trials are alike: trial k of n, c of C calls in, is
/// (k − 1 + c / C) / n. A trial run again starts over from its own beginning, so its share
/// goes back while its time goes on.
pub fn share_done(trial: u32, trials: u32, calls_done: u64, calls_total: u64) -> f64 {
    let within = (calls_done as f64 / calls_total.max(1) as f64).min(1.0);
    ((f64::from(trial.saturating_sub(1)) + within) / f64::from(trials.max(1))).clamp(0.0, 1.0)
}

/// Wall seconds per planned second over the jobs that have started (1 = the plans' pace).
pub fn pace(jobs: &[JobTime]) -> Option<f64> {
    let planned: Vec<(f64, &JobTime)> = jobs
        .iter()
        .filter_map(|j| Some((j.estimated_s?, j)))
        .collect();
    if planned.is_empty() {
        return None;
    }
    let mean = planned.iter().map(|(e, _)| e).sum::<f64>() / planned.len() as f64;
    let (spent, done) = planned
        .iter()
        .filter_map(|(e, j)| Some((j.spent_s?, e * j.fraction_done.clamp(0.0, 1.0))))
        .fold((0.0, 0.0), |(a, b), (s, d)| (a + s.max(0.0), b + d));
    let prior = PRIOR_JOBS * mean;
    Some(if prior + done > 0.0 {
        (spent + prior) / (done + prior)
    } else {
        1.0
    })
}

/// Seconds left of a run of `total` jobs, `jobs` of which the view has seen, measured on
/// `lanes` CPUs at once.
pub fn seconds_left(jobs: &[JobTime], total: usize, lanes: usize) -> Option<f64> {
    let pace = pace(jobs)?;
    let planned: Vec<(f64, &JobTime)> = jobs
        .iter()
        .filter_map(|j| Some((j.estimated_s?, j)))
        .collect();
    let mean = planned.iter().map(|(e, _)| e).sum::<f64>() / planned.len() as f64;
    let left: f64 = planned
        .iter()
        .map(|(e, j)| e * (1.0 - j.fraction_done.clamp(0.0, 1.0)))
        .sum();
    let unplanned = total.saturating_sub(planned.len());
    Some((left + unplanned as f64 * mean) * pace / lanes.max(1) as f64)
}

#[cfg(test)]
mod tests;
