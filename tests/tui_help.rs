//! The `?` help of the real workbench at 80×24, driven in tmux: it scrolls (↑/↓, PgUp/PgDn,
//! Home/End) to its last line, `/` narrows it to the lines with the typed text, stray keys do
//! nothing, and only Esc, `?` and `q` close it — `q` without leaving.

mod common;

use std::path::Path;

use common::tmux::Tmux;

const TITLE: &str = "Keys · Esc/?/q closes";

fn script() -> String {
    let bin = env!("CARGO_BIN_EXE_cyclescope");
    assert!(Path::new(bin).exists());
    format!("{bin} --allow-unfixed-host; echo \"EXIT:$?\"; sleep 600")
}

#[test]
fn the_help_scrolls_filters_and_closes_only_on_its_keys_at_80x24() {
    let t = Tmux::start("help", 80, 24, &script());
    t.wait_for("Catalog · 0 selected");
    t.send(&["?"]);
    // The first page, the rest counted on the border.
    let s = t.wait_for(TITLE);
    assert!(s.contains("select / unselect the instance"), "{s}");
    assert!(!s.contains("leave at once, from anywhere"), "{s}");
    assert!(s.contains(" ↓"), "hidden lines are counted:\n{s}");

    t.send(&["End"]);
    let s = t.wait_for("leave at once, from anywhere");
    assert!(s.contains("wheel scrolls") && s.contains(" ↑"), "{s}");
    assert!(!s.contains("select / unselect the instance"), "{s}");
    t.send(&["Home"]);
    t.wait_for("select / unselect the instance");
    t.send(&["PageDown"]);
    t.wait("a page down", |s| {
        s.contains(TITLE) && !s.contains("select / unselect the instance") && s.contains(" ↑")
    });
    t.send(&["PageUp"]);
    t.wait_for("select / unselect the instance");

    // Keys that act elsewhere do nothing here: no selection, no run, no focus change.
    t.send(&["Space", "s", "Tab", "c"]);
    t.send(&["/"]);
    t.type_text("cpu");
    let s = t.wait_for("/cpu▏");
    assert!(s.contains("measurement CPU: previous / next"), "{s}");
    assert!(!s.contains("start: KAT"), "the filter narrows:\n{s}");
    // Typed into the filter, q is text.
    t.type_text(" q");
    t.wait_for("/cpu q▏");
    t.send(&["BSpace", "BSpace", "Enter"]);
    t.wait("the filter kept", |s| {
        s.contains("╚ /cpu ") && s.contains("measurement CPU")
    });
    t.send(&["Escape"]);
    t.wait("the filter cleared", |s| {
        s.contains(TITLE) && s.contains("select / unselect the instance") && !s.contains("/cpu")
    });

    // q closes the help and stays; the stray keys left no trace.
    t.send(&["q"]);
    let s = t.wait("help closed", |s| !s.contains(TITLE));
    assert!(
        !s.contains("EXIT:"),
        "q in the help left the workbench:\n{s}"
    );
    assert!(
        s.contains("Catalog · 0 selected") && s.contains("┏ Catalog"),
        "{s}"
    );
    assert!(s.contains("│ idle │"), "{s}");
    for close in ["?", "Escape"] {
        t.send(&["?"]);
        t.wait_for(TITLE);
        t.send(&[close]);
        t.wait(&format!("{close} closes the help"), |s| !s.contains(TITLE));
    }
    t.send(&["q"]);
    t.wait_for("EXIT:0");
}
