//! The Profile panel's state and drawing on fixed events: the job's steps fill it in order,
//! a stale job's messages are dropped, a running profile keeps other workers off the CPU, and
//! a rebuild of the profiled instance has the new build profiled after the run, its moves per
//! function (exact, new, gone) against the previous build.

use std::time::Duration;

use super::*;
use crate::profile::{Counts, FunctionShare, LineShare, Overhead, Profile};
use crate::tui::action::{Action, Effect};
use crate::tui::demo;
use crate::tui::profile_job::{ProfileEvent, ProfileMsg, ProfileSpec};
use crate::vocabulary::EngineEvent;

fn counts(functions: &[(&str, u64)], calls: u64) -> Counts {
    let total: u64 = functions.iter().map(|f| f.1).sum();
    Counts {
        event: crate::profile::EVENT.into(),
        tool: "valgrind-3.19.0 callgrind".into(),
        calls,
        total,
        functions: functions
            .iter()
            .map(|&(f, n)| FunctionShare {
                function: f.into(),
                object: "libx.so".into(),
                count: n,
                share: n as f64 / total as f64,
            })
            .collect(),
        lines: vec![LineShare {
            file: "/src/x.c".into(),
            line: 17,
            function: functions[0].0.into(),
            count: functions[0].1,
            share: functions[0].1 as f64 / total as f64,
        }],
    }
}

fn profile_of(spec: &ProfileSpec, length: u64, c: &Counts) -> Profile {
    Profile {
        candidate: spec.instance.candidate.clone(),
        library: String::new(),
        label: spec.instance.label.clone(),
        input_bytes: length,
        event: c.event.clone(),
        tool: c.tool.clone(),
        calls: c.calls,
        total: c.total,
        functions: c.functions.clone(),
        lines: c.lines.clone(),
        overhead: Overhead {
            profiled_loop_s: 0.5,
            native_loop_s: 0.01,
            slowdown: 50.0,
            profile_wall_s: 1.0,
            native_waited_s: None,
        },
        sandbox_relaxed: Vec::new(),
        lost: 0,
    }
}

fn send(app: &mut App, job: u64, event: ProfileEvent) {
    app.profile_event(ProfileMsg { job, event });
}

/// `P` on the idle demo: the spec it asks for.
fn started(app: &mut App) -> ProfileSpec {
    match app.act(Action::ShowProfile) {
        Some(Effect::Profile(spec)) => spec,
        other => panic!("P profiles: {other:?}"),
    }
}

/// Every length of `spec` profiled with `c`.
fn finish(app: &mut App, spec: &ProfileSpec, c: &Counts) {
    for &length in &spec.lengths {
        send(app, spec.job, ProfileEvent::Counting { length });
        send(
            app,
            spec.job,
            ProfileEvent::Counted {
                length,
                counts: Box::new(c.clone()),
            },
        );
        send(
            app,
            spec.job,
            ProfileEvent::Done {
                length,
                profile: Box::new(profile_of(spec, length, c)),
            },
        );
    }
    send(app, spec.job, ProfileEvent::Finished { cancelled: false });
}

fn panel_text(app: &App) -> String {
    demo::draw_text(64, 20, |f| {
        crate::tui::panel::profile::render(f, f.area(), app)
    })
}

