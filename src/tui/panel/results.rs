//! Results panel: one row per finished job in the report's §4 layout (instance, message, mean
//! cycles ± 95 % CI, cycles/byte, mean time, MB/s, n) with a status mark — ✓ clean, ⚠
//! doubtful (the core's doubt rule), ✗ failed — and, with several runs, a run column and the
//! earlier runs' rows dimmed, and last `× pseudoXOF` (`ratio_cell`: the session's baseline of
//! the same width; reference jobs marked `(ref)`). The row under the cursor is explained on
//! the detail lines.
//! `leaving_text` prints the same rows per run folder for the scrollback.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use super::{BAD, DIM, GOOD, WARN, block, cursor_style, fit, scroll_hint, scroll_start};
use crate::measure::doubt::Doubt;
use crate::tui::app::{App, Panel, ResultRow};

/// The report's §4 header.
pub const HEADER: [&str; 7] = crate::report::PERF_HEADER;

/// The panel's columns: the §4 ones, then the ratio to the baseline; `o` sorts by any.
pub const COLUMNS: [&str; 8] = [
    HEADER[0],
    HEADER[1],
    HEADER[2],
    HEADER[3],
    HEADER[4],
    HEADER[5],
    HEADER[6],
    crate::baseline::COLUMN,
];

/// The same columns, briefly, for narrow panels.
const SHORT_HEADER: [&str; 8] = [
    "instance", "msg", "cycles", "c/B", "time", "MB/s", "n", "×XOF",
];

/// The ratio column's cell of a row.
pub fn ratio_cell(r: &ResultRow) -> String {
    crate::baseline::ratio_cell(r.x_pseudoxof)
}

/// The panel's cells of a row: `cells`, the instance marked when it is a reference job, and
/// the ratio.
fn panel_cells(r: &ResultRow) -> Vec<String> {
    let mut c = cells(r).to_vec();
    if r.reference {
        // The label cell is Markdown code (`label`): shown without the backticks, marked.
        c[0] = format!("{} (ref)", c[0].trim_matches('`'));
    }
    c.push(ratio_cell(r));
    c
}

/// The order in which columns give way on a narrow panel: n, MB/s, mean time and
/// cycles/byte first; `× pseudoXOF`, the headline figure, only after them; then the mean.
/// Instance and message always stay.
const GIVE_WAY: [usize; 6] = [6, 5, 4, 3, RATIO, 2];

/// The `× pseudoXOF` column's index.
const RATIO: usize = 7;

/// Column widths for `table` under `header`, and the columns that fit in `width` in their
/// order (dropping by `GIVE_WAY`; the mark and run columns and spacing included in `fixed`).
fn fit_columns(
    table: &[Vec<String>],
    header: &[&str],
    width: u16,
    fixed: u16,
) -> (Vec<u16>, Vec<usize>) {
    let mut widths: Vec<u16> = (0..header.len())
        .map(|c| {
            table
                .iter()
                .map(|r| r[c].trim_matches('`').chars().count())
                .chain([header[c].chars().count()])
                .max()
                .unwrap_or(1) as u16
        })
        .collect();
    // The n column holds a failure's reason: cut it rather than crowd the ratio out.
    widths[6] = widths[6].min(24);
    let mut shown: Vec<usize> = (0..header.len()).collect();
    for column in GIVE_WAY {
        if fixed + shown.iter().map(|&c| widths[c] + 1).sum::<u16>() <= width {
            break;
        }
        shown.retain(|&c| c != column);
    }
    (widths, shown)
}

/// A row's cells in §4 formatting (the mean with its CI); a failed job reads `failed` with
/// its reason last. The mark has its own column here.
pub fn cells(r: &ResultRow) -> [String; 7] {
    let mut cells = crate::report::perf_cells_unmarked(r.key, r.summary, r.failure);
    if r.shared_label {
        // As `run` prints it: the label alone would not say which candidate this is.
        cells[0] = format!("`{}/{}`", r.key.candidate, r.key.label);
    }
    // The workbench writes lengths one way everywhere (64 KiB); the printed table keeps the
    // report's bytes.
    cells[1] = crate::format::size(r.key.input_bytes);
    cells
}

