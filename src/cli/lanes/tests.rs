//! The lanes' text and the ETA they show, folded from engine events.

use super::*;

fn key(label: &str, bytes: u64) -> JobKey {
    JobKey {
        candidate: "iccs".into(),
        label: label.into(),
        input_bytes: bytes,
    }
}

#[test]
fn lanes_follow_their_jobs_and_the_eta_is_the_plans_at_the_pace_of_started_jobs() {
    let mut b = Board::default();
    b.apply(
        &EngineEvent::RunStarted {
            run_dir: "r".into(),
            labels: vec!["a".into(), "b".into()],
            lengths: vec![32, 64],
            cpus: vec![0, 1],
            reference_jobs: Vec::new(),
        },
        0.0,
    );
    assert!(b.lines(0.0)[2].contains("ETA once a job is planned"));
    let plan = |s: f64| -> crate::measure::plan::TrialPlan {
        serde_json::from_value(serde_json::json!({
            "iterations_per_trial": 25, "warmups": 3, "trials": 4,
            "separate_processes": true, "estimated_s": s, "timeout_per_process_s": 10.0
        }))
        .unwrap()
    };
    for (label, bytes) in [("a", 32), ("b", 32), ("a", 64), ("b", 64)] {
        b.apply(
            &EngineEvent::JobPlanned {
                job: key(label, bytes),
                plan: plan(1.0),
                t1_s: 0.0,
            },
            0.0,
        );
    }
    let progress = |label: &str, trial: u32, calls_done: u64| {
        progress_event(key(label, 32), trial, 4, calls_done)
    };
    b.apply(
        &EngineEvent::JobStarted {
            job: key("a", 32),
            cpu: Some(0),
        },
        0.0,
    );
    // Both jobs' trials report from their start (no time outside them).
    b.apply(&progress("a", 1, 0), 0.0);
    b.apply(
        &EngineEvent::JobStarted {
            job: key("b", 32),
            cpu: Some(1),
        },
        0.5,
    );
    b.apply(&progress("b", 1, 0), 0.5);
    b.apply(&progress("a", 2, 25), 2.0);
    b.apply(
        &EngineEvent::JobFailed {
            job: key("a", 32),
            reason: crate::vocabulary::JobFailure::new(crate::vocabulary::FailureKind::Crash, "x"),
            stderr_tail: String::new(),
            record: None,
        },
        2.0,
    );
    // The running job is half done (trial 3 of 4 running, two trials' calls in) after 2 s.
    b.apply(&progress("b", 3, 50), 2.5);
    let lines = b.lines(2.5);
    assert!(lines[0].starts_with("CPU 0   idle  (1 done)"), "{lines:?}");
    assert!(lines[1].contains("b @ 32"), "{lines:?}");
    assert!(lines[1].contains("2.0 s"), "{lines:?}");
    // Plans of 1 s each: the ended job took 2 s for its plan, the running one 2 s for half
    // of its: with the prior (a twentieth of a plan) the pace is 4.05 / 1.55; 2.5 planned
    // seconds left at that pace over 2 lanes: 3.3 s.
    assert!(lines[2].starts_with("jobs 1/4 done (1 failed"), "{lines:?}");
    assert!(
        lines[2].contains("ETA 3 s (the plans × 2.61, the pace of 2 started job(s); 2 lane(s))"),
        "{lines:?}"
    );
}

