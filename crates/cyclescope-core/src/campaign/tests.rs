//! The campaign's logic without processes: a scripted runner stands in for the workers, the
//! `tuned-intel` fixture tree for the host (fixed 2.1 GHz, no problems), and every case reads
//! back the records and events the run produced. Table-driven where the cases share a shape.

mod baseline;
mod calibration;
mod clock;
mod interleave;
mod lanes;
mod overdue;
mod script;

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use script::{CLOCK_HZ, Scripted, Step};

use crate::measure::clock::ClockVerification;

use super::{RequestOverrides, RunOutcome, RunRequest, run_with};
use crate::catalog::{Instance, Settings};
use crate::kat::KatStatus;
use crate::record::TimingRecord;
use crate::record::run_dir::{list_records, read_campaign};
use crate::vocabulary::{CampaignState, EngineEvent, FailureKind, RecordStatus};

fn fixture_host() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/host/tuned-intel")
}

fn instance() -> Instance {
    Instance {
        candidate: "iccs".into(),
        algorithm: "pseudoXOF".into(),
        label: "pseudoXOF-512".into(),
        library: "scripted/libpseudoxof.so".into(),
        digest_bits: 512,
        variant: "iccs-baseline".into(),
        flags: "guide".into(),
        kat_manifest: None,
        kat_name: None,
        abi: Default::default(),
        oracle: None,
        kat_dir: None,
    }
}

fn request(run_dir: &Path, lengths: &[u64], adaptive: Option<(f64, u32)>) -> RunRequest {
    let settings = Settings {
        trial_target_s: 0.01,
        ..Settings::default()
    };
    let o = RequestOverrides {
        lengths: Some(lengths.to_vec()),
        host_root: Some(fixture_host()),
        adaptive,
        ..RequestOverrides::default()
    };
    let mut req = RunRequest::build(&settings, vec![instance()], run_dir.to_path_buf(), o).unwrap();
    // The fixture host's isolated CPU: the builder refuses a CPU this machine lacks, but the
    // scripted runner never pins anything, so the request may name it.
    req.cpus = vec![2];
    // Scripted runs measure nothing: their CPU locks stay in their own folder.
    req.cpu_lock_dir = run_dir.parent().unwrap().to_path_buf();
    req
}

struct Ran {
    outcome: RunOutcome,
    events: Vec<EngineEvent>,
    records: Vec<TimingRecord>,
}

fn run(req: &RunRequest, runner: &mut Scripted) -> Ran {
    let mut events = Vec::new();
    // The runner's cancel flag is the run's (the `Cancel` step sets it).
    let cancel = runner.cancel.clone();
    let outcome = run_with(req, vec![runner], false, &mut |ev| events.push(ev), &cancel)
        .expect("the scripted run completes");
    let records = list_records(&req.run_dir)
        .into_iter()
        .map(|(_, r)| r)
        .collect();
    Ran {
        outcome,
        events,
        records,
    }
}

