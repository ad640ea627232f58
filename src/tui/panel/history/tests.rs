//! The History chart on four builds of `sm3hash-256` at 32 B, the third with a wide
//! interval and a doubtful figure (as `1412 [861, 1963] ⚠`): each build is an error bar, the
//! doubtful one marked, at 80×24 and 160×48.

use std::path::PathBuf;

use crate::journal::{Entry, Origin};
use crate::tui::app::{App, Chart, HistoryView, Panel};
use crate::tui::demo;

/// Build `n` of `sm3hash-256` at 32 B.
fn entry(n: usize, mean: f64, half: f64, flags: &str, doubt: Option<&str>) -> Entry {
    Entry {
        origin: Origin::Workbench,
        run_dir: PathBuf::from(format!("runs/demo-{n}")),
        record: PathBuf::from("records/sm3hash-256-32.json"),
        candidate: "iccs".into(),
        label: "sm3hash-256".into(),
        library_sha256: format!("{n}").repeat(64),
        flags: "profile".into(),
        build_flags: flags.into(),
        compiler: "cc 12".into(),
        cpu_model: "a cpu".into(),
        system_id: "host".into(),
        counter: "tsc".into(),
        input_bytes: 32,
        mean_cycles: Some(mean),
        ci95_half_width: Some(half),
        process_sd_relative: Some(half / mean / 2.0),
        processes: 5,
        doubt: doubt.map(Into::into),
        robust: None,
        ended_utc: format!("2026-01-0{n}T10:00:00Z"),
    }
}

/// Four builds, the third with a wide interval and doubtful (the export's tests use them too).
pub(crate) fn four_builds() -> Vec<Entry> {
    vec![
        entry(1, 1606.0, 5.0, "-O2", None),
        entry(2, 1520.0, 6.0, "-O3", None),
        entry(
            3,
            1412.0,
            551.0,
            "-O3 -funroll-loops",
            Some("1 kept trial(s) disturbed"),
        ),
        entry(
            4,
            1398.0,
            7.0,
            "-O3 -march=native -fno-plt -fomit-frame-pointer -fno-semantic-interposition",
            None,
        ),
    ]
}

fn with_history() -> App {
    let mut app = demo::finished();
    let entries = four_builds();
    let rows = crate::journal::history(&entries);
    app.history = HistoryView {
        label: Some("sm3hash-256".into()),
        length: 32,
        cursor: 2,
        rows,
        problem: None,
    };
    app.chart = Chart::History;
    app.focus = Panel::History;
    app
}

#[test]
fn each_build_is_an_error_bar_and_a_doubtful_one_is_marked() {
    let app = with_history();
    for (w, h) in [(80, 24), (160, 48)] {
        let text = demo::text(&demo::render(&app, w, h));
        // The wide interval of build 3 is a bar several rows tall, with ⚠ at its top.
        let lines: Vec<&str> = text.lines().collect();
        let top = lines
            .iter()
            .position(|l| l.contains('⚠') && !l.contains("cycles"))
            .unwrap_or_else(|| panic!("{w}×{h}: no ⚠ on the chart\n{text}"));
        let mark = lines[top].chars().position(|c| c == '⚠').unwrap();
        // Above the bar, or beside its top when the bar reaches the chart's top row.
        let (col, from) = if lines[top].chars().nth(mark - 1) == Some('┬') {
            (mark - 1, top)
        } else {
            (mark, top + 1)
        };
        let below: String = lines[from..]
            .iter()
            .map_while(|l| l.chars().nth(col).filter(|c| "┬│┴●".contains(*c)))
            .collect();
        assert!(
            below.starts_with('┬') && below.ends_with('┴') && below.contains('●'),
            "{w}×{h}: {below}\n{text}"
        );
        insta::assert_snapshot!(format!("history_{w}x{h}"), text);
    }
}
