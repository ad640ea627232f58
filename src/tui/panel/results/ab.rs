//! The Results panel's rows of the session's interleaved A/B results (`=`): one per length
//! after the job rows, marked `=`: B's label, the length, B/A with its 95 % interval, `÷ A`
//! with the pairs, and the verdict, in the §4 columns the panel shows. Not selectable; the printout
//! and the export carry the full table.

use ratatui::style::Style;
use ratatui::widgets::{Cell, Row};

use super::super::{BAD, DIM, GOOD};
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

/// The rows, with a run cell when the table has a run column and empty Δ cells.
pub fn rows(
    app: &App,
    shown: &[usize],
    run_cell: Option<&dyn Fn(usize) -> String>,
    delta_cols: usize,
) -> Vec<Row<'static>> {
    let mut out = Vec::new();
    for (run, ab) in &app.ab_results {
        for c in &ab.lengths {
            let colour = match c.ratio.map(|r| r.verdict()) {
                Some(PairedVerdict::Faster) => GOOD,
                Some(PairedVerdict::Slower) => BAD,
                _ => DIM,
            };
            let cells = std::iter::once(Cell::from("="))
                .chain(run_cell.map(|f| Cell::from(f(*run))))
                .chain(shown.iter().map(|&col| {
                    Cell::from(crate::sanitize::terminal(&cell(col, ab, c)).into_owned())
                }))
                .chain((0..delta_cols).map(|_| Cell::from("")));
            out.push(Row::new(cells.collect::<Vec<_>>()).style(Style::new().fg(colour)));
        }
    }
    out
}