#[test]
fn the_panel_fills_step_by_step_and_drops_a_stale_jobs_messages() {
    let mut app = demo::idle();
    let spec = started(&mut app);
    // The library the counts name their functions in (`counts`).
    app.profile.library = "tree/lib/libx.so".into();
    assert_eq!(
        Some(spec.instance.label.as_str()),
        app.profile.label.as_deref()
    );
    assert_eq!((spec.lengths.clone(), spec.cpu), (vec![32, 1024], 1));
    assert_eq!(app.focus, Panel::Profile);
    assert_eq!(app.chart, Chart::Profile);
    send(
        &mut app,
        spec.job,
        ProfileEvent::WaitingForCpu("CPU 1 is busy".into()),
    );
    assert!(panel_text(&app).contains("waiting for the CPU: CPU 1 is busy"));
    send(&mut app, spec.job, ProfileEvent::Counting { length: 32 });
    let text = panel_text(&app);
    assert!(text.contains("counting the calls under valgrind"), "{text}");
    assert!(!text.contains("waiting for the CPU"), "{text}");
    let c = counts(&[("compress", 9000), ("pad", 1000)], 10);
    send(
        &mut app,
        spec.job,
        ProfileEvent::Counted {
            length: 32,
            counts: Box::new(c.clone()),
        },
    );
    // The counts show before the native trial ends.
    let text = panel_text(&app);
    assert!(
        text.contains("1000 instructions per call (exact, 10 calls)"),
        "{text}"
    );
    assert!(text.contains("timing the same calls natively"), "{text}");
    assert!(
        text.contains(" 90.0 %        900  compress (libx.so)"),
        "{text}"
    );
    assert!(text.contains("lines of compress:"), "{text}");
    assert!(text.contains("x.c:17"), "{text}");
    // An older job's message changes nothing.
    send(
        &mut app,
        spec.job - 1,
        ProfileEvent::Failed {
            length: 32,
            why: "stale".into(),
        },
    );
    assert!(matches!(
        app.profile.lengths[0].state,
        LengthState::Timing(_)
    ));
    send(
        &mut app,
        spec.job,
        ProfileEvent::Done {
            length: 32,
            profile: Box::new(profile_of(&spec, 32, &c)),
        },
    );
    assert!(panel_text(&app).contains("done: under valgrind 50× slower"));
    // A run waits for the profile, c cancels it.
    assert_eq!(app.act(Action::Start), None);
    assert!(
        app.log
            .iter()
            .any(|l| l.text.contains("a profile is running"))
    );
    assert_eq!(app.act(Action::Cancel), Some(Effect::CancelProfile));
    send(
        &mut app,
        spec.job,
        ProfileEvent::Finished { cancelled: true },
    );
    assert!(!app.profile.running);
    assert_eq!(
        app.profile.lengths[1].state,
        LengthState::Failed("cancelled".into())
    );
    assert!(matches!(app.act(Action::Start), Some(Effect::Start(_))));
}

#[test]
fn a_rebuild_is_profiled_after_the_run_with_its_moves_per_function() {
    let mut app = demo::idle();
    app.lengths = vec![64];
    let spec = started(&mut app);
    let label = spec.instance.label.clone();
    finish(
        &mut app,
        &spec,
        &counts(&[("compress", 9000), ("pad", 1000)], 10),
    );
    // Profiled already: P again only shows it.
    assert_eq!(app.act(Action::ShowProfile), None);
    // The run rebuilds the instance with other flags.
    let Some(Effect::Start(_)) = app.act(Action::Start) else {
        panic!("s starts")
    };
    let mut inst = spec.instance.clone();
    inst.library = "tree/lib/rebuilt.so".into();
    app.rebuilt(
        vec![(inst, crate::build::ProfileChoice::Cflags("-O0".into()))],
        Vec::new(),
    );
    assert!(app.pending.is_none(), "no profile during the run");
    app.apply(EngineEvent::RunFinished {
        cancelled: false,
        wall: Duration::from_secs(3),
        finished: 1,
        failed: 0,
    });
    let Some(Effect::Profile(again)) = app.pending.take() else {
        panic!("the rebuilt build is profiled when the run ends")
    };
    assert_eq!(again.instance.label, label);
    assert_eq!(
        again.instance.library,
        std::path::PathBuf::from("tree/lib/rebuilt.so")
    );
    assert!(again.job > spec.job);
    finish(
        &mut app,
        &again,
        &counts(&[("compress", 7000), ("load", 2000)], 10),
    );
    let before = app.profile.previous.as_ref().expect("the previous build");
    assert_eq!(before.library, spec.instance.library);
    let text = panel_text(&app);
    assert!(text.contains("Δ Ir/call vs the previous build"), "{text}");
    assert!(text.contains("700       −200  compress"), "{text}");
    assert!(text.contains("200        new  load"), "{text}");
    assert!(text.contains("–          –       gone  pad"), "{text}");
}

