//! The clock of scripted trials: each trial's clock witness is reported live and stored with
//! its record, and a run without a witness says so once and keeps why.

use super::*;

#[test]
fn the_clock_of_scripted_trials_is_the_fixture_clock() {
    // Guards the other tests: a clean trial must pass the slow-clock test on this fixture.
    let tmp = tempfile::tempdir().unwrap();
    let req = request(&tmp.path().join("run"), &[32], None);
    let host =
        crate::campaign::host_gate::HostGate::check(&req.host_root, req.cpu(), None).unwrap();
    assert_eq!(host.fixed_clock_hz(), Some(CLOCK_HZ));
    assert!(host.problems().is_empty());
}

fn clocks(events: &[EngineEvent]) -> Vec<(u32, f64, bool)> {
    events
        .iter()
        .filter_map(|e| match e {
            EngineEvent::TrialClock {
                trial,
                effective_hz,
                in_band,
                ..
            } => Some((*trial, *effective_hz, *in_band)),
            _ => None,
        })
        .collect()
}

#[test]
fn each_trials_clock_is_reported_live_and_stored() {
    let tmp = tempfile::tempdir().unwrap();
    let req = request(&tmp.path().join("run"), &[1024], None);
    let mut runner = Scripted::new(&[Step::Clean, Step::FastClock]);
    let ran = run(&req, &mut runner);
    let seen = clocks(&ran.events);
    // Five kept trials and the fast one that was run again, in order.
    assert_eq!(seen.len(), 6, "{seen:?}");
    assert_eq!(seen.iter().filter(|c| !c.2).count(), 1);
    let fast = seen.iter().find(|c| !c.2).unwrap();
    assert!((fast.1 / CLOCK_HZ - 1.2).abs() < 0.01, "{fast:?}");
    for (_, hz, in_band) in seen.iter().filter(|c| c.2) {
        assert!((hz / CLOCK_HZ - 1.0).abs() < 0.001 && *in_band, "{hz}");
    }
    let extra = ran.records[0].cyclescope.as_ref().unwrap();
    assert_eq!(extra.clock_hz_by_trial.len(), 5);
    assert!(
        extra
            .clock_hz_by_trial
            .iter()
            .all(|hz| hz.is_some_and(|hz| (hz / CLOCK_HZ - 1.0).abs() < 0.001))
    );
    assert!(matches!(
        extra.clock_verification,
        Some(ClockVerification::PerTrial { .. })
    ));
    assert!(matches!(
        read_campaign(&req.run_dir).unwrap().clock_verification,
        Some(ClockVerification::PerTrial { .. })
    ));
    let warnings = ran
        .events
        .iter()
        .filter(|e| matches!(e, EngineEvent::Warning { message } if message.contains("clock verification")))
        .count();
    assert_eq!(warnings, 0, "a witnessed host says nothing");
}

#[test]
fn without_a_witness_the_run_says_so_once_and_stores_why() {
    let tmp = tempfile::tempdir().unwrap();
    let mut req = request(&tmp.path().join("run"), &[32, 1024], None);
    // A VM without PMU or msr device: the loop counts the TSC, no trial has a witness.
    req.host_root = fixture_host().with_file_name("vm-no-cpufreq");
    req.cpus = vec![1];
    req.allow_unfixed_host = true;
    let mut runner = Scripted::new(&[]);
    runner.witness = false;
    let ran = run(&req, &mut runner);
    assert!(clocks(&ran.events).is_empty());
    let notices: Vec<&String> = ran
        .events
        .iter()
        .filter_map(|e| match e {
            EngineEvent::Warning { message } if message.contains("clock verification") => {
                Some(message)
            }
            _ => None,
        })
        .collect();
    assert_eq!(notices.len(), 1, "said once per run: {notices:?}");
    assert!(
        notices[0].contains("no perf_event") && notices[0].contains("msr"),
        "{}",
        notices[0]
    );
    let stored = read_campaign(&req.run_dir).unwrap().clock_verification;
    assert!(
        matches!(&stored, Some(ClockVerification::Unavailable { reason }) if reason.contains("dev/cpu/1/msr")),
        "{stored:?}"
    );
    for r in &ran.records {
        let extra = r.cyclescope.as_ref().unwrap();
        assert_eq!(extra.clock_verification, stored);
        assert!(extra.clock_hz_by_trial.iter().all(Option::is_none));
    }
}
