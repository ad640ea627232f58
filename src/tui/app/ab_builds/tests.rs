//! `B` after a rebuild: the earlier build's library against the new one as an interleaved
//! A/B; refused, with the way on, where there is no earlier build or new flags wait for `s`.

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;
use crate::build::ProfileChoice;
use crate::tui::app::Sources;
use crate::tui::demo;

fn key(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}

/// The demo session built from sources, sm3hash-256 selected and under the cursor.
fn from_sources() -> App {
    let mut app = demo::finished();
    for i in &mut app.candidates[0].instances {
        i.flags = "guide".into();
    }
    let instances: Vec<Instance> = app.candidates[0].instances.clone();
    app.sources = Some(Sources::new("subm".into(), &instances));
    app.selected = ["sm3hash-256".to_string()].into();
    app.cursor = app
        .tree_rows()
        .iter()
        .position(|r| match r {
            crate::tui::app::TreeRow::Instance(c, i) => {
                app.candidates[*c].instances[*i].label == "sm3hash-256"
            }
            _ => false,
        })
        .expect("sm3hash-256 in the catalog");
    app
}

fn rebuild(app: &mut App, flags: &str, library: &str) -> Instance {
    let mut inst = app.cursor_instance().cloned().expect("cursor instance");
    inst.library = PathBuf::from(library);
    app.rebuilt(
        vec![(inst.clone(), ProfileChoice::Cflags(flags.into()))],
        vec![],
    );
    inst
}

#[test]
fn b_after_a_rebuild_interleaves_the_earlier_build_against_the_new_one() {
    let mut app = from_sources();
    let first = app.cursor_instance().cloned().expect("cursor instance");
    let now = rebuild(&mut app, "-O0", "trees/o0/iccs/lib/libsm3hash-256.so");
    let Some(Effect::Start(spec)) = app.on_key(key(KeyCode::Char('B'))) else {
        panic!("B starts the A/B of builds: {:?}", app.log.last());
    };
    assert_eq!(spec.interleaved_pairs, Some(10));
    let [a, b] = spec.instances.as_slice() else {
        panic!("two sides: {:?}", spec.instances);
    };
    // A is the first build: its own library, a label of its own, the instance's KAT name.
    assert_eq!(a.library, first.library);
    assert_eq!(a.label, "sm3hash-256.prev");
    assert_eq!(a.kat_name.as_deref(), Some("sm3hash-256"));
    assert_eq!(a.candidate, first.candidate);
    assert_eq!(b, &now);
    assert!(spec.rebuild.is_empty(), "nothing is rebuilt");
    assert!(spec.reference_pool.is_empty(), "no reference jobs");
    assert_eq!(super::of_builds(&spec).as_deref(), Some("sm3hash-256"));
    assert!(
        app.log
            .iter()
            .any(|l| l.text.contains("built with guide (A)") && l.text.contains("-O0 (B)")),
        "{:?}",
        app.log.last()
    );
}

#[test]
fn a_second_rebuild_compares_with_the_one_before_it_and_same_flags_keep_the_earlier() {
    let mut app = from_sources();
    rebuild(&mut app, "-O0", "trees/o0/iccs/lib/libsm3hash-256.so");
    rebuild(&mut app, "-O3", "trees/o3/iccs/lib/libsm3hash-256.so");
    // The same flags again land in the same tree: the build before stays the earlier one.
    rebuild(&mut app, "-O3", "trees/o3/iccs/lib/libsm3hash-256.so");
    let Some(Effect::Start(spec)) = app.on_key(key(KeyCode::Char('B'))) else {
        panic!("B starts");
    };
    assert_eq!(
        spec.instances[0].library,
        PathBuf::from("trees/o0/iccs/lib/libsm3hash-256.so")
    );
    let src = app.sources.as_ref().expect("sources");
    assert_eq!(src.previous["sm3hash-256"].flags, "-O0");
}

#[test]
fn b_without_an_earlier_build_or_with_flags_waiting_says_what_to_do() {
    let mut app = from_sources();
    assert_eq!(app.on_key(key(KeyCode::Char('B'))), None);
    let last = &app.log.last().expect("a log line").text;
    assert!(
        last.contains("no earlier build") && last.contains("p sets new flags, s rebuilds, then B"),
        "{last}"
    );
    rebuild(&mut app, "-O0", "trees/o0/iccs/lib/libsm3hash-256.so");
    app.on_key(key(KeyCode::Char('p')));
    for c in "-O2".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.on_key(key(KeyCode::Char('B'))), None);
    let last = &app.log.last().expect("a log line").text;
    assert!(last.contains("new flags wait for s"), "{last}");
    // Without sources there is nothing to rebuild, so nothing to compare.
    let mut plain = demo::finished();
    assert_eq!(plain.on_key(key(KeyCode::Char('B'))), None);
    let last = &plain.log.last().expect("a log line").text;
    assert!(last.contains("--src"), "{last}");
}

#[test]
fn a_refused_ab_of_builds_starts_again_as_one_on_a() {
    let mut app = from_sources();
    rebuild(&mut app, "-O0", "trees/o0/iccs/lib/libsm3hash-256.so");
    let Some(Effect::Start(_)) = app.on_key(key(KeyCode::Char('B'))) else {
        panic!("B starts");
    };
    app.refused("clock: not steady".into(), true);
    let Some(Effect::Start(spec)) = app.on_key(key(KeyCode::Char('A'))) else {
        panic!("A starts again: {:?}", app.log.last());
    };
    assert_eq!(spec.instances[0].label, "sm3hash-256.prev");
    assert!(spec.allow_unfixed_host);
}
