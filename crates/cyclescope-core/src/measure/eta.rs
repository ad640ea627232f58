//! The one ETA every view shows (the workbench's progress, `run`'s status line, `watch
//! --lanes`): the plans' expected seconds of the work not done — for jobs not planned yet, the
//! mean expectation of those that are — times the pace the run has kept lately, shared out over
//! the lanes measuring side by side. The pace is learnt from the recent jobs (the last few
//! ended, `RECENT_JOBS`; before they have, every started job, the running ones too): the wall
//! seconds they have taken together against the planned seconds of the work they have done. A plan
//! knows nothing of trials run again after a disturbance, of a trial waiting for its CPU or of
//! process start-up under load; all of them spend wall time without advancing the work, so
//! they slow the pace (early in a run the moment they happen, later once their job ends).
//! Until a little work is seen the pace leans on the plans (a prior of a twentieth of a
//! mean job at the plans' own pace), so the first instants of a job, mostly start-up, do not
//! read as a run many times slower than planned. Before any job is planned there is no ETA.
//! A job's time outside its trials (its worker's start, the known-answer check and reference
//! digest before the first trial reports, the probes and the record after the last) is no
//! plan's business and does not grow with it: it is kept out of the pace and learnt apart, as
//! the mean of what the ended jobs spent outside their trials, which every job not ended yet
//! still has to spend (less what it already has). A plan is sized from one cold calibration
//! call; on a loaded CPU that call is now and then preempted and reads 20 to 50 times its
//! length's true time, and the plan, sized to the trial target, promises seconds its few calls
//! never take (on a 321 s loaded run three such plans of 5.8 s each took 0.6 to 3.5 s, and
//! put the ETA 80 % long at three quarters). Where the other lengths of the same instance show
//! the call could not have taken that long (`credible_call_s`), the plan's calls are counted
//! at that bound. A job left of an instance that has ended at two lengths or more, near its
//! own, takes its calls at the cost per call those jobs ran at (`cost`), not its plan at the
//! pace: a short input's cold call overstates its calls more than a long one's, so the pace
//! of the short jobs that end first runs low for the long ones. Pure arithmetic over what
//! the views hold.

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
    /// Of `spent_s`, the wall seconds outside the job's trials (`TrialSpan::outside_s`; None
    /// where unknown, e.g. a journal without progress: all of it counts as trials' time).
    pub outside_s: Option<f64>,
    /// When the job started, on the view's clock (None before it starts, or unknown): which
    /// jobs are the recent ones.
    pub started_at_s: Option<f64>,
    /// The calibration call its plan was sized from (None where unknown: the plan is taken
    /// as it is).
    pub call: Option<PlannedCall>,
}

/// What a job's plan was sized from: its one cold calibration call (`JobPlanned::t1_s`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlannedCall {
    /// Which instance (`instance_id` of its candidate and label).
    pub instance: u64,
    pub input_bytes: u64,
    /// The calibration call's seconds.
    pub t1_s: f64,
    /// The calls the plan counts that time for: trials × (calls per trial + warm-ups).
    pub timed_calls: f64,
}

impl PlannedCall {
    pub fn new(job: &crate::vocabulary::JobKey, plan: &super::plan::TrialPlan, t1_s: f64) -> Self {
        Self {
            instance: instance_id(&job.candidate, &job.label),
            input_bytes: job.input_bytes,
            t1_s,
            timed_calls: f64::from(plan.trials) * (plan.iterations_per_trial + plan.warmups) as f64,
        }
    }
}

/// A number for an instance (its candidate and label), the same within one process.
pub fn instance_id(candidate: &str, label: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (candidate, label).hash(&mut h);
    h.finish()
}

/// How far a calibration call may stray from its instance's other lengths before it reads as
/// disturbed: a call takes no longer than this many times a longer input's, nor than this
/// many times a shorter input's scaled by the bytes.
pub const CALL_SLACK: f64 = 2.0;

/// When a view saw a job's trials report progress, to tell its time outside its trials.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct TrialSpan {
    /// The first progress: when, and the job's share done then.
    first: Option<(f64, f64)>,
    last: Option<f64>,
}

impl TrialSpan {
    /// A trial of the job reported progress at `at`, with `share` of the job done.
    pub fn progress(&mut self, at: f64, share: f64) {
        self.first.get_or_insert((at, share.clamp(0.0, 1.0)));
        self.last = Some(at);
    }

