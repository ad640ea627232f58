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
use columns::{Cells, Fit, RunColumn};

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

/// The `× pseudoXOF` column's index.
const RATIO: usize = 7;

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
    let ab_cells = ab::cells(app);
    // An A/B row widens only the columns that stay longest; its interval and pairs take
    // the room the jobs leave them.
    let fitted: Vec<Vec<String>> = table
        .iter()
        .cloned()
        .chain(ab_cells.iter().map(|l| {
            let mut c = l.cells.clone();
            c[3..RATIO].iter_mut().for_each(String::clear);
            c
        }))
        .collect();
    let has_runs = runs.len() > 1 || app.baseline.is_some();
    // The Δ columns (a row measured earlier) come after the §4 columns; on a narrow panel
    // they give way to instance, message, mean cycles and the ratio, the earlier figure
    // first; then the run column shortens to `#1` and goes (`columns`).
    let deltas = delta::table(app, &rows);
    let delta_w = delta::widths(&deltas);
    let run_width = |mode| {
        rows.iter()
            .map(|r| r.run)
            .chain(ab_cells.iter().map(|l| l.run))
            .map(|run| run_cell_as(app, run, mode).chars().count())
            .max()
            .unwrap_or(2)
            .max(3) as u16
    };
    let Fit {
        mut header,
        mut widths,
        shown,
        delta_cols,
        run_mode,
        run_w,
    } = columns::fit(
        &Cells {
            table: &fitted,
            delta_w: (!deltas.is_empty()).then_some(delta_w),
            run_w: has_runs.then(|| (run_width(RunColumn::Full), run_width(RunColumn::Short))),
        },
        grid.width,
    );
    let run_col = run_mode != RunColumn::Hidden;
    // Room left over widens the cycles/byte and n columns to an A/B row's interval and
    // `÷ A`, each when it suffices.
    let mut used = 2
        + if run_col { run_w + 1 } else { 0 }
        + shown.iter().map(|&c| widths[c] + 1).sum::<u16>()
        + delta_cols.iter().map(|&k| delta_w[k] + 1).sum::<u16>();
    for c in [3, 6] {
        let want = ab_cells
            .iter()
            .map(|l| l.cells[c].chars().count() as u16)
            .max()
            .unwrap_or(0);
        if shown.contains(&c) && want > widths[c] && used + want - widths[c] <= grid.width {
            used += want - widths[c];
            widths[c] = want;
        }
    }
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
    // The A/B rows stay in sight below the jobs: up to half the body when the jobs scroll.
    let ab_h = if rows.len() + ab_cells.len() <= body_h {
        ab_cells.len()
    } else {
        ab_cells.len().min(body_h / 2)
    };
    let jobs_h = body_h - ab_h;
    let first = scroll_start(app.results_cursor, jobs_h);
    let blk = match scroll_hint(first, jobs_h, rows.len()) {
        Some(h) => blk.title_bottom(Line::from(h).right_aligned()),
        None => blk,
    };
    frame.render_widget(blk, area);
    let mut body: Vec<Row> = rows
        .iter()
        .zip(&table)
        .enumerate()
        .skip(first)
        .take(jobs_h)
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
    // The A/B results after the job rows.
    let run_text = |run: usize| run_cell_as(app, run, run_mode);
    let run_fn: &dyn Fn(usize) -> String = &run_text;
    body.extend(
        ab::rows(
            &ab_cells,
            &shown,
            &widths,
            run_col.then_some(run_fn),
            delta_cols.len(),
        )
        .into_iter()
        .take(ab_h),
    );
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
    // Only the job rows answer a click.
    let body_area = Rect::new(grid.x, grid.y + 1, grid.width, jobs_h as u16);
    Some((body_area, first))
}

mod ab;
mod columns;
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
mod tests;
