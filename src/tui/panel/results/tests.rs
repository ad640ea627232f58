//! The Results panel's buffer tests: the Markdown of the printout, a doubtful row and its
//! detail, runs kept apart, the resume hint, failed rows and columns dropped when narrow.

use super::*;
use crate::tui::demo;

#[test]
fn markdown_is_the_report_table() {
    let md = markdown(&demo::finished());
    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(
        lines[0],
        "| instance | message | mean cycles | cycles/byte | mean time | MB/s | n | × pseudoXOF |"
    );
    assert_eq!(lines[1], "|---|---|---|---|---|---|---|---|");
    // No pseudoXOF-256 in the session: no ratio for sm3hash-256, never a made-up one.
    assert_eq!(
        lines[2],
        "| `sm3hash-256` | 32 B | 1469 ±0.4 % | 45.9 | 700 ns | 45.7 | 100000 (5 × 20000) | – |"
    );
    // The disturbed job keeps its figure, marked, and says why under the table.
    assert_eq!(
        lines[5],
        "| `pseudoXOF-512` | 1024 B | 46.2 k ±3.1 % ⚠ | 45.1 | 22 µs | 46.5 | 100000 (5 × 20000) | 1.00× ⚠ |"
    );
    assert_eq!(
        lines[7],
        "⚠ `pseudoXOF-512` 1024 B: 1 kept trial(s) disturbed after 3 attempts (preempted: \
         waited 5.2 % of the trial for the CPU): stop other work on the measurement CPU and \
         measure again"
    );
    // Which baseline the column divides by.
    assert!(
        lines[9].starts_with("× pseudoXOF: mean cycles over `pseudoXOF`"),
        "{md}"
    );
    // The ⚠ on a ratio is explained too.
    assert_eq!(lines[10], crate::baseline::DOUBTFUL_RATIO_NOTE);
    assert_eq!(lines.len(), 11);
    assert_eq!(markdown(&demo::idle()), "");
}

#[test]
fn a_doubtful_row_is_marked_and_its_detail_says_why() {
    let mut app = demo::finished();
    app.focus = Panel::Results;
    let rows = app.result_rows();
    let at = rows
        .iter()
        .position(|r| r.key.label == "pseudoXOF-512" && r.key.input_bytes == 1024)
        .unwrap();
    assert_eq!(mark(&rows[at]).0, "⚠");
    assert_eq!(rows[at].retries, 2);
    app.results_cursor = at;
    let text = demo::draw_text(120, 10, |f| {
        render(f, f.area(), &app);
    });
    assert!(
        text.contains("⚠ pseudoXOF-512 1 KiB   46.2 k ±3.1 %"),
        "{text}"
    );
    assert!(
        text.contains("✓ sm3hash-256   32 B    1469 ±0.4 %"),
        "{text}"
    );
    assert!(
        text.contains("⚠ 1 kept trial(s) disturbed after 3 attempts"),
        "{text}"
    );
    assert!(text.contains("2 disturbed trial(s) re-run"), "{text}");
}

#[test]
fn runs_are_kept_apart_and_leaving_names_each_folder() {
    let app = demo::rerun();
    let rows = app.result_rows();
    // The second run's rows first, then the first run's four.
    let runs: Vec<usize> = rows.iter().map(|r| r.run).collect();
    assert_eq!(runs, [1, 1, 0, 0, 0, 0]);
    let text = demo::draw_text(120, 12, |f| {
        render(f, f.area(), &app);
    });
    assert!(text.contains("run     instance"), "{text}");
    assert!(text.contains("#2      sm3hash-256   32 B"), "{text}");
    assert!(text.contains("#1 base sm3hash-256   32 B"), "{text}");
    assert!(text.contains("baseline #1"), "{text}");
    let out = leaving_text(&app);
    let first = out
        .find("run #1 runs/demo-20260101T000000Z (baseline)")
        .unwrap();
    let second = out.find("run #2 runs/demo-20260101T000100Z").unwrap();
    assert!(first < second, "{out}");
    assert_eq!(out.matches("| instance | message |").count(), 2, "{out}");
    assert!(!out.contains("incomplete"), "{out}");
}