/// Why the row is not clean: the core's doubts about the figure and the job.
pub fn doubts<'a>(r: &ResultRow<'a>) -> &'a [Doubt] {
    r.summary.map_or(&[], |s| s.doubts.as_slice())
}

/// The status mark: ✓ clean, ⚠ doubtful or with a caveat (see `doubts`), ✗ failed.
pub fn mark(r: &ResultRow) -> (&'static str, Style) {
    match r.summary {
        None => ("✗", Style::new().fg(BAD)),
        Some(_) if !doubts(r).is_empty() => ("⚠", Style::new().fg(WARN)),
        Some(_) => ("✓", Style::new().fg(GOOD)),
    }
}

/// How much of the run column a panel of some width can afford: `#1 base`, `#1` (the
/// title names the baseline), or none. It gives way before the figures do.
#[derive(Clone, Copy, PartialEq)]
enum RunColumn {
    Full,
    Short,
    Hidden,
}

/// `#2`, and ` base` for the pinned baseline when `mode` has room for it (`Hidden` reads
/// as `Short`; no cell is drawn then).
fn run_cell_as(app: &App, run: usize, mode: RunColumn) -> String {
    if mode == RunColumn::Full && app.baseline == Some(run) {
        format!("#{} base", run + 1)
    } else {
        format!("#{}", run + 1)
    }
}

/// The detail of a row, one text per line: its run, then why it is not clean (or that it
/// is), the disturbed trials re-run, a failure's stderr tail.
pub fn detail(app: &App, r: &ResultRow) -> Vec<(String, ratatui::style::Color)> {
    let mut out = Vec::new();
    let folder = app
        .runs
        .get(r.run)
        .map(|d| crate::sanitize::terminal_path(d))
        .unwrap_or_default();
    let retries = if r.retries > 0 {
        format!(" · {} disturbed trial(s) re-run", r.retries)
    } else {
        String::new()
    };
    out.push((
        format!("{} · run #{} {folder}{retries}", r.key, r.run + 1),
        DIM,
    ));
    out.extend(delta::detail(app, r));
    if let Some(why) = r.failure {
        out.push((format!("✗ {}", crate::sanitize::terminal(why)), BAD));
        if let Some(line) = r
            .stderr_tail
            .and_then(|t| t.lines().rev().find(|l| !l.trim().is_empty()))
        {
            out.push((
                format!("  stderr│ {}", crate::sanitize::terminal(line)),
                BAD,
            ));
        }
    } else if doubts(r).is_empty() {
        out.push(("✓ no doubt about this figure".into(), GOOD));
    } else {
        for d in doubts(r) {
            out.push((format!("⚠ {}", d.text()), WARN));
        }
    }
    // The figure preemption cannot move, beside the mean it does (`measure::robust`).
    if r.failure.is_none()
        && let Some(x) = r.summary.and_then(|s| s.robust.as_ref())
    {
        out.push((format!("  {}", x.describe()), DIM));
    }
    out
}