    /// Wall seconds of a job that started at `started`, planned for `planned_s`, outside its
    /// trials: until its first progress, less the plan's time of the work that progress
    /// reported (a trial reports once its loop has run), and once it `ended`, after its last
    /// progress; `now` while it runs.
    pub fn outside_s(&self, started: f64, ended: Option<f64>, now: f64, planned_s: f64) -> f64 {
        let until = ended.unwrap_or(now);
        let before = |(first, share): (f64, f64)| first - started - share * planned_s.max(0.0);
        let outside = match (self.first, self.last, ended) {
            (None, ..) => until - started,
            (Some(first), Some(last), Some(end)) => before(first).max(0.0) + (end - last),
            (Some(first), ..) => before(first),
        };
        outside.clamp(0.0, (until - started).max(0.0))
    }
}

/// The weight of the plans' own pace in the learnt pace, in mean planned jobs.
const PRIOR_JOBS: f64 = 0.05;

/// The ended jobs the pace is learnt from once that many have ended (the latest started): the
/// wall seconds of their trials together over their planned seconds together. A run measures
/// its short jobs first, and on a loaded CPU the long ones fall further behind their plans
/// (every trial run again, each slower): a pace over the whole run so far then lags. On a
/// 340 s default run of three bundled instances with a busy loop on its CPU, the pace of every
/// started job left the ETA 41 % short at a tenth of the run; that of the last three ended
/// jobs, 14 %. Five, as one job's pace is lumpy under load (its trials are run again 0, 1 or 2
/// times each): on a 575 s loaded run the jobs' paces ran from 2 to 14 around a typical 6.
/// Together, not the median of their paces: the seconds left are mostly long jobs', and the
/// longer of the recent jobs, further behind their plans, say most of how those go. The median
/// counts a short job on time as much as a long one late; on a 423 s loaded run it left the ETA
/// 35 % short at a tenth and 22 % at a quarter, the sum 12 % and 8 % (in replay). One lumpy job
/// among the five then moves the pace by its share of their plans.
pub const RECENT_JOBS: usize = 5;

/// The share of a job done from its `TrialProgress`: `calls_done` of its `calls_total` calls,
/// both the whole job's (the calls of the trials whose loops have ended, over all its
/// trials' calls). The trial number adds nothing: the ended trials are in `calls_done` already
/// (counting them again read up to 1 + 1/n of an n-trial job done). A process run again after
/// a disturbance starts over: its trials' calls leave `calls_done`, so the share goes back
/// while its time goes on.
pub fn share_done(calls_done: u64, calls_total: u64) -> f64 {
    (calls_done as f64 / calls_total.max(1) as f64).clamp(0.0, 1.0)
}

/// Wall seconds per planned second (1 = the plans' pace) over the recent jobs: the
/// `RECENT_JOBS` latest started of those ended together, or every started job together, the
/// running ones too, while fewer have ended (or their start is unknown). A running job is left
/// out once enough have ended: a trial run again takes its share of the job back while its
/// time goes on, so its pace swings by a trial at a time.
pub fn pace(jobs: &[JobTime]) -> Option<f64> {
    let planned = credible_plans(jobs);
    if planned.is_empty() {
        return None;
    }
    let mean = planned.iter().map(|(e, _)| e).sum::<f64>() / planned.len() as f64;
    let mut ended: Vec<f64> = planned
        .iter()
        .filter(|(_, j)| j.fraction_done >= 1.0 && j.spent_s.is_some())
        .filter_map(|(_, j)| j.started_at_s)
        .collect();
    ended.sort_by(f64::total_cmp);
    if ended.len() >= RECENT_JOBS {
        let since = ended[ended.len() - RECENT_JOBS];
        // A plan cut to nothing by its disturbed call promised no time to spend.
        let (spent, plans) = planned
            .iter()
            .filter(|(e, j)| {
                *e > 0.0 && j.fraction_done >= 1.0 && j.started_at_s.is_some_and(|s| s >= since)
            })
            .filter_map(|(e, j)| Some((trials_s(j)?, *e)))
            .fold((0.0, 0.0), |(a, b), (s, e)| (a + s, b + e));
        if plans > 0.0 {
            return Some(spent / plans);
        }
    }
    let (spent, done) = planned
        .iter()
        .filter_map(|(e, j)| Some((trials_s(j)?, e * j.fraction_done.clamp(0.0, 1.0))))
        .fold((0.0, 0.0), |(a, b), (s, d)| (a + s, b + d));
    let prior = PRIOR_JOBS * mean;
    Some(if prior + done > 0.0 {
        (spent + prior) / (done + prior)
    } else {
        1.0
    })
}

