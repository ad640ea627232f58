//! Which of the Results panel's columns a width affords, and how wide each is. Instance,
//! message, the mean and `× pseudoXOF` stay longest; n, MB/s, mean time and cycles/byte give
//! way first, then the Δ columns (the earlier figure first), then the run column (`#1 base`
//! shortens to `#1`, then goes). The A/B rows' cells count in the widths like the jobs'.

use super::{COLUMNS, RATIO, SHORT_HEADER};

/// The order in which columns give way on a narrow panel: n, MB/s, mean time and
/// cycles/byte first; `× pseudoXOF`, the headline figure, only after them; then the mean.
/// Instance and message always stay.
const GIVE_WAY: [usize; 6] = [6, 5, 4, 3, RATIO, 2];

/// How much of the run column a panel of some width can afford: `#1 base`, `#1` (the
/// title names the baseline), or none. It gives way before the figures do.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum RunColumn {
    Full,
    Short,
    Hidden,
}

/// The layout chosen for a width.
pub struct Fit {
    /// The report's headers, or the short ones when a column had to go.
    pub header: [&'static str; 8],
    /// Every §4 column's width (shown or not).
    pub widths: Vec<u16>,
    /// The §4 columns shown, in order.
    pub shown: Vec<usize>,
    /// The Δ columns shown.
    pub delta_cols: &'static [usize],
    pub run_mode: RunColumn,
    pub run_w: u16,
}

/// What the fitting weighs: the cells of every row (jobs, then A/B), the Δ columns' widths
/// (none when no row has a Δ), and the run cells' widths per mode (None: no run column).
pub struct Cells<'a> {
    pub table: &'a [Vec<String>],
    pub delta_w: Option<[u16; 3]>,
    pub run_w: Option<(u16, u16)>,
}

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

/// The columns for a panel `width` cells wide: the first layout, in the order things give
/// way, that keeps `× pseudoXOF` and the mean; else the narrowest.
pub fn fit(cells: &Cells, width: u16) -> Fit {
    let delta_choices: &[&'static [usize]] = if cells.delta_w.is_some() {
        &[&[0, 1, 2], &[1, 2], &[]]
    } else {
        &[&[]]
    };
    let run_modes: &[RunColumn] = if cells.run_w.is_some() {
        &[RunColumn::Full, RunColumn::Short, RunColumn::Hidden]
    } else {
        &[RunColumn::Hidden]
    };
    let delta_w = cells.delta_w.unwrap_or_default();
    let mut best = None;
    for &run_mode in run_modes {
        let run_w = match (run_mode, cells.run_w) {
            (RunColumn::Full, Some((full, _))) => full,
            (RunColumn::Short, Some((_, short))) => short,
            _ => 0,
        };
        let base_fixed = 2 + if run_w == 0 { 0 } else { run_w + 1 };
        for &delta_cols in delta_choices {
            let fixed = base_fixed + delta_cols.iter().map(|&c| delta_w[c] + 1).sum::<u16>();
            let (mut header, (mut widths, mut shown)) =
                (COLUMNS, fit_columns(cells.table, &COLUMNS, width, fixed));
            if shown.len() < COLUMNS.len() {
                header = SHORT_HEADER;
                (widths, shown) = fit_columns(cells.table, &SHORT_HEADER, width, fixed);
            }
            let keeps = shown.len() >= 3 && shown.contains(&RATIO);
            best = Some(Fit {
                header,
                widths,
                shown,
                delta_cols,
                run_mode,
                run_w,
            });
            if keeps {
                return best.unwrap_or_else(|| unreachable!());
            }
        }
    }
    best.unwrap_or_else(|| unreachable!("at least one layout is tried"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cells: [&str; 8]) -> Vec<String> {
        cells.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn the_run_column_and_delta_go_before_the_mean_and_the_ratio() {
        let table = [row([
            "`sm3hash-256`",
            "32 B",
            "1455 ±0.4 %",
            "45.5",
            "693 ns",
            "46.2",
            "100000 (5 × 20000)",
            "1.00× ⚠",
        ])];
        let cells = Cells {
            table: &table,
            delta_w: Some([7, 6, 10]),
            run_w: Some((7, 3)),
        };
        let wide = fit(&cells, 160);
        assert_eq!(wide.shown, (0..8).collect::<Vec<_>>());
        assert_eq!(
            (wide.run_mode, wide.delta_cols),
            (RunColumn::Full, &[0, 1, 2][..])
        );
        // 2 + instance 12 + msg 5 + mean 12 + ratio 8 = 39 with their spaces.
        let narrow = fit(&cells, 40);
        assert_eq!(narrow.shown, [0, 1, 2, RATIO]);
        assert_eq!(narrow.run_mode, RunColumn::Hidden);
        assert!(narrow.delta_cols.is_empty());
        // Four cells more: the short run column comes back, Δ still not.
        let with_run = fit(&cells, 43);
        assert_eq!(with_run.shown, [0, 1, 2, RATIO]);
        assert_eq!(with_run.run_mode, RunColumn::Short);
        assert!(with_run.delta_cols.is_empty());
    }
}
