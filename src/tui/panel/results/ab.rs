//! The Results panel's rows of the session's interleaved A/B results (`=`): one per length
//! after the job rows, marked `=`: B's label, the length, B/A with its 95 % interval, `÷ A`
//! with the pairs, and the verdict, in the §4 columns the panel shows (the label, length,
//! ratio and verdict count in the columns' widths; the interval and `÷ A` widen theirs only
//! into room left over). Not selectable, and kept in sight below the jobs when these scroll;
//! the printout and the export carry the full table.

use ratatui::style::{Color, Style};
use ratatui::widgets::{Cell, Row};

use super::super::{BAD, DIM, GOOD, fit};
use crate::campaign::ab_result::AbResult;
use crate::measure::paired::PairedVerdict;
use crate::tui::app::App;

/// The cell of §4 column `column` for one length of an A/B result.
fn cell(column: usize, ab: &AbResult, c: &crate::campaign::LiveComparison) -> String {
    let r = c.ratio.as_ref();
    match column {
        0 => ab.b.label.clone(),
        1 => crate::format::size(c.input_bytes),
        2 => r.map_or_else(|| "no interval".into(), |r| format!("B/A {:.3}", r.ratio)),
        3 => r.map_or_else(String::new, |r| {
            format!("{:.3}…{:.3}", r.ci95_low, r.ci95_high)
        }),
        6 => format!("÷ {} · {} pairs", ab.a.label, r.map_or(0, |r| r.pairs)),
        7 => match r.map(|r| r.verdict()) {
            Some(PairedVerdict::Faster) => "B faster".into(),
            Some(PairedVerdict::Slower) => "B slower".into(),
            Some(PairedVerdict::Indistinguishable) => "≈ same".into(),
            None => String::new(),
        },
        _ => String::new(),
    }
}

/// One length of an A/B result as the panel lists it: its run, its eight cells (sanitized)
/// and the verdict's colour.
pub struct AbLine {
    pub run: usize,
    pub cells: Vec<String>,
    colour: Color,
}

/// The session's A/B results, one line per length, in the order they were measured.
pub fn cells(app: &App) -> Vec<AbLine> {
    let mut out = Vec::new();
    for (run, ab) in &app.ab_results {
        for c in &ab.lengths {
            let colour = match c.ratio.map(|r| r.verdict()) {
                Some(PairedVerdict::Faster) => GOOD,
                Some(PairedVerdict::Slower) => BAD,
                _ => DIM,
            };
            let cells = (0..8)
                .map(|col| crate::sanitize::terminal(&cell(col, ab, c)).into_owned())
                .collect();
            out.push(AbLine {
                run: *run,
                cells,
                colour,
            });
        }
    }
    out
}

/// The rows of `lines` in the `shown` columns of `widths` (a cell too long for its column
/// ends in `…`; an interval too long is left out), with a run cell when the table has a run column and empty Δ cells.
pub fn rows(
    lines: &[AbLine],
    shown: &[usize],
    widths: &[u16],
    run_cell: Option<&dyn Fn(usize) -> String>,
    delta_cols: usize,
) -> Vec<Row<'static>> {
    lines
        .iter()
        .map(|l| {
            let cells = std::iter::once(Cell::from("="))
                .chain(run_cell.map(|f| Cell::from(f(l.run))))
                .chain(shown.iter().map(|&col| {
                    let (text, width) = (&l.cells[col], usize::from(widths[col]));
                    // A cut interval would read as another number: whole or not at all.
                    if col == 3 && text.chars().count() > width {
                        Cell::from("")
                    } else {
                        Cell::from(fit(text, width))
                    }
                }))
                .chain((0..delta_cols).map(|_| Cell::from("")));
            Row::new(cells.collect::<Vec<_>>()).style(Style::new().fg(l.colour))
        })
        .collect()
}
