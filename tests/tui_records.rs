//! The workbench reads results the way the report prints them: the published arm_1 records
//! loaded into the results table give, row for row, the §4 table of the published page.

mod common;

use cyclescope::catalog::Settings;
use cyclescope::tui::App;
use cyclescope::tui::panel::results::markdown;
use cyclescope::tui::records;

#[test]
fn reloaded_records_reproduce_the_published_performance_table() {
    let events = records::load(&common::arm_1());
    assert_eq!(events.len(), 120);
    let mut app = App::new(vec![], &Settings::default(), 2);
    for ev in events {
        app.apply(ev);
    }
    let ours: Vec<String> = markdown(&app)
        .lines()
        .filter(|l| l.starts_with("| `uHash"))
        .map(str::to_string)
        .collect();
    let page = std::fs::read_to_string(
        common::shared_dir().join("reference/harness-data/hash-05/perf_arm_1.md"),
    )
    .expect("the published page");
    let section = page
        .split("## 4. Performance")
        .nth(1)
        .and_then(|s| s.split("## 5.").next())
        .expect("§4 of the page");
    let published: Vec<String> = section
        .lines()
        .filter(|l| l.starts_with("| `uHash"))
        .map(str::to_string)
        .collect();
    assert_eq!(published.len(), 24);
    assert_eq!(ours, published);
    assert!(markdown(&app).starts_with(
        "| instance | message | mean cycles | cycles/byte | mean time | MB/s | n |\n|---|"
    ));
}

#[test]
fn a_missing_run_directory_loads_nothing() {
    assert!(records::load(std::path::Path::new("/nonexistent/run")).is_empty());
}