fn retried(events: &[EngineEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            EngineEvent::TrialRetried { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn trial_faults_and_disturbances_are_handled_as_the_guide_says() {
    use Step::*;
    struct Case {
        name: &'static str,
        steps: &'static [Step],
        processes: usize,
        retries: u32,
        retry_words: &'static [&'static str],
        failure: Option<FailureKind>,
    }
    let cases = [
        Case {
            name: "clean",
            steps: &[],
            processes: 5,
            retries: 0,
            retry_words: &[],
            failure: None,
        },
        Case {
            name: "slow clock once",
            steps: &[SlowClock],
            processes: 6,
            retries: 1,
            retry_words: &["below 95 % of the fixed clock"],
            failure: None,
        },
        Case {
            name: "turbo came back once: only the clock witness sees it",
            steps: &[FastClock],
            processes: 6,
            retries: 1,
            retry_words: &["above the host's band"],
            failure: None,
        },
        Case {
            name: "preempted on every attempt: the third is kept",
            steps: &[Clean, Preempted, Preempted, Preempted],
            processes: 7,
            retries: 2,
            retry_words: &["preempted", "preempted"],
            failure: None,
        },
        Case {
            name: "crash in the third process",
            steps: &[Clean, Clean, Crash],
            processes: 3,
            retries: 0,
            retry_words: &[],
            failure: Some(FailureKind::Crash),
        },
        Case {
            name: "timeout is not retried as a disturbance",
            steps: &[SlowClock, Timeout],
            processes: 2,
            retries: 1,
            retry_words: &["clock"],
            failure: Some(FailureKind::Timeout),
        },
    ];
    for c in cases {
        let tmp = tempfile::tempdir().unwrap();
        let req = request(&tmp.path().join("run"), &[1024], None);
        let mut runner = Scripted::new(c.steps);
        let ran = run(&req, &mut runner);
        assert_eq!(runner.processes, c.processes, "{}", c.name);
        let words = retried(&ran.events);
        assert_eq!(words.len(), c.retry_words.len(), "{}: {words:?}", c.name);
        for (w, want) in words.iter().zip(c.retry_words) {
            assert!(w.contains(want), "{}: {w}", c.name);
        }
        let [rec] = ran.records.as_slice() else {
            panic!("{}: one record, not {}", c.name, ran.records.len());
        };
        assert_eq!(rec.disturbed_retries, c.retries, "{}", c.name);
        let failure = rec.cyclescope.as_ref().and_then(|a| a.failure.as_ref());
        assert_eq!(failure.map(|f| f.kind), c.failure, "{}", c.name);
        match c.failure {
            None => {
                assert_eq!(rec.status, RecordStatus::Complete, "{}", c.name);
                assert_eq!(rec.trials.len(), 5, "{}", c.name);
                assert_eq!(ran.outcome.finished, 1, "{}", c.name);
                // The kept trials ran at the fixed clock (the disturbed ones were dropped),
                // except where the last attempt was kept regardless.
                let retries_per_process: u32 =
                    rec.processes.iter().map(|p| p.disturbed_retries).sum();
                assert_eq!(retries_per_process, c.retries, "{}", c.name);
            }
            Some(_) => {
                assert_eq!(rec.status, RecordStatus::FailedOrPartial, "{}", c.name);
                assert_eq!(ran.outcome.failed, 1, "{}", c.name);
                assert!(
                    ran.events
                        .iter()
                        .any(|e| matches!(e, EngineEvent::JobFailed { .. })),
                    "{}",
                    c.name
                );
            }
        }
    }
}

#[test]
fn adaptive_mode_stops_when_the_interval_is_tight_or_at_its_limit() {
    use Step::*;
    for (name, steps, max_trials, want) in [
        ("identical trials stop at the minimum", &[][..], 30, 3),
        (
            // Above the fixed clock only: slower trials would count as disturbed.
            "spread trials run to the limit",
            &[
                Cycles(1.0),
                Cycles(1.5),
                Cycles(1.1),
                Cycles(1.6),
                Cycles(1.2),
                Cycles(1.7),
            ][..],
            6,
            6,
        ),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let req = request(&tmp.path().join("run"), &[32], Some((0.01, max_trials)));
        let mut runner = Scripted::new(steps);
        let ran = run(&req, &mut runner);
        assert_eq!(runner.processes, want, "{name}");
        let rec = &ran.records[0];
        assert_eq!(rec.status, RecordStatus::Complete, "{name}");
        assert_eq!(
            rec.plan.trials as usize, want,
            "{name}: the plan says what ran"
        );
        assert_eq!(rec.trials.len(), want, "{name}");
    }
}

#[test]
fn a_resumed_run_measures_only_what_is_not_complete() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let req = request(&dir, &[32, 1024], None);
    // Jobs run cheapest first and both plan alike here, so 32 B runs first: 5 clean
    // processes, then 1024 B crashes in its first.
    let mut first = Scripted::new(&[
        Step::Clean,
        Step::Clean,
        Step::Clean,
        Step::Clean,
        Step::Clean,
        Step::Crash,
    ]);
    let ran = run(&req, &mut first);
    assert_eq!((ran.outcome.finished, ran.outcome.failed), (1, 1));
    let mut second = Scripted::new(&[]);
    let again = run(&req, &mut second);
    assert_eq!(again.outcome.skipped, 1, "the complete record is kept");
    assert_eq!(
        second.calibrations, 1,
        "only the failed job is planned again"
    );
    assert_eq!(second.processes, 5);
    assert_eq!(again.outcome.finished, 1);
    assert!(again.records.iter().all(|r| r.status.is_complete()));
    let c = read_campaign(&dir).unwrap();
    assert_eq!(c.cyclescope.state, CampaignState::Finished);
    assert_eq!(c.host_checks.len(), 2, "one host check per session");
    // A third session finds nothing to do and does not even run the KAT.
    let mut third = Scripted::new(&[]);
    let none = run(&req, &mut third);
    assert_eq!(
        (none.outcome.skipped, third.kat_runs, third.processes),
        (2, 0, 0)
    );
}

#[test]
fn cancelling_leaves_no_record_for_the_job_in_flight() {
    let tmp = tempfile::tempdir().unwrap();
    let req = request(&tmp.path().join("run"), &[32], None);
    let mut runner = Scripted::new(&[Step::Clean, Step::Cancel]);
    let ran = run(&req, &mut runner);
    assert!(ran.outcome.cancelled);
    assert!(ran.records.is_empty());
    assert_eq!(runner.processes, 2);
    assert!(runner.cancel.load(Ordering::SeqCst));
    let c = read_campaign(&req.run_dir).unwrap();
    assert_eq!(c.cyclescope.state, CampaignState::Cancelled);
}

#[test]
fn a_failed_kat_blocks_its_jobs_unless_allowed() {
    for (allow, blocked, measured) in [(false, 2, 0), (true, 0, 2)] {
        let tmp = tempfile::tempdir().unwrap();
        let mut req = request(&tmp.path().join("run"), &[32, 64], None);
        req.allow_kat_fail = allow;
        let mut runner = Scripted::new(&[]);
        runner.kat = KatStatus::Mismatch;
        let ran = run(&req, &mut runner);
        assert_eq!(ran.outcome.kat_blocked, blocked);
        assert_eq!(ran.records.len(), measured);
        for r in &ran.records {
            assert!(!r.kat.is_pass());
            assert_eq!(r.kat.to_string(), "MISMATCH");
        }
    }
}

#[test]
fn the_campaign_thread_measures_from_off_the_measurement_cpu() {
    // On its own thread, so the test harness's threads keep their masks.
    std::thread::spawn(|| {
        let cpu = crate::cpu::last_allowed();
        let allowed = crate::cpu::CpuMask::of_this_thread().expect("affinity is readable");
        let tmp = tempfile::tempdir().unwrap();
        let mut req = request(&tmp.path().join("run"), &[32], None);
        req.cpus = vec![cpu];
        req.allow_unfixed_host = true;
        let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut during = None;
        // Cancelled as soon as it starts: the real runner never gets to start a worker.
        let outcome = super::run(
            &req,
            &mut |ev| {
                if matches!(ev, EngineEvent::RunStarted { .. }) {
                    during = crate::cpu::CpuMask::of_this_thread();
                    cancel.store(true, Ordering::SeqCst);
                }
            },
            &cancel.clone(),
        )
        .unwrap();
        assert!(outcome.cancelled);
        let during = during.expect("the run started");
        assert_eq!(
            during.contains(cpu),
            allowed.count() == 1,
            "off CPU {cpu} unless it is the only one"
        );
        let after = crate::cpu::CpuMask::of_this_thread().unwrap();
        assert!(after.contains(cpu), "the thread's mask is restored");
    })
    .join()
    .expect("the campaign thread finished");
}
