//! Getting around the screen: the histogram follows the running job or steps through the
//! finished ones, typing goes to the field being edited, and a click or a wheel turn lands on
//! the row and panel under the pointer.

use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};

use super::*;

#[test]
fn the_histogram_follows_the_running_job_or_steps_through_finished_ones() {
    let mut app = demo::measuring();
    assert_eq!(
        app.hist_job().map(|j| j.key.clone()),
        Some(job("sm3hash-256", 32))
    );
    app.act(Action::HistNext);
    let pinned = app.hist_job().map(|j| j.key.clone());
    assert_eq!(pinned, Some(job("pseudoXOF-512", 32)));
    app.act(Action::HistNext);
    assert_eq!(
        app.hist_job().map(|j| j.key.clone()),
        Some(job("sm3hash-256", 32))
    );
    app.act(Action::HistLive);
    assert_eq!(app.hist_view, HistView::Live);
    let mut done = demo::finished();
    done.focus = Panel::Results;
    done.act(Action::Down);
    done.act(Action::Confirm);
    assert_eq!(
        done.hist_view,
        HistView::RunJob(job("sm3hash-256", 1024), 0)
    );
    // In a later session state, an earlier run's row shows its own histogram.
    let mut rerun = demo::rerun();
    let at = rerun
        .result_rows()
        .iter()
        .position(|r| r.run == 0 && *r.key == job("sm3hash-256", 32))
        .unwrap();
    rerun.results_cursor = at;
    rerun.act(Action::Confirm);
    let shown = rerun.hist_job().unwrap();
    assert_eq!((shown.key.clone(), shown.run), (job("sm3hash-256", 32), 0));
}

#[test]
fn typing_goes_to_the_filter_and_the_length_field() {
    let mut app = demo::idle();
    app.on_key(key('/'));
    for c in "sm3".chars() {
        app.on_key(key(c));
    }
    assert_eq!(app.filter, "sm3");
    assert_eq!(app.tree_rows().len(), 2);
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert_eq!(
        app.on_key(key('q')),
        Some(Effect::Quit),
        "the table is back after Enter"
    );
    app.on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    assert!(app.filter.is_empty(), "Esc clears a kept filter");
    app.on_key(key('l'));
    for c in "2k".chars() {
        app.on_key(key(c));
    }
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert_eq!(app.lengths, vec![32, 1024, 2048]);
    assert_eq!(
        app.on_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
        Some(Effect::Quit)
    );
}

#[test]
fn a_click_selects_the_catalog_row_under_the_pointer() {
    let mut app = demo::idle();
    let mut map = None;
    let _ = demo::draw_text(80, 24, |f| map = Some(crate::tui::screen::draw(f, &app)));
    let map = map.expect("drawn");
    let (rows, first) = map.catalog_rows.expect("catalog rows");
    let click = |row: u16| MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: rows.x + 3,
        row,
        modifiers: KeyModifiers::NONE,
    };
    // Row 5 of the tree is pseudoXOF-256 (candidate row, then sm3hash and pseudohash ×3).
    app.on_mouse(click(rows.y + 5 - first as u16), &map);
    assert!(app.selected.contains("pseudoXOF-256"));
    assert_eq!(app.cursor, 5);
    app.focus = Panel::Host;
    let (hist_panel, r) = map
        .panels
        .iter()
        .find(|(p, _)| *p == Panel::Histogram)
        .copied()
        .expect("histogram");
    app.on_mouse(
        MouseEvent {
            kind: MouseEventKind::ScrollDown,
            column: r.x + 1,
            row: r.y + 1,
            modifiers: KeyModifiers::NONE,
        },
        &map,
    );
    assert_eq!(app.focus, hist_panel);
}