/// The planned jobs with their plans' seconds, each counted at the bound of its instance's
/// other lengths where its calibration call strays past it (`credible_call_s`).
fn credible_plans(jobs: &[JobTime]) -> Vec<(f64, &JobTime)> {
    jobs.iter()
        .filter_map(|j| {
            let planned = j.estimated_s?;
            let excess = match (j.call, credible_call_s(j, jobs)) {
                (Some(c), Some(bound)) => c.timed_calls * (c.t1_s - bound).max(0.0),
                _ => 0.0,
            };
            Some(((planned - excess).max(0.0), j))
        })
        .collect()
}

/// The most a job's calibration call can credibly have taken, from the other lengths of its
/// instance: a hash's call takes a fixed time plus one per byte, so it is no slower than a
/// longer input's call, nor slower than a shorter input's call scaled by the bytes, each with
/// `CALL_SLACK` for the noise of one cold call. A call past that was disturbed (preempted in
/// its one cold call under load: 4 ms for an 8 KiB call of 80 µs), and its plan, sized to the
/// trial target from it, holds a twentieth of the calls its seconds promise. None where the
/// job has no call known or no other length to judge it by.
pub fn credible_call_s(job: &JobTime, jobs: &[JobTime]) -> Option<f64> {
    let c = job.call?;
    jobs.iter()
        .filter_map(|o| o.call)
        .filter(|o| o.instance == c.instance && o.input_bytes != c.input_bytes && o.t1_s > 0.0)
        .map(|o| {
            let bytes = c.input_bytes as f64 / o.input_bytes.max(1) as f64;
            o.t1_s * bytes.max(1.0) * CALL_SLACK
        })
        .reduce(f64::min)
}

/// How many planned jobs' calibration calls stray past their instance's other lengths (their
/// plans counted at the bound).
pub fn disturbed_calls(jobs: &[JobTime]) -> usize {
    jobs.iter()
        .filter(|j| {
            j.estimated_s.is_some()
                && matches!((j.call, credible_call_s(j, jobs)), (Some(c), Some(b)) if c.t1_s > b)
        })
        .count()
}

/// Wall seconds a started job has spent in its trials.
fn trials_s(j: &JobTime) -> Option<f64> {
    let spent = j.spent_s?.max(0.0);
    Some((spent - j.outside_s.unwrap_or(0.0)).clamp(0.0, spent))
}

/// The mean wall seconds an ended job spent outside its trials (0 before one has ended).
pub fn outside_per_job(jobs: &[JobTime]) -> f64 {
    let ended: Vec<f64> = jobs
        .iter()
        .filter(|j| j.fraction_done >= 1.0 && j.spent_s.is_some())
        .filter_map(|j| j.outside_s)
        .collect();
    if ended.is_empty() {
        return 0.0;
    }
    ended.iter().sum::<f64>() / ended.len() as f64
}

/// Seconds left of a run of `total` jobs, `jobs` of which the view has seen, measured on
/// `lanes` CPUs at once.
/// A job left of an instance that has ended at other lengths takes its calls at that
/// instance's cost per call (`call_cost_s`); the others take their plans at the pace.
pub fn seconds_left(jobs: &[JobTime], total: usize, lanes: usize) -> Option<f64> {
    let pace = pace(jobs)?;
    let planned = credible_plans(jobs);
    let mean = planned.iter().map(|(e, _)| e).sum::<f64>() / planned.len() as f64;
    let (mut left, mut costed) = (0.0, 0.0);
    for (e, j) in &planned {
        let share = 1.0 - j.fraction_done.clamp(0.0, 1.0);
        if share <= 0.0 {
            continue;
        }
        match (j.call, call_cost_s(j, jobs)) {
            (Some(c), Some(cost)) => costed += share * c.timed_calls * cost,
            _ => left += share * e,
        }
    }
    let unplanned = total.saturating_sub(planned.len());
    // Every job not ended still spends the mean time outside trials, less what it has.
    let outside = outside_per_job(jobs);
    let outside_left: f64 = jobs
        .iter()
        .filter(|j| j.fraction_done < 1.0 || j.spent_s.is_none())
        .map(|j| (outside - j.outside_s.unwrap_or(0.0)).max(0.0))
        .sum::<f64>()
        + total.saturating_sub(jobs.len()) as f64 * outside;
    Some(((left + unplanned as f64 * mean) * pace + costed + outside_left) / lanes.max(1) as f64)
}

mod cost;
pub use cost::{COST_REACH, call_cost_s, costed_jobs};

#[cfg(test)]
mod tests;