#[test]
fn leaving_an_unfinished_run_says_how_to_resume_it() {
    let mut app = demo::measuring();
    let out = leaving_text(&app);
    assert!(
        out.ends_with(
            "incomplete 1/4 — resume with `cyclescope run --resume runs/demo-20260101T000000Z`\n"
        ),
        "{out}"
    );
    app.read_only = true;
    assert!(!leaving_text(&app).contains("incomplete"));
}

#[test]
fn failed_rows_are_marked_and_narrow_tables_drop_columns() {
    let app = demo::fault();
    let wide = demo::draw_text(120, 6, |f| {
        render(f, f.area(), &app);
    });
    assert!(
        wide.contains("✗ sm3hash-256") && wide.contains("failed"),
        "{wide}"
    );
    assert!(wide.contains("CRASH: worker killed"), "{wide}");
    assert!(wide.contains("✓ pseudoXOF-512"), "{wide}");
    let narrow = demo::draw_text(40, 6, |f| {
        render(f, f.area(), &app);
    });
    assert!(
        narrow.contains("cycles") && !narrow.contains("MB/s"),
        "{narrow}"
    );
}

/// A doubtful Δ leads its detail line with what settles it: `B` (the A/B of the two builds)
/// where the instance was rebuilt in this session, else `=`, and `i` (instruction counts),
/// each by the key the keymap gives it; so does a Δ within the noise of two runs (`≈`); a Δ
/// with a verdict has no such lead.
#[test]
fn a_doubtful_delta_points_to_the_ab_of_builds_and_to_instruction_counts() {
    let mut app = demo::ab_builds();
    let rows = app.result_rows();
    let doubtful = &rows[app.results_cursor];
    let line = |app: &App, r: &ResultRow| {
        detail(app, r)
            .into_iter()
            .find(|(t, _)| t.starts_with('Δ'))
            .map(|(t, _)| t)
            .expect("a Δ line")
    };
    let text = line(&app, doubtful);
    assert!(
        text.starts_with("Δ ⚠ B: A/B of builds · i: instructions · vs run #1: 1469 → 1290 cycles"),
        "{text}"
    );
    let at_1k = |rows: &[ResultRow]| {
        rows.iter()
            .position(|r| r.run == 1 && r.key.input_bytes == 1024)
            .expect("run #2's 1 KiB row")
    };
    // ×0.874 between two runs is within what they stray by with the host.
    let noise = &rows[at_1k(&rows)];
    assert!(
        line(&app, noise).starts_with("Δ ≈ B: A/B of builds · i: instructions · vs run #1: "),
        "{}",
        line(&app, noise)
    );
    drop(rows);
    // Made 2.5× cheaper, it is faster beyond that: nothing to settle.
    for j in app.jobs.iter_mut() {
        if let crate::tui::app::JobState::Done(s) = &mut j.state
            && j.run == 1
            && j.key.input_bytes == 1024
        {
            s.mean_cycles = s.mean_cycles.map(|m| m / 2.5);
        }
    }
    let rows = app.result_rows();
    let settled = &rows[at_1k(&rows)];
    assert!(
        line(&app, settled).starts_with("Δ vs run #1: "),
        "{}",
        line(&app, settled)
    );
    drop(rows);
    // Without an earlier build of the instance, the A/B of two instances is the way.
    if let Some(src) = &mut app.sources {
        src.previous.clear();
    }
    let rows = app.result_rows();
    let text = line(&app, &rows[app.results_cursor]);
    assert!(
        text.starts_with("Δ ⚠ =: A/B of 2 instances · i: instructions · vs run #1"),
        "{text}"
    );
}
