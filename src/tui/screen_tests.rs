//! Whole-screen snapshots: every demo state at 80×24 and 160×48 on `TestBackend`, compared
//! with insta. The demo states are deterministic, so nothing needs filtering.

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::demo;

fn screen(name: &str, width: u16, height: u16) -> TestBackend {
    let app = demo::state(name).unwrap_or_else(|| panic!("no demo state {name}"));
    let mut terminal =
        Terminal::new(TestBackend::new(width, height)).unwrap_or_else(|e| match e {});
    let _ = terminal.draw(|f| {
        super::screen::draw(f, &app);
    });
    terminal.backend().clone()
}

macro_rules! snap {
    ($test:ident, $state:literal) => {
        #[test]
        fn $test() {
            let (w, h) = if $state == "too-small" {
                (70, 20)
            } else {
                (80, 24)
            };
            insta::assert_snapshot!(concat!($state, "_80x24"), screen($state, w, h));
            if $state != "too-small" {
                insta::assert_snapshot!(concat!($state, "_160x48"), screen($state, 160, 48));
            }
        }
    };
}

snap!(idle_screen, "idle");
snap!(measuring_screen, "measuring");
snap!(finished_screen, "finished");
snap!(fault_screen, "fault");
snap!(too_small_screen, "too-small");
snap!(help_screen, "help");
snap!(help_end_screen, "help-end");
snap!(help_filter_screen, "help-filter");
snap!(rerun_screen, "rerun");
snap!(refused_screen, "refused");
snap!(waiting_cpu_screen, "waiting-cpu");
snap!(nokat_screen, "nokat");
snap!(log_scrolled_screen, "log-scrolled");
snap!(bad_manifest_screen, "bad-manifest");
snap!(ab_builds_screen, "ab-builds");

/// A manifest that broke after the start is not the library's fault: BADMANIFEST in the
/// warning colour (as NOKAT), never LOADFAIL, with the manifest's words and the way on.
#[test]
fn a_broken_manifest_is_said_as_such_and_not_blamed_on_the_library() {
    let app = demo::bad_manifest();
    let buf = demo::render(&app, 160, 48);
    let text = demo::text(&buf);
    assert!(!text.contains("LOADFAIL"), "{text}");
    assert!(
        text.contains("KAT sm3hash-256: BADMANIFEST — plugins/iccs/kat.sha256:3: not a manifest"),
        "{text}"
    );
    assert!(
        text.contains("BADMANIFEST: the KAT manifest cannot be read or does not parse"),
        "{text}"
    );
    let (y, row) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("sm3hash-256") && l.contains("BADMANIFEST"))
        .unwrap_or_else(|| panic!("no catalog row:\n{text}"));
    let x = row.chars().position(|c| c == 'B').unwrap_or(0);
    let cell = &buf[(x as u16, y as u16)];
    assert_eq!(cell.fg, ratatui::style::Color::Yellow, "{row}");
}

/// At 100 columns the refusal's footer lists `A` uncut, and the status line leads with it.
#[test]
fn the_refusal_reads_right_at_100_columns() {
    let text = demo::text(&demo::render(&demo::refused(), 100, 30));
    insta::assert_snapshot!("refused_100x30", text);
    let footer = text.lines().last().unwrap_or_default();
    assert!(footer.contains("A anyway"), "{footer}");
    assert!(footer.trim_end().ends_with("quit"), "cut: {footer}");
    assert!(text.contains("│ refused │"), "{text}");
    assert!(
        text.contains("refused: 1 host check(s) fail · A: measure anyway · r: re-check"),
        "{text}"
    );
}

#[test]
fn the_minimum_size_gets_the_full_layout_and_one_less_does_not() {
    let full = demo::text(&demo::render(&demo::idle(), 80, 24));
    assert!(
        full.contains("Catalog") && full.contains("Progress"),
        "{full}"
    );
    let small = demo::text(&demo::render(&demo::idle(), 79, 24));
    assert!(
        small.contains("terminal too small") && small.contains("79×24"),
        "{small}"
    );
}

/// With a baseline pinned (`b`) the run and Δ columns take room, yet `× pseudoXOF` stays:
/// n, MB/s, mean time and cycles/byte give way first, at every width the panel can have.
#[test]
fn a_pinned_baseline_never_hides_the_ratio_column() {
    let app = demo::rerun();
    assert_eq!(app.baseline, Some(0));
    for width in (100..=160).step_by(4) {
        let text = demo::text(&demo::render(&app, width, 48));
        let header = text
            .lines()
            .find(|l| l.contains(" instance ") && l.contains(" msg"))
            .unwrap_or_else(|| panic!("the results header at {width} columns:\n{text}"));
        assert!(
            header.contains("×XOF") || header.contains("× pseudoXOF"),
            "{width} columns: {header}"
        );
    }
}