/// Draws the table; returns the body's area and first visible row.
pub fn render(frame: &mut Frame, area: Rect, app: &App) -> Option<(Rect, usize)> {
    let rows = app.result_rows();
    let runs = app.result_runs();
    let newest = runs.last().copied();
    let (done, total) = app.run_counts();
    let mut title = if total > 0 && !app.runs.is_empty() {
        format!("Results · {done}/{total} jobs of run #{}", app.runs.len())
    } else {
        format!("Results · {}", rows.len())
    };
    if runs.len() > 1 {
        title += " · earlier runs dimmed";
    }
    if let Some(b) = app.baseline {
        title += &format!(" · baseline #{}", b + 1);
    }
    if let Some((c, descending)) = app.results_sort {
        let arrow = if descending { "▼" } else { "▲" };
        title += &format!(" · by {} {arrow}", COLUMNS[c]);
    }
    // Which baseline the ratios divide by, once there is a ratio to read.
    if rows.iter().any(|r| r.x_pseudoxof.is_some()) {
        let base = &app.xof_baseline.candidate;
        let long = format!(" · × pseudoXOF of {base}");
        let room = usize::from(area.width).saturating_sub(4);
        title += &if title.chars().count() + long.chars().count() <= room {
            long
        } else {
            format!(" · ÷ {base}")
        };
    }
    let blk = block(app, Panel::Results, title);
    let inner = blk.inner(area);
    if rows.is_empty() {
        frame.render_widget(blk, area);
        frame.render_widget(
            Paragraph::new(Line::from(Span::styled(
                "finished jobs appear here, one row per instance × length",
                Style::new().fg(DIM),
            ))),
            inner,
        );
        return None;
    }
    // The detail of the row under the cursor; a small panel gives its rows priority unless
    // the operator is in it.
    let focused = app.focus == Panel::Results;
    let detail_h: u16 = match inner.height {
        0..=4 => 0,
        5..=7 if focused => 1,
        5..=7 => 0,
        _ => 2,
    };
    let [grid, detail_area] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(detail_h)]).areas(inner);
    let table: Vec<Vec<String>> = rows.iter().map(panel_cells).collect();
    let has_runs = runs.len() > 1 || app.baseline.is_some();
    // The Δ columns (a row measured earlier) come after the §4 columns; on a narrow panel
    // they give way to instance, message, mean cycles and the ratio, the earlier figure
    // first; then the run column shortens to `#1` and goes.
    let deltas = delta::table(app, &rows);
    let delta_w = delta::widths(&deltas);
    let delta_choices: &[&[usize]] = if deltas.is_empty() {
        &[&[]]
    } else {
        &[&[0, 1, 2], &[1, 2], &[]]
    };
    let run_modes: &[RunColumn] = if has_runs {
        &[RunColumn::Full, RunColumn::Short, RunColumn::Hidden]
    } else {
        &[RunColumn::Hidden]
    };
    let (mut header, mut widths, mut shown, mut delta_cols) =
        (COLUMNS, vec![], Vec::new(), &[][..]);
    let (mut run_mode, mut run_w) = (RunColumn::Hidden, 0u16);
    'fit: for &mode in run_modes {
        run_mode = mode;
        run_w = if mode == RunColumn::Hidden {
            0
        } else {
            rows.iter()
                .map(|r| run_cell_as(app, r.run, mode).chars().count())
                .max()
                .unwrap_or(2)
                .max(3) as u16
        };
        let base_fixed = 2 + if mode == RunColumn::Hidden {
            0
        } else {
            run_w + 1
        };
        for cols in delta_choices {
            let fixed = base_fixed + cols.iter().map(|&c| delta_w[c] + 1).sum::<u16>();
            // The report's headers when every column fits, else the short ones.
            header = COLUMNS;
            (widths, shown) = fit_columns(&table, &COLUMNS, grid.width, fixed);
            if shown.len() < COLUMNS.len() {
                header = SHORT_HEADER;
                (widths, shown) = fit_columns(&table, &SHORT_HEADER, grid.width, fixed);
            }
            delta_cols = cols;
            if shown.len() >= 3 && shown.contains(&RATIO) {
                break 'fit;
            }
        }
    }
    let run_col = run_mode != RunColumn::Hidden;
    // An instruction count's figures are named so (no longer than the cycles' names, so the
    // widths fitted above hold).
    let summaries: Vec<&crate::vocabulary::JobSummary> =
        rows.iter().filter_map(|r| r.summary).collect();
    if crate::report::counter_of(summaries.iter().copied()) == crate::counter::Counter::Instructions
    {
        let short = header == SHORT_HEADER;
        header[2] = if short { "instr" } else { "instr/call" };
        header[3] = if short { "i/B" } else { "instr/B" };
    }
    let body_h = usize::from(grid.height.saturating_sub(1));
    let first = scroll_start(app.results_cursor, body_h);
    let blk = match scroll_hint(first, body_h, rows.len()) {
        Some(h) => blk.title_bottom(Line::from(h).right_aligned()),
        None => blk,
    };
    frame.render_widget(blk, area);
    let mut body: Vec<Row> = rows
        .iter()
        .zip(&table)
        .enumerate()
        .skip(first)
        .take(body_h)
        .map(|(i, (r, cells))| {
            let (m, style) = mark(r);
            let run = run_col.then(|| Cell::from(run_cell_as(app, r.run, run_mode)));
            let delta_cells: Vec<Cell> = delta_cols
                .iter()
                .map(|&k| match deltas.get(i) {
                    Some(Some((d, c))) if k == 2 => Cell::from(Span::styled(
                        c[k].clone(),
                        Style::new().fg(delta::word(&d.verdict).1),
                    )),
                    Some(Some((_, c))) => Cell::from(c[k].clone()),
                    _ => Cell::from(""),
                })
                .collect();

            let mut row = Row::new(
                std::iter::once(Cell::from(Span::styled(m, style)))
                    .chain(run)
                    .chain(
                        shown
                            .iter()
                            .map(|&c| Cell::from(cells[c].trim_matches('`').to_string())),
                    )
                    .chain(delta_cells),
            );
            if Some(r.run) != newest {
                row = row.style(Style::new().fg(DIM));
            }
            if i == app.results_cursor {
                row = row.style(cursor_style(focused));
            }
            row
        })
        .collect();
    // The A/B results after the job rows, when there is room below them.
    if body.len() < body_h {
        let run_text = |run: usize| run_cell_as(app, run, run_mode);
        let run_fn: &dyn Fn(usize) -> String = &run_text;
        body.extend(
            ab::rows(app, &shown, run_col.then_some(run_fn), delta_cols.len())
                .into_iter()
                .take(body_h - body.len()),
        );
    }
    let constraints: Vec<Constraint> = std::iter::once(Constraint::Length(1))
        .chain(run_col.then_some(Constraint::Length(run_w)))
        .chain(shown.iter().map(|&c| Constraint::Length(widths[c])))
        .chain(delta_cols.iter().map(|&k| Constraint::Length(delta_w[k])))
        .collect();
    let header = Row::new(
        std::iter::once("")
            .chain(run_col.then_some("run"))
            .chain(shown.iter().map(|&c| header[c]))
            .chain(delta_cols.iter().map(|&k| delta::HEADER[k])),
    )
    .style(Style::new().fg(DIM).add_modifier(Modifier::BOLD));
    frame.render_widget(
        Table::new(body, constraints)
            .header(header)
            .column_spacing(1),
        grid,
    );
    if let Some(r) = rows.get(app.results_cursor) {
        let width = usize::from(detail_area.width);
        let lines: Vec<Line> = detail(app, r)
            .into_iter()
            .skip(1)
            .chain(detail(app, r).into_iter().take(1))
            .take(usize::from(detail_h))
            .map(|(t, c)| Line::from(Span::styled(fit(&t, width), Style::new().fg(c))))
            .collect();
        frame.render_widget(Paragraph::new(lines), detail_area);
    }
    let body_area = Rect::new(
        grid.x,
        grid.y + 1,
        grid.width,
        grid.height.saturating_sub(1),
    );
    Some((body_area, first))
}

mod ab;
mod delta;
#[cfg(test)]
mod narrow_tests;
mod printed;

#[cfg(test)]
pub use delta::cells as delta_cells;
#[cfg(test)]
pub use printed::markdown;
pub use printed::{incomplete_line, leaving_text};

#[cfg(test)]
mod tests {
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
}
