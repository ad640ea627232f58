//! The app's flows, driven by actions and engine events only: start, cancel, start again;
//! read-only watching; KAT and fault bookkeeping; histogram stepping and mouse hits
//! (`navigation`).

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;
use crate::kat::KatStatus;
use crate::tui::action::{Action, Effect};
use crate::tui::demo;
use crate::vocabulary::EngineEvent;

mod navigation;

fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

fn job(label: &str, bytes: u64) -> JobKey {
    JobKey {
        candidate: "iccs".into(),
        label: label.into(),
        input_bytes: bytes,
    }
}

#[test]
fn start_needs_a_selection_and_lengths_and_skips_passed_kats() {
    let cat = demo::catalog();
    let mut app = App::new(cat.candidates, &cat.settings, 4);
    assert_eq!(app.cpu, 3, "the highest-numbered CPU by default");
    assert_eq!(app.act(Action::Start), None);
    assert!(
        app.log
            .last()
            .is_some_and(|l| l.text.contains("select at least one"))
    );
    app.cursor = 7; // pseudoXOF-512
    app.act(Action::Toggle);
    app.lengths.clear();
    assert_eq!(app.act(Action::Start), None);
    app.act(Action::ToggleLength(0));
    app.act(Action::ToggleLength(3));
    app.apply(EngineEvent::KatFinished {
        label: "pseudoXOF-512".into(),
        status: KatStatus::Pass,
        detail: String::new(),
        log: Some("runs/a/kat/iccs/pseudoXOF-512.log".into()),
        check: None,
        findings: Vec::new(),
    });
    let Some(Effect::Start(spec)) = app.act(Action::Start) else {
        panic!("no start");
    };
    assert_eq!(spec.lengths, vec![32, 1024]);
    assert_eq!(
        spec.kat_passed
            .get("pseudoXOF-512")
            .map(|p| p.display().to_string()),
        Some("runs/a/kat/iccs/pseudoXOF-512.log".into())
    );
    assert_eq!(spec.kat_passed.len(), 1);
    assert_eq!(spec.instances.len(), 1);
    assert!(app.is_running());
    assert_eq!(app.act(Action::Start), None, "one run at a time");
}

#[test]
fn cancel_keeps_finished_records_and_a_new_run_can_start() {
    let mut app = demo::measuring();
    assert_eq!(app.act(Action::Cancel), Some(Effect::Cancel));
    assert_eq!(app.act(Action::Cancel), None, "cancelling once is enough");
    assert_eq!(app.run_word(), "cancelling");
    app.apply(EngineEvent::RunFinished {
        cancelled: true,
        wall: Duration::from_secs(3),
        finished: 1,
        failed: 0,
    });
    assert_eq!(app.result_rows().len(), 1, "the finished job stays");
    assert!(
        app.jobs.iter().all(Job::is_finished),
        "the abandoned trial is gone"
    );
    assert_eq!(app.run_word(), "cancelled");
    app.act(Action::ToggleLength(1));
    let Some(Effect::Start(spec)) = app.act(Action::Start) else {
        panic!("no restart");
    };
    assert_eq!(spec.lengths, vec![32, 128, 1024]);
    assert_eq!(
        spec.kat_passed.len(),
        2,
        "KATs passed this session are not re-run"
    );
}

#[test]
fn watching_is_read_only() {
    let mut app = demo::idle();
    app.read_only = true;
    for a in [
        Action::Start,
        Action::Toggle,
        Action::RecheckHost,
        Action::CpuNext,
    ] {
        assert_eq!(app.act(a), None, "{a:?}");
    }
    assert_eq!(app.selected.len(), 2);
    assert_eq!(app.act(Action::HistLive), None);
    assert_eq!(app.act(Action::Quit), Some(Effect::Quit));
}

#[test]
fn changing_the_cpu_rechecks_the_host_but_not_during_a_run() {
    let mut app = demo::idle();
    assert_eq!(
        app.act(Action::CpuNext),
        Some(Effect::RecheckHost { cpu: 0 })
    );
    assert_eq!(app.host[0].status, crate::host::Status::Unknown);
    let mut running = demo::measuring();
    assert_eq!(running.act(Action::CpuPrev), None);
    assert_eq!(running.cpu, 1);
}