#[test]
fn a_jobs_time_outside_its_trials_is_added_per_job_not_multiplied() {
    let mut b = Board::default();
    b.apply(
        &EngineEvent::RunStarted {
            run_dir: "r".into(),
            labels: vec!["a".into()],
            lengths: vec![32, 64],
            cpus: vec![0],
            reference_jobs: Vec::new(),
        },
        0.0,
    );
    let plan: crate::measure::plan::TrialPlan = serde_json::from_value(serde_json::json!({
        "iterations_per_trial": 1000, "warmups": 3, "trials": 1,
        "separate_processes": true, "estimated_s": 1.0, "timeout_per_process_s": 10.0
    }))
    .unwrap();
    for bytes in [32, 64] {
        let job = key("a", bytes);
        b.apply(
            &EngineEvent::JobPlanned {
                job,
                plan,
                t1_s: 0.0,
            },
            0.0,
        );
    }
    let job = key("a", 32);
    let progress = |calls_done: u64| progress_event(key("a", 32), 1, 1, calls_done);
    let cpu = Some(0);
    b.apply(
        &EngineEvent::JobStarted {
            job: job.clone(),
            cpu,
        },
        0.0,
    );
    // 1 s before its trials, its 1 s plan kept, 0.5 s after them.
    b.apply(&progress(0), 1.0);
    b.apply(&progress(100), 2.0);
    let reason = crate::vocabulary::JobFailure::new(crate::vocabulary::FailureKind::Crash, "x");
    let (stderr_tail, record) = (String::new(), None);
    b.apply(
        &EngineEvent::JobFailed {
            job,
            reason,
            stderr_tail,
            record,
        },
        2.5,
    );
    // The next job: its 1 s plan at the plans' pace, and 1.5 s outside its trials (not
    // 2.5 × its plan); the line names both.
    let eta = b.eta_s(2.5).expect("planned");
    assert!((eta - 2.5).abs() < 1e-9, "{eta}");
    let lines = b.lines(2.5);
    assert!(
        lines[1].contains("(the plans × 1.00, 1.5 s a job outside its trials, the pace of 1"),
        "{lines:?}"
    );
}

/// Trial `trial` of `trials` of `job` running, `calls_done` of the job's 100 calls in.
fn progress_event(job: JobKey, trial: u32, trials: u32, calls_done: u64) -> EngineEvent {
    EngineEvent::TrialProgress {
        job,
        trial,
        trials,
        calls_done,
        calls_total: 100,
        snapshot: crate::vocabulary::HistogramSnapshot {
            histogram: std::sync::Arc::new(hdrhistogram::Histogram::new(3).unwrap()),
            per_call: None,
            loop_mean_cycles: None,
            timer_overhead_ticks: 0.0,
            per_call_source: "tsc".into(),
        },
    }
}

#[test]
fn a_job_left_of_an_instance_ended_at_two_lengths_takes_its_calls_at_their_cost() {
    let mut b = Board::default();
    b.apply(
        &EngineEvent::RunStarted {
            run_dir: "r".into(),
            labels: vec!["a".into()],
            lengths: vec![32, 64, 128],
            cpus: vec![0],
            reference_jobs: Vec::new(),
        },
        0.0,
    );
    // Plans of 1 s for 1 003 calls each, as a short input's cold call would size them.
    let plan: crate::measure::plan::TrialPlan = serde_json::from_value(serde_json::json!({
        "iterations_per_trial": 1000, "warmups": 3, "trials": 1,
        "separate_processes": true, "estimated_s": 1.0, "timeout_per_process_s": 10.0
    }))
    .unwrap();
    for bytes in [32, 64, 128] {
        let job = key("a", bytes);
        let t1_s = 1.0 / 1003.0;
        b.apply(&EngineEvent::JobPlanned { job, plan, t1_s }, 0.0);
    }
    // 32 B took 1 ms a call, 64 B 2 ms, all of it in their trials.
    let mut at = 0.0;
    for (bytes, call_s) in [(32, 1e-3), (64, 2e-3)] {
        let job = key("a", bytes);
        let cpu = Some(0);
        b.apply(
            &EngineEvent::JobStarted {
                job: job.clone(),
                cpu,
            },
            at,
        );
        b.apply(&progress_event(job.clone(), 1, 1, 0), at);
        at += 1003.0 * call_s;
        b.apply(&progress_event(job.clone(), 1, 1, 100), at);
        let reason = crate::vocabulary::JobFailure::new(crate::vocabulary::FailureKind::Crash, "x");
        let (stderr_tail, record) = (String::new(), None);
        let failed = EngineEvent::JobFailed {
            job,
            reason,
            stderr_tail,
            record,
        };
        b.apply(&failed, at);
    }
    // 128 B on that line: 4 ms a call, 4.012 s, where its plan at the pace says 1.5 s.
    let eta = b.eta_s(at).expect("planned");
    assert!((eta - 4.012).abs() < 1e-9, "{eta}");
    let lines = b.lines(at);
    assert!(
        lines[1].contains("ETA 4 s (the plans × 1.49, 1 job(s) at their instance's cost per call"),
        "{lines:?}"
    );
}
