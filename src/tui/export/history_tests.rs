//! The export with a tuning journal: the followed instance's builds (build, flags, figure,
//! verdict) as a Markdown section after the results and as `history-<UTC>.csv`, the flags
//! cut in the table and whole in the CSV.

use super::write;
use crate::journal::Journal;
use crate::tui::demo;
use crate::tui::panel::history::tests::four_builds;

#[test]
fn the_export_carries_the_tuning_history_of_the_followed_instance() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.sqlite");
    let j = Journal::open(&journal).unwrap();
    for e in four_builds() {
        j.insert(&e).unwrap();
    }
    drop(j);
    let mut app = demo::finished();
    // The catalog cursor on sm3hash-256: the instance the History panel follows.
    app.cursor = app
        .tree_rows()
        .iter()
        .position(|r| matches!(r, crate::tui::app::TreeRow::Instance(0, 0)))
        .unwrap();
    app.journal = Some(journal);
    let history = app.tuning_history();
    let (label, rows) = history.as_ref().expect("the history");
    assert_eq!((label.as_str(), rows.len()), ("sm3hash-256", 4));
    let out = dir.path().join("out");
    let written = write(&app, history.as_ref(), &out).unwrap();
    assert_eq!(written.len(), 3, "{written:?}");
    let md = std::fs::read_to_string(&written[0]).unwrap();
    let section = md
        .split("## Tuning history of `sm3hash-256`")
        .nth(1)
        .unwrap_or_else(|| panic!("{md}"));
    assert!(
        section.contains("| `sm3hash-256` | 32 B | 1 |"),
        "{section}"
    );
    assert!(section.contains("first build"), "{section}");
    // Build 3: its figure with the interval and ⚠, its verdict against build 2.
    assert!(section.contains("1412 [861, 1963] ⚠"), "{section}");
    assert!(section.contains("doubtful (⚠ this build"), "{section}");
    // Build 4's flags cut in the table.
    assert!(
        section.contains("profile: -O3 -march=native -fno-plt -fo…"),
        "{section}"
    );
    let csv = std::fs::read_to_string(&written[2]).unwrap();
    assert!(
        written[2]
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("history-"),
        "{written:?}"
    );
    let lines: Vec<&str> = csv.lines().collect();
    assert!(
        lines[0].starts_with("instance,message_bytes,build,ended_utc,library_sha256,flags,"),
        "{}",
        lines[0]
    );
    assert_eq!(lines.len(), 5, "{csv}");
    assert!(
        lines[4].contains(
            ",-O3 -march=native -fno-plt -fomit-frame-pointer -fno-semantic-interposition,"
        ),
        "{}",
        lines[4]
    );
    assert!(
        lines[3].contains(",1412,551,1 kept trial(s) disturbed,1,doubtful,"),
        "{}",
        lines[3]
    );
}

#[test]
fn without_a_journal_the_export_is_the_two_results_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = demo::finished();
    app.journal = None;
    assert!(app.tuning_history().is_none());
    let written = write(&app, None, dir.path()).unwrap();
    assert_eq!(written.len(), 2);
    let md = std::fs::read_to_string(&written[0]).unwrap();
    assert!(!md.contains("Tuning history"), "{md}");
}
