//! Plans sized from a disturbed calibration call, on a real loaded run's figures.

use super::*;

/// A job of a 5-trial plan sized from a calibration call of `t1` seconds, `calls` per trial
/// and three warm-ups, with 0.15 s of process set-up a trial (a loaded run's figures).
fn sized(label: &str, bytes: u64, calls: u64, t1: f64) -> JobTime {
    JobTime {
        estimated_s: Some(5.0 * (calls + 3) as f64 * t1 + 5.0 * 0.15),
        fraction_done: 0.0,
        spent_s: None,
        outside_s: None,
        started_at_s: None,
        call: Some(PlannedCall {
            instance: instance_id("iccs", label),
            input_bytes: bytes,
            t1_s: t1,
            timed_calls: 5.0 * (calls + 3) as f64,
        }),
    }
}

/// The same job ended: it started at `at` and took `wall` seconds, `outside` of them outside
/// its trials.
fn ended_at(j: JobTime, at: f64, wall: f64, outside: f64) -> JobTime {
    JobTime {
        fraction_done: 1.0,
        spent_s: Some(wall),
        outside_s: Some(outside),
        started_at_s: Some(at),
        ..j
    }
}

/// A plan sized to the trial target (1 s a trial) holds `calls` calls: its call took about
/// 1 / calls seconds.
fn sized_to_target(label: &str, bytes: u64, calls: u64) -> JobTime {
    sized(label, bytes, calls, 1.0 / (calls as f64 - 0.5))
}

#[test]
fn a_calibration_call_past_its_instances_other_lengths_is_counted_at_their_bound() {
    let x = "pseudohash-512";
    // 16 KiB in 165 µs; 8 KiB calibrated at 4.1 ms (preempted in its one call) and 64 KiB at
    // 4.7 ms: no faster than 16 KiB (twice its call at most), no slower than it per byte
    // (twice, four times the bytes).
    let jobs = [
        sized_to_target(x, 16384, 6077),
        sized_to_target(x, 8192, 243),
        sized_to_target(x, 65536, 211),
        sized_to_target("sm3hash-256", 8192, 243),
    ];
    let t16 = 1.0 / 6076.5;
    // 16 KiB itself is judged by the others too (no slower than twice 64 KiB's call): within.
    assert!(close(credible_call_s(&jobs[0], &jobs), 1.0 / 210.5 * 2.0));
    assert!(close(credible_call_s(&jobs[1], &jobs), t16 * 2.0));
    assert!(close(credible_call_s(&jobs[2], &jobs), t16 * 4.0 * 2.0));
    // Another instance's lengths say nothing of it; a job without a known call is taken as is.
    assert_eq!(credible_call_s(&jobs[3], &jobs), None);
    assert_eq!(credible_call_s(&job(Some(1.0), 0.0, None), &jobs), None);
    assert_eq!(disturbed_calls(&jobs), 2);
    // The 8 KiB plan's 5.8 s promise 5 × 246 calls of 4.1 ms; at the bound they take 0.4 s.
    let plans = credible_plans(&jobs);
    let cut = jobs[1].estimated_s.unwrap() - 5.0 * 246.0 * (1.0 / 242.5 - t16 * 2.0);
    assert!((plans[1].0 - cut).abs() < 1e-9 && cut < 1.2, "{cut}");
    assert_eq!(plans[0].0, jobs[0].estimated_s.unwrap());
}

#[test]
fn plans_of_disturbed_calibrations_do_not_double_the_last_quarter_of_a_loaded_run() {
    // A real default run (three instances and the reference, 8 lengths, 321 s) with a busy
    // loop on its CPU, three quarters in (240.9 s, 80.3 s truly left): the last jobs ended,
    // the one running, and the six left as its trace showed them. Three of those six were
    // calibrated by a preempted call (4.1 to 4.7 ms where their instance's 16 KiB took
    // 57 to 165 µs): their plans say 5.8 s each, and they took 0.6, 1.7 and 3.5 s.
    let (xof, sm3, ph, r) = (
        "pseudoXOF-512",
        "sm3hash-256",
        "pseudohash-512",
        "pseudoXOF-256",
    );
    let mut jobs = vec![
        ended_at(sized(xof, 4096, 20000, 33.1e-6), 91.6, 19.4, 0.1),
        ended_at(sized(sm3, 8192, 20000, 33.9e-6), 111.0, 17.2, 0.1),
        ended_at(sized(ph, 4096, 20000, 37.1e-6), 128.2, 19.4, 0.0),
        ended_at(sized(r, 16384, 20000, 37.1e-6), 147.6, 34.5, 1.2),
        ended_at(sized_to_target(xof, 16384, 7722), 182.1, 24.1, 0.1),
        ended_at(sized_to_target(xof, 8192, 15166), 206.2, 20.6, 0.1),
        JobTime {
            fraction_done: 0.96,
            spent_s: Some(14.1),
            outside_s: Some(0.0),
            started_at_s: Some(226.8),
            ..sized_to_target(r, 65536, 3523)
        },
        sized_to_target(sm3, 16384, 17624),
        sized_to_target(xof, 65536, 1950),
        sized_to_target(ph, 16384, 6077),
        sized_to_target(ph, 8192, 243),
        sized_to_target(sm3, 65536, 215),
        sized_to_target(ph, 65536, 211),
    ];
    // Counted at the bound, within 30 % (24 % long: the reference's 16 KiB job, at 7.5 times
    // its plan, is one of the last five ended and weighs by its plan; their median pace had
    // it 15 % long. The 16 KiB jobs left of pseudohash and sm3hash, whose instances ended at
    // 4 and 8 KiB, take their calls at those jobs' cost: 28 % long at the pace alone).
    let truth = 80.3;
    let eta = seconds_left(&jobs, jobs.len(), 1).expect("planned");
    assert!(
        (eta - truth).abs() / truth <= 0.3,
        "ETA {eta:.1} s, truly {truth} s left"
    );
    // The plans as they are, the calls unknown, put it 80 % long.
    for j in &mut jobs {
        j.call = None;
    }
    let taken_as_is = seconds_left(&jobs, jobs.len(), 1).expect("planned");
    assert!(taken_as_is > 1.6 * truth, "{taken_as_is:.1} s");
    eprintln!("ETA {eta:.1} s (plans as they are: {taken_as_is:.1} s), truly {truth} s left");
}
