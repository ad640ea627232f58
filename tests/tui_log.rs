//! The event log of the real workbench, driven in tmux at 80×24 (one log line shows): scrolled
//! back it stays on the line being read while new lines arrive, `↓ N new` on the Progress
//! border counts them, and back at the bottom it follows again.

mod common;

use std::path::Path;

use common::tmux::Tmux;

fn script() -> String {
    let bin = env!("CARGO_BIN_EXE_cyclescope");
    assert!(Path::new(bin).exists());
    format!("{bin} --allow-unfixed-host; echo \"EXIT:$?\"; sleep 600")
}

/// The one log line the Progress panel shows (the row above its bottom border).
fn log_line(screen: &str) -> String {
    let rows: Vec<&str> = screen.lines().collect();
    let bottom = rows
        .iter()
        .rposition(|l| l.contains("┗━"))
        .unwrap_or_else(|| panic!("no focused Progress panel:\n{screen}"));
    rows[bottom - 1].to_string()
}

#[test]
fn a_scrolled_log_stays_counts_new_lines_and_follows_again_at_the_bottom() {
    let t = Tmux::start("log", 80, 24, &script());
    t.wait_for("Catalog · 0 selected");
    // `i` says the next run's counter in the log: two lines.
    t.send(&["i"]);
    t.wait_for("counter: instructions");
    t.send(&["i"]);
    t.wait_for("counter: hw-instructions");
    t.send(&["Tab", "Tab", "Tab", "Tab", "Tab"]);
    t.wait_for("┏ Progress");
    t.send(&["Up"]);
    t.wait("scrolled back a line", |s| {
        s.contains("┏ Progress") && log_line(s).contains("counter: instructions")
    });
    // A line arrives: the view stays, the border counts it.
    t.send(&["i"]);
    let s = t.wait_for("↓ 1 new");
    assert!(log_line(&s).contains("counter: instructions"), "{s}");
    t.send(&["Down"]);
    let s = t.wait("one line down", |s| {
        log_line(s).contains("counter: hw-instructions")
    });
    assert!(s.contains("↓ 1 new"), "{s}");
    t.send(&["Down"]);
    let s = t.wait("at the bottom", |s| log_line(s).contains("counter: cycles"));
    assert!(!s.contains(" new "), "{s}");
    // Following again: the next line shows as it arrives.
    t.send(&["i"]);
    let s = t.wait("following", |s| {
        log_line(s).contains("counter: instructions")
    });
    assert!(!s.contains(" new "), "{s}");
    t.send(&["q"]);
    t.wait_for("EXIT:0");
}
