//! Results panel: one row per finished job in the report's §4 layout (instance, message, mean
//! cycles, cycles/byte, mean time, MB/s, n) with a status mark, dropping right-hand columns
//! that do not fit. `markdown` prints the same rows as the report's table for the scrollback.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use super::{BAD, DIM, GOOD, WARN, block, cursor_style, scroll_start};
use crate::tui::app::{App, Panel, ResultRow};

/// The report's §4 header.
pub const HEADER: [&str; 7] = crate::report::PERF_HEADER;

/// The same columns, briefly, for narrow panels.
const SHORT_HEADER: [&str; 7] = ["instance", "msg", "cycles", "c/B", "time", "MB/s", "n"];

/// Column widths for `table` under `header`, and how many columns fit in `width` (dropping
/// from the right; the mark column and spacing included).
fn fit_columns(table: &[[String; 7]], header: &[&str; 7], width: u16) -> (Vec<u16>, usize) {
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
    widths[header.len() - 1] = widths[header.len() - 1].min(24);
    let mut shown = header.len();
    while shown > 2 && 2 + widths[..shown].iter().map(|w| w + 1).sum::<u16>() > width {
        shown -= 1;
    }
    (widths, shown)
}

/// A row's cells in §4 formatting; a failed job reads `failed` with its reason last.
pub fn cells(r: &ResultRow) -> [String; 7] {
    crate::report::perf_cells(r.key, r.summary, r.failure)
}

/// The status mark: ✓ clean, ⚠ usable with a caveat (incomplete, KAT not passed, fewer than
/// the guide's 100 measurements), ✗ failed. Disturbed trials that were re-run are no caveat:
/// the kept trials were undisturbed (they stay counted in the log and the record).
pub fn mark(r: &ResultRow) -> (&'static str, Style) {
    match r.summary {
        None => ("✗", Style::new().fg(BAD)),
        Some(s) if !s.status.is_complete() || !s.kat.is_pass() || s.measurements < 100 => {
            ("⚠", Style::new().fg(WARN))
        }
        Some(_) => ("✓", Style::new().fg(GOOD)),
    }
}

/// The finished jobs as the report's §4 Markdown table (empty when nothing finished).
pub fn markdown(app: &App) -> String {
    crate::report::perf_table(app.result_rows().iter().map(cells))
}

/// Draws the table; returns the body's area and first visible row.
pub fn render(frame: &mut Frame, area: Rect, app: &App) -> Option<(Rect, usize)> {
    let rows = app.result_rows();
    let (done, total) = app.run_counts();
    let title = if total > 0 {
        format!("Results · {done}/{total} jobs of this run")
    } else {
        format!("Results · {}", rows.len())
    };
    let blk = block(app, Panel::Results, title);
    let inner = blk.inner(area);
    frame.render_widget(blk, area);
    if rows.is_empty() {
        frame.render_widget(
            Paragraph::new(Line::from(Span::styled(
                "finished jobs appear here, one row per instance × length",
                Style::new().fg(DIM),
            ))),
            inner,
        );
        return None;
    }
    let table: Vec<[String; 7]> = rows.iter().map(cells).collect();
    // The report's headers when every column fits, else the short ones.
    let (mut header, (mut widths, mut shown)) = (HEADER, fit_columns(&table, &HEADER, inner.width));
    if shown < HEADER.len() {
        header = SHORT_HEADER;
        (widths, shown) = fit_columns(&table, &SHORT_HEADER, inner.width);
    }
    let body_h = usize::from(inner.height.saturating_sub(1));
    let first = scroll_start(app.results_cursor, body_h);
    let focused = app.focus == Panel::Results;
    let body: Vec<Row> = rows
        .iter()
        .zip(&table)
        .enumerate()
        .skip(first)
        .take(body_h)
        .map(|(i, (r, cells))| {
            let (m, style) = mark(r);
            let mut row = Row::new(
                std::iter::once(Cell::from(Span::styled(m, style))).chain(
                    cells[..shown]
                        .iter()
                        .map(|c| Cell::from(c.trim_matches('`').to_string())),
                ),
            );
            if i == app.results_cursor {
                row = row.style(cursor_style(focused));
            }
            row
        })
        .collect();
    let constraints: Vec<Constraint> = std::iter::once(Constraint::Length(1))
        .chain(widths[..shown].iter().map(|&w| Constraint::Length(w)))
        .collect();
    let header = Row::new(std::iter::once("").chain(header[..shown].iter().copied()))
        .style(Style::new().fg(DIM).add_modifier(Modifier::BOLD));
    frame.render_widget(
        Table::new(body, constraints)
            .header(header)
            .column_spacing(1),
        inner,
    );
    let body_area = Rect::new(
        inner.x,
        inner.y + 1,
        inner.width,
        inner.height.saturating_sub(1),
    );
    Some((body_area, first))
}

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
            "| instance | message | mean cycles | cycles/byte | mean time | MB/s | n |"
        );
        assert_eq!(lines[1], "|---|---|---|---|---|---|---|");
        assert_eq!(
            lines[2],
            "| `sm3hash-256` | 32 B | 1469 | 45.9 | 700 ns | 45.7 | 100000 (5 × 20000) |"
        );
        assert_eq!(
            lines[5],
            "| `pseudoXOF-512` | 1024 B | 46.2 k | 45.1 | 22 µs | 46.5 | 100000 (5 × 20000) |"
        );
        assert_eq!(lines.len(), 6);
        assert_eq!(markdown(&demo::idle()), "");
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
            narrow.contains("cycles c/B") && !narrow.contains("MB/s"),
            "{narrow}"
        );
    }
}
