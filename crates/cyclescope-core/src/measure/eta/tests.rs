use super::*;

mod calibration;
mod cost;
mod pace;

fn job(est: Option<f64>, done: f64, spent: Option<f64>) -> JobTime {
    JobTime {
        estimated_s: est,
        fraction_done: done,
        spent_s: spent,
        outside_s: None,
        started_at_s: None,
        call: None,
    }
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

#[test]
fn the_plans_left_at_the_pace_seen_over_the_lanes() {
    assert_eq!(seconds_left(&[], 4, 1), None, "nothing planned yet");
    // Plans alone: 2 s each, none started, two jobs not planned yet (2 s each).
    let jobs = [job(Some(2.0), 0.0, None), job(Some(2.0), 0.0, None)];
    assert!(close(seconds_left(&jobs, 4, 1), 8.0));
    // A finished job took 3 s for a 2 s plan: with the prior (a tenth of a second at the
    // plans' pace) the pace is 3.1 / 2.1, and the 6 planned seconds left take that much more.
    let jobs = [job(Some(2.0), 1.0, Some(3.0)), job(Some(2.0), 0.0, None)];
    assert!(close(pace(&jobs), 3.1 / 2.1));
    assert!(close(seconds_left(&jobs, 4, 1), 6.0 * 3.1 / 2.1));
    // Two lanes share it.
    assert!(close(seconds_left(&jobs, 4, 2), 3.0 * 3.1 / 2.1));
}

#[test]
fn a_running_job_teaches_the_pace_before_it_ends() {
    // Half of a 2 s plan done in 2 s: the run goes at about twice the plans' time already.
    let jobs = [job(Some(2.0), 0.5, Some(2.0)), job(Some(2.0), 0.0, None)];
    assert!(close(pace(&jobs), 2.1 / 1.1));
    // Its first instants (start-up, no calls reported yet) do not multiply the run.
    let jobs = [job(Some(2.0), 0.0, Some(0.02)), job(Some(2.0), 0.0, None)];
    assert!(pace(&jobs).is_some_and(|p| p < 1.25), "{:?}", pace(&jobs));
}

#[test]
fn an_early_short_job_does_not_make_a_long_run_look_short() {
    // 16 jobs, the first finished at its plan; the plans know the rest are longer, which a
    // mean of finished job times cannot.
    let mut jobs = vec![job(Some(0.5), 1.0, Some(0.5))];
    jobs.extend((0..15).map(|_| job(Some(2.0), 0.0, None)));
    assert!(close(seconds_left(&jobs, 16, 1), 30.0));
}

#[test]
fn share_done_reads_the_calls_of_the_whole_job_the_worker_reports() {
    // What `campaign::measure` sends for a job of 4 trials of 100 calls: the running trial's
    // number, the calls of the trials whose loops have ended (the whole job's), and the
    // job's calls in all. Trial 3 running after two ended is half the job, not 5/8.
    for (trial, calls_done, share) in [(1, 0, 0.0), (2, 100, 0.25), (3, 200, 0.5), (4, 300, 0.75)] {
        assert_eq!(share_done(calls_done, 400), share, "trial {trial}");
    }
    // The last loop ended: the trial number stays at the last, the job is done.
    assert_eq!(share_done(400, 400), 1.0);
    // No calls known yet (a job just started): nothing done.
    assert_eq!(share_done(0, 0), 0.0);
}

/// A scripted loaded run, as a view sees it: the events' times folded into `JobTime`s.
struct LoadedRun {
    /// Per job in order: its plan's seconds and its trials.
    plans: Vec<(f64, u32)>,
    /// Each trial's wall time against its planned share (preemption under load).
    slowdown: f64,
    /// How often every trial is run (2: each one disturbed and run again once).
    runs_per_trial: u32,
}

impl LoadedRun {
    /// The views' `JobTime`s at `t` seconds, with the run's total wall time.
    fn at(&self, t: f64) -> (Vec<JobTime>, f64) {
        let mut clock = 0.0;
        let mut jobs = Vec::new();
        for &(est, trials) in &self.plans {
            let trial_s = est / f64::from(trials) * self.slowdown;
            let job_s = trial_s * f64::from(trials * self.runs_per_trial);
            let start = clock;
            clock += job_s;
            let (done, spent) = if t >= clock {
                (1.0, Some(job_s))
            } else if t > start {
                // Which run of which trial is going on, and how far into it: the job's calls
                // are those of the trials before it and of this run so far (finer than a
                // worker, which reports a trial's calls once its loop has run).
                let into = t - start;
                let run = (into / trial_s).floor();
                let before = (run / f64::from(self.runs_per_trial)).floor() as u64;
                let calls = before * 1000 + ((into - run * trial_s) / trial_s * 1000.0) as u64;
                (share_done(calls, 1000 * u64::from(trials)), Some(into))
            } else {
                (0.0, None)
            };
            jobs.push(JobTime {
                started_at_s: (t > start).then_some(start),
                ..job(Some(est), done, spent)
            });
        }
        (jobs, clock)
    }
}

#[test]
fn a_loaded_run_whose_trials_all_run_twice_is_not_promised_in_half_the_time() {
    // Two instances × four lengths, cheapest first as a lane measures them; under a busy loop
    // every trial runs 1.2 × its plan and is disturbed and run again once (2.4 × the plans).
    let plans: Vec<(f64, u32)> = [0.5, 1.0, 2.0, 4.0, 0.5, 1.0, 2.0, 4.0]
        .iter()
        .map(|&s| (s, 5))
        .collect();
    let run = LoadedRun {
        plans,
        slowdown: 1.2,
        runs_per_trial: 2,
    };
    let (_, total) = run.at(0.0);
    let first_job = 0.5 * 1.2 * 2.0;
    let mut worst: f64 = 0.0;
    // Once a trial has been run again (within the first tenth of the first, cheapest job) no
    // ETA is more than 1.6 × optimistic (the plans alone: 2.4 ×); from the end of the first
    // job on, every ETA is within 25 % of the time truly left (judged while a tenth of the run
    // is still left: a trial about to be run again is a large share of a few seconds).
    let mut t = 0.5 / 5.0 * 1.2 * 1.5;
    while t < total * 0.9 {
        let (jobs, _) = run.at(t);
        let eta = seconds_left(&jobs, jobs.len(), 1).expect("planned");
        let truth = total - t;
        let said = format!("at {t:.2} s of {total:.1} s: ETA {eta:.1} s, truly {truth:.1} s left");
        assert!(eta >= truth / 1.6, "{said}");
        if t >= first_job {
            let error = (eta - truth).abs() / truth;
            assert!(error <= 0.25, "{said}");
            worst = worst.max(error);
        }
        t += total / 500.0;
    }
    eprintln!(
        "worst ETA error after the first job: {:.0} %",
        worst * 100.0
    );
}

/// A scripted run as a view sees its events: per job `JobStarted`, a `TrialProgress` every
/// 66 ms of its trials, `JobFinished`; before its trials the job spends `before_s` (worker
/// start, known-answer check, reference digest), after them `after_s` (probes, record).
struct GappedRun {
    /// Per job in order, its plan's seconds (its trials take exactly that).
    plans: Vec<f64>,
    before_s: f64,
    after_s: f64,
}

impl GappedRun {
    fn total(&self) -> f64 {
        self.plans
            .iter()
            .map(|p| p + self.before_s + self.after_s)
            .sum()
    }

    /// The views' `JobTime`s at `t`, folded from the events sent up to then.
    fn at(&self, t: f64) -> Vec<JobTime> {
        let mut clock = 0.0;
        let mut jobs = Vec::new();
        for &est in &self.plans {
            let start = clock;
            let trials_from = start + self.before_s;
            let end = trials_from + est + self.after_s;
            clock = end;
            if t < start {
                jobs.push(JobTime {
                    estimated_s: Some(est),
                    fraction_done: 0.0,
                    spent_s: None,
                    outside_s: None,
                    started_at_s: None,
                    call: None,
                });
                continue;
            }
            let mut span = TrialSpan::default();
            let mut done = 0.0;
            let mut at = trials_from;
            while at <= (trials_from + est).min(t) {
                done = (at - trials_from) / est;
                span.progress(at, done);
                at += 0.066;
            }
            let ended = (t >= end).then_some(end);
            jobs.push(JobTime {
                estimated_s: Some(est),
                fraction_done: if ended.is_some() { 1.0 } else { done },
                spent_s: Some(ended.unwrap_or(t) - start),
                outside_s: Some(span.outside_s(start, ended, t, est)),
                started_at_s: Some(start),
                call: None,
            });
        }
        jobs
    }
}

#[test]
fn the_time_between_trials_of_jobs_is_learnt_apart_from_the_pace() {
    // Eight jobs cheapest first, 15 planned seconds, run at their plans; every job spends
    // 0.5 s before its trials and 0.3 s after them: 6.4 s of 21.4 s (30 %) outside trials.
    let mut plans = vec![0.5, 0.5, 1.0, 1.0, 2.0, 2.0, 4.0, 4.0];
    plans.sort_by(f64::total_cmp);
    let run = GappedRun {
        plans,
        before_s: 0.5,
        after_s: 0.3,
    };
    let total = run.total();
    let outside = 8.0 * 0.8 / total;
    assert!((outside - 0.3).abs() < 0.01, "{outside}");
    let first_job = 0.5 + 0.5 + 0.3;
    let (mut worst, mut worst_unsplit): (f64, f64) = (0.0, 0.0);
    let mut t = first_job;
    while t < total * 0.9 {
        let jobs = run.at(t);
        let truth = total - t;
        let eta = seconds_left(&jobs, jobs.len(), 1).expect("planned");
        let error = (eta - truth).abs() / truth;
        assert!(
            error <= 0.25,
            "at {t:.2} s of {total:.1} s: ETA {eta:.1} s, truly {truth:.1} s left"
        );
        worst = worst.max(error);
        // The same events with the time outside trials counted in the pace, as before.
        let unsplit: Vec<JobTime> = jobs
            .iter()
            .map(|j| JobTime {
                outside_s: None,
                ..*j
            })
            .collect();
        let eta = seconds_left(&unsplit, jobs.len(), 1).expect("planned");
        worst_unsplit = worst_unsplit.max((eta - truth).abs() / truth);
        t += total / 500.0;
    }
    assert!(
        worst_unsplit > 0.25,
        "the script shows nothing: {worst_unsplit}"
    );
    eprintln!(
        "worst ETA error after the first job: {:.0} % (in the pace: {:.0} %)",
        worst * 100.0,
        worst_unsplit * 100.0
    );
}

#[test]
fn a_job_outside_its_trials_counts_until_its_first_progress_and_after_its_last() {
    let mut span = TrialSpan::default();
    // No progress yet: all of its time so far.
    assert_eq!(span.outside_s(10.0, None, 10.5, 4.0), 0.5);
    // Its first progress reports a quarter of a 4 s plan done: the plan's second of it was
    // spent in trials.
    span.progress(12.0, 0.25);
    span.progress(13.0, 0.5);
    // Running: only the time before its trials.
    assert_eq!(span.outside_s(10.0, None, 14.0, 4.0), 1.0);
    // Ended: before the first progress and after the last.
    assert_eq!(span.outside_s(10.0, Some(13.5), 14.0, 4.0), 1.5);
    // A first progress that reports more work than the plan gives its time is all trials.
    let mut quick = TrialSpan::default();
    quick.progress(10.5, 0.5);
    assert_eq!(quick.outside_s(10.0, None, 11.0, 4.0), 0.0);
    // A finished job outside 1 s of its 2: only its trials' second teaches the pace, and the
    // job not started yet still has that second to spend.
    let jobs = [
        JobTime {
            estimated_s: Some(1.0),
            fraction_done: 1.0,
            spent_s: Some(2.0),
            outside_s: Some(1.0),
            started_at_s: Some(0.0),
            call: None,
        },
        job(Some(1.0), 0.0, None),
    ];
    assert!(close(pace(&jobs), 1.0));
    assert!(close(seconds_left(&jobs, 2, 1), 2.0));
}
