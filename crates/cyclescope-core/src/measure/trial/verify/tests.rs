//! Table-driven checks of the order and the outside checks, with made-up reports.

use super::*;
use crate::counter::CycleSource;
use crate::measure::trial::LoadStage;

fn spec(trials: u32, iterations: u64, sample_calls: u64) -> TrialSpec {
    TrialSpec {
        library: "lib.so".into(),
        warmups: 3,
        trials,
        sample_calls,
        ..crate::measure::one_call::spec(256, crate::plugin::Abi::Iccs, 1024, iterations)
    }
}

fn ready() -> TrialMessage {
    TrialMessage::Ready {
        meta_block: None,
        build_flags: None,
        baseline_rss_bytes: 1,
        cycle_source: CycleSource::Tsc,
        perf_unavailable: None,
        per_call_source: Some(CycleSource::Tsc),
        timer_overhead_ticks: 30,
        sandbox: None,
    }
}

fn trial(measurements: u64, seconds: f64, cycles: u64) -> TrialMessage {
    TrialMessage::Trial {
        measurements,
        nanoseconds: (seconds * 1e9) as u64,
        cycles,
        waited_ns: None,
        clock: None,
        digest: String::new(),
    }
}

fn done() -> TrialMessage {
    TrialMessage::Done { peak_rss_bytes: 1 }
}

fn first_refusal(spec: &TrialSpec, msgs: &[TrialMessage]) -> Option<String> {
    let mut o = TrialOrder::new(spec);
    msgs.iter()
        .map(|m| o.accept(m))
        .find_map(Result::err)
        .map(|t| t.0)
}

#[test]
fn the_workers_own_sequence_is_accepted() {
    let s = spec(2, 100, 10);
    let samples = TrialMessage::Samples { ticks: vec![5; 10] };
    let msgs = [
        ready(),
        trial(100, 0.1, 1),
        samples.clone(),
        trial(100, 0.1, 1),
        samples,
        done(),
    ];
    assert_eq!(first_refusal(&s, &msgs), None);
    assert_eq!(
        first_refusal(&s, &[ready(), TrialMessage::Overflow { buffer: None }]),
        None
    );
    let fault = TrialMessage::Cryptofail { rc: -1 };
    assert_eq!(first_refusal(&s, &[ready(), fault]), None);
    let error = TrialMessage::Error {
        stage: LoadStage::Load,
        detail: "no".into(),
    };
    assert_eq!(first_refusal(&s, &[error]), None);
}

#[test]
fn forged_or_reordered_messages_are_refused() {
    let s = spec(1, 100, 10);
    let cases: Vec<(&str, Vec<TrialMessage>)> = vec![
        ("trial before ready", vec![trial(100, 0.1, 1)]),
        ("second ready", vec![ready(), ready()]),
        ("wrong call count", vec![ready(), trial(20000, 0.1, 1)]),
        (
            "extra trial",
            vec![ready(), trial(100, 0.1, 1), trial(100, 0.1, 1)],
        ),
        ("done early", vec![ready(), done()]),
        (
            "after done",
            vec![ready(), trial(100, 0.1, 1), done(), done()],
        ),
        (
            "fault before ready",
            vec![TrialMessage::Cryptofail { rc: 1 }],
        ),
        (
            "too many samples",
            vec![
                ready(),
                trial(100, 0.1, 1),
                TrialMessage::Samples { ticks: vec![1; 11] },
            ],
        ),
    ];
    for (name, msgs) in cases {
        assert!(first_refusal(&s, &msgs).is_some(), "{name} was accepted");
    }
}

/// Asked for hardware instructions, a worker's cycles (the reference counter standing in) are
/// refused; not asked, a worker may not claim them.
#[test]
fn the_loop_counter_is_the_one_asked_for() {
    let ready_with = |source| TrialMessage::Ready {
        cycle_source: source,
        meta_block: None,
        build_flags: None,
        baseline_rss_bytes: 1,
        perf_unavailable: None,
        per_call_source: None,
        timer_overhead_ticks: 30,
        sandbox: None,
    };
    let asked = TrialSpec {
        hardware_instructions: true,
        ..spec(1, 100, 0)
    };
    let honest = [
        ready_with(CycleSource::PerfUserInstructions),
        trial(100, 0.1, 1),
        done(),
    ];
    assert_eq!(first_refusal(&asked, &honest), None);
    let refused = TrialMessage::InstructionsUnavailable {
        refusal: crate::measure::trial::PerfRefusal::Errno(2),
    };
    assert_eq!(first_refusal(&asked, &[refused]), None);
    for stand_in in [CycleSource::Tsc, CycleSource::PerfUserCycles] {
        let why = first_refusal(&asked, &[ready_with(stand_in)]).expect("refused");
        assert!(why.contains("perf_event:instructions:u"), "{why}");
    }
    let claimed = [ready_with(CycleSource::PerfUserInstructions)];
    assert!(first_refusal(&spec(1, 100, 0), &claimed).is_some());
}

fn t(measurements: u64, seconds: f64, cycles: u64) -> Trial {
    Trial {
        measurements,
        seconds,
        cycles,
    }
}

fn seen(wall_s: f64, cpu_s: Option<f64>, hz: Option<f64>) -> Observed {
    Observed {
        wall: Duration::from_secs_f64(wall_s),
        cpu: cpu_s.map(Duration::from_secs_f64),
        reference_hz: hz,
    }
}

#[test]
fn honest_figures_pass_the_outside_checks() {
    let s = spec(1, 20_000, 20_000);
    // 20 000 calls of 5 µs at 2.1 GHz: 0.1 s, in a process that lived and worked 0.3 s.
    let trials = [t(20_000, 0.1, 210_000_000)];
    assert_eq!(
        check_outside(&s, &trials, &seen(0.3, Some(0.25), Some(2.1e9))),
        Ok(())
    );
    // Core cycles (no reference rate): only the other checks apply.
    assert_eq!(
        check_outside(&s, &trials, &seen(0.3, Some(0.25), None)),
        Ok(())
    );
}

#[test]
fn forged_figures_fail_the_outside_checks() {
    let s = spec(1, 20_000, 20_000);
    // Ten cycles per call claimed, with a plausible-looking second: the rate gives it away.
    let forged = [t(20_000, 1.0, 200_000)];
    let e = check_outside(&s, &forged, &seen(1.2, Some(1.1), Some(2.1e9))).unwrap_err();
    assert!(e.0.contains("counter ticks at"), "{e:?}");
    // A second of calls in a process that lived 10 ms.
    let e = check_outside(&s, &forged, &seen(0.01, Some(0.005), None)).unwrap_err();
    assert!(e.0.contains("lived"), "{e:?}");
    // Consistent ten cycles per call (95 µs), in a process that burnt 8 s of CPU.
    let quick = [t(20_000, 200_000.0 / 2.1e9, 200_000)];
    let e = check_outside(&s, &quick, &seen(9.0, Some(8.0), Some(2.1e9))).unwrap_err();
    assert!(e.0.contains("CPU time"), "{e:?}");
}