#[test]
fn moves_are_exact_new_or_gone_and_a_hostile_name_is_escaped() {
    let before = counts(&[("a", 100), ("gone", 50)], 10);
    let now = counts(&[("a", 130), ("fresh", 20)], 10);
    let rows = function_rows(&now, Some(&before));
    let got: Vec<(&str, Option<Move>)> = rows
        .iter()
        .map(|r| (r.function.as_str(), r.moved))
        .collect();
    assert_eq!(
        got,
        [
            ("a", Some(Move::By(3.0))),
            ("fresh", Some(Move::New)),
            ("gone", Some(Move::Gone))
        ]
    );
    assert_eq!(rows[2].per_call, None);
    assert!(function_rows(&now, None).iter().all(|r| r.moved.is_none()));
    assert_eq!(
        crate::tui::panel::profile::delta_text(Move::By(-1234.0)),
        "−1234"
    );
    assert_eq!(crate::tui::panel::profile::delta_text(Move::By(0.2)), "0");

    let mut app = demo::idle();
    app.lengths = vec![32];
    let spec = started(&mut app);
    finish(
        &mut app,
        &spec,
        &counts(&[("evil\x1b[2J\u{202e}name", 10)], 1),
    );
    let text = panel_text(&app);
    assert!(
        !text.contains('\x1b') && !text.contains('\u{202e}'),
        "{text:?}"
    );
    assert!(text.contains("evil"), "{text}");
}

#[test]
fn without_line_information_the_panel_says_so_and_shows_no_other_objects_lines() {
    let mut app = demo::idle();
    app.lengths = vec![32];
    let spec = started(&mut app);
    app.profile.library = "tree/lib/libx.so".into();
    // The library has no lines (built without -g); the C library's memcpy has some.
    let mut c = counts(&[("compress", 9000), ("pad", 1000)], 10);
    c.functions.push(FunctionShare {
        function: "__memcpy_avx_unaligned_erms".into(),
        object: "libc.so.6".into(),
        count: 1,
        share: 0.0001,
    });
    c.lines[0].function = "__memcpy_avx_unaligned_erms".into();
    finish(&mut app, &spec, &c);
    let text = demo::draw_text(100, 20, |f| {
        crate::tui::panel::profile::render(f, f.area(), &app)
    });
    assert!(!text.contains("lines of"), "{text}");
    assert!(
        text.contains(
            "no source lines: libx.so has no line information (building it with -g adds it)"
        ),
        "{text}"
    );
    snapshots("profile_no_lines", &app);
}

/// The Profile panel over a whole 80×24 and 160×48 terminal, as insta snapshots.
fn snapshots(name: &str, app: &App) {
    for (w, h) in [(80, 24), (160, 48)] {
        let text = demo::draw_text(w, h, |f| {
            crate::tui::panel::profile::render(f, f.area(), app)
        });
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), text);
    }
}

#[test]
fn a_build_valgrind_cannot_decode_is_explained_whole_in_the_panel() {
    let mut app = demo::idle();
    app.lengths = vec![32];
    let spec = started(&mut app);
    send(&mut app, spec.job, ProfileEvent::Counting { length: 32 });
    let why = crate::profile::ProfileError::Undecodable {
        bytes: "0x62 0xF1 0xFD 0x48".into(),
        avx512: true,
    }
    .to_string();
    send(&mut app, spec.job, ProfileEvent::Failed { length: 32, why });
    let text = panel_text(&app);
    // Wrapped, not cut: what works instead is on the screen too.
    assert!(!text.contains('…'), "{text}");
    for fact in [
        "not profiled: this valgrind cannot",
        "AVX-512",
        "SIGILL",
        "--sampled`)",
        "-march=native",
    ] {
        assert!(text.contains(fact), "{fact:?} missing:\n{text}");
    }
    snapshots("profile_undecodable", &app);
}

#[test]
fn a_slowdown_the_native_legs_wait_made_low_is_marked() {
    let mut app = demo::idle();
    app.lengths = vec![32];
    let spec = started(&mut app);
    let c = counts(&[("compress", 9000), ("pad", 1000)], 10);
    let mut p = profile_of(&spec, 32, &c);
    p.overhead.slowdown = 1.39;
    p.overhead.native_waited_s = Some(0.0041);
    send(
        &mut app,
        spec.job,
        ProfileEvent::Done {
            length: 32,
            profile: Box::new(p),
        },
    );
    let text = demo::draw_text(120, 12, |f| {
        crate::tui::panel::profile::render(f, f.area(), &app)
    });
    assert!(
        text.contains(
            "done: under valgrind 1.39× slower than native ⚠ the native calls waited 41.0 %"
        ),
        "{text}"
    );
}