#[test]
fn plus_adds_the_shown_cpu_to_the_measurement_cpus_and_the_run_takes_them_all() {
    let mut app = demo::idle();
    assert_eq!(app.measurement_cpus(), [1], "the shown CPU alone");
    assert_eq!(app.act(Action::CpuLane), None);
    assert_eq!(app.measurement_cpus(), [1]);
    app.act(Action::CpuPrev);
    app.act(Action::CpuLane);
    assert_eq!(app.measurement_cpus(), [0, 1]);
    let Some(Effect::Start(spec)) = app.act(Action::Start) else {
        panic!("the run starts");
    };
    assert_eq!(spec.cpus, [0, 1]);
    let mut running = demo::measuring();
    assert_eq!(running.act(Action::CpuLane), None);
    assert!(running.lanes.is_empty(), "not during a run");
}

#[test]
fn kat_results_and_faults_are_kept_per_instance() {
    let app = demo::fault();
    assert!(app.kat_state("sm3hash-256").passed());
    assert!(matches!(
        app.kat_state("pseudohash-512"),
        KatState::Done {
            status: KatStatus::Mismatch,
            ..
        }
    ));
    assert_eq!(*app.kat_state("pseudoXOF-1024"), KatState::Unknown);
    let tail: Vec<&str> = app
        .log
        .iter()
        .filter(|l| l.text.contains("stderr│"))
        .map(|l| l.text.as_str())
        .collect();
    assert_eq!(tail.len(), 3);
    let rows = app.result_rows();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].failure, Some("CRASH: worker killed by SIGSEGV"));
}

#[test]
fn the_log_is_bounded() {
    let mut app = demo::idle();
    for i in 0..LOG_CAPACITY + 20 {
        app.apply(EngineEvent::Warning {
            message: format!("w{i}"),
        });
    }
    assert_eq!(app.log.len(), LOG_CAPACITY);
    assert_eq!(app.log[0].text, "w20");
}

#[test]
fn the_eta_shrinks_as_jobs_finish() {
    let mut app = demo::measuring();
    let before = app.eta_seconds().expect("an ETA while running");
    app.apply(EngineEvent::JobFinished {
        job: job("sm3hash-256", 32),
        #[allow(clippy::useless_conversion)]
        summary: demo::summary(1469.0, 32).into(),
        record: "r.json".into(),
        snapshot: None,
    });
    let after = app.eta_seconds().expect("still running");
    assert!(after < before, "{after} < {before}");
    assert_eq!(demo::finished().eta_seconds(), None);
}

#[test]
fn start_anyway_carries_the_consent_for_the_rest_of_the_session() {
    let cat = demo::catalog();
    let mut app = App::new(cat.candidates, &cat.settings, 4);
    app.cursor = 7; // pseudoXOF-512
    app.act(Action::Toggle);
    let Some(Effect::Start(spec)) = app.act(Action::Start) else {
        panic!("no start");
    };
    assert!(!spec.allow_unfixed_host, "no consent without A");
    app.apply(EngineEvent::RunFinished {
        cancelled: false,
        wall: Duration::from_secs(1),
        finished: 0,
        failed: 0,
    });
    let Some(Effect::Start(spec)) = app.act(Action::StartAnyway) else {
        panic!("A starts");
    };
    assert!(spec.allow_unfixed_host);
    assert!(
        app.log
            .iter()
            .any(|l| l.text.contains("are stored with the run"))
    );
    assert!(spec.allow_kat_fail, "A covers the KAT gate too");
    app.apply(EngineEvent::RunFinished {
        cancelled: false,
        wall: Duration::from_secs(1),
        finished: 0,
        failed: 0,
    });
    let Some(Effect::Start(spec)) = app.act(Action::Start) else {
        panic!("s starts again");
    };
    assert!(spec.allow_unfixed_host, "the consent lasts for the session");
}

