//! The report's §4 table with the `× pseudoXOF` column, as `run` and the workbench print it.

use crate::baseline;

/// The report's §4 table with the `× pseudoXOF` column last, as `run` and the workbench print
/// it: per row its §4 cells, whether the run added it as a reference job (marked), its ratio.
/// Empty without rows.
pub fn perf_table_with_ratio(
    counter: crate::counter::Counter,
    rows: impl IntoIterator<Item = ([String; 7], bool, Option<baseline::XofRatio>)>,
) -> String {
    let cells: Vec<Vec<String>> = rows
        .into_iter()
        .map(|(cells, reference, ratio)| {
            let mut c = cells.to_vec();
            if reference {
                c[0] += " (reference)";
            }
            c.push(baseline::ratio_cell(ratio));
            c
        })
        .collect();
    if cells.is_empty() {
        return String::new();
    }
    let mut header: Vec<&str> = super::perf_header(counter).to_vec();
    header.push(baseline::COLUMN);
    super::export::markdown(&header, &cells)
}