#[test]
fn tampering_is_shown_by_name() {
    let cat = demo::catalog();
    let mut app = App::new(cat.candidates, &cat.settings, 4);
    app.apply(EngineEvent::KatFinished {
        label: "pseudoXOF-512".into(),
        status: crate::kat::KatStatus::Tampered,
        detail: "a protocol line the worker did not write".into(),
        log: None,
        check: None,
        findings: Vec::new(),
    });
    assert!(
        matches!(app.kat_state("pseudoXOF-512"), KatState::Done { status, .. } if *status == crate::kat::KatStatus::Tampered)
    );
    app.apply(EngineEvent::JobFailed {
        job: job("sm3hash-256", 1024),
        reason: crate::vocabulary::JobFailure::new(
            crate::vocabulary::FailureKind::Tampered,
            "trial 1 claims 200000 cycles in 1.0000 s",
        ),
        stderr_tail: String::new(),
        record: None,
    });
    let shown: Vec<&str> = app.log.iter().map(|l| l.text.as_str()).collect();
    assert!(
        shown
            .iter()
            .any(|l| l.starts_with("KAT pseudoXOF-512: TAMPERED — a protocol line")),
        "{shown:?}"
    );
    assert!(
        shown.iter().any(|l| l.contains("FAULT TAMPERED: trial 1")),
        "{shown:?}"
    );
}

/// The load average row follows fresh readings during a run; other rows stay as checked.
#[test]
fn the_load_average_row_takes_a_fresh_reading() {
    use crate::host::{HostCheck, HostRoot, load_average};
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/host");
    let mut app = demo::idle();
    let row = |check, value: &str| HostRow {
        check: Some(check),
        name: "row".into(),
        status: CheckStatus::Pass,
        value: value.into(),
        hint: None,
    };
    app.set_host(vec![
        row(HostCheck::Aslr, "randomize_va_space=2"),
        row(HostCheck::LoadAverage, "0.08 0.03 0.01 (1, 5, 15 min)"),
    ]);
    app.refresh_host_check(load_average(&HostRoot::new(
        fixtures.join("untuned-laptop"),
    )));
    assert_eq!(app.host[1].value, "2.47 1.95 1.60 (1, 5, 15 min)");
    assert_eq!(app.host[1].status, CheckStatus::Warn);
    assert!(app.host[1].hint.is_some());
    assert_eq!(app.host[0].value, "randomize_va_space=2");
}

/// A worker's stderr and a KAT detail are the candidate's words: the log shows them escaped,
/// one line each, so they cannot drive the terminal the workbench draws on.
#[test]
fn candidate_words_reach_the_log_escaped() {
    let cat = demo::catalog();
    let mut app = App::new(cat.candidates, &cat.settings, 4);
    app.apply(EngineEvent::KatFinished {
        label: "pseudoXOF-512".into(),
        status: crate::kat::KatStatus::Cryptofail,
        detail: "exit\x1b]0;HACKED\x07\nRESULT x y PASS".into(),
        log: None,
        check: None,
        findings: Vec::new(),
    });
    app.apply(EngineEvent::JobFailed {
        job: job("sm3hash-256", 1024),
        reason: crate::vocabulary::JobFailure::new(
            crate::vocabulary::FailureKind::Crash,
            "worker killed by SIGSEGV",
        ),
        stderr_tail: "\x1b[2J\x1b[H\x1b]52;c;aGk=\x07 boom\u{202e}\n".into(),
        record: None,
    });
    let shown: Vec<&str> = app.log.iter().map(|l| l.text.as_str()).collect();
    for l in &shown {
        assert!(!l.contains(['\x1b', '\x07', '\n', '\u{202e}']), "{shown:?}");
    }
    assert!(
        shown
            .iter()
            .any(|l| l.contains("stderr│ \\x1b[2J\\x1b[H\\x1b]52;c;aGk=\\x07 boom\\u202e")),
        "{shown:?}"
    );
    assert!(
        shown
            .iter()
            .any(|l| l.contains("\\x1b]0;HACKED\\x07\\nRESULT")),
        "{shown:?}"
    );
}
