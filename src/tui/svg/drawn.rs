//! The cells a screenshot draws instead of writing: braille (the charts' dots) and the lower
//! block elements (the histogram's bars). A font renders braille as scattered dots and stacked
//! blocks with seams between rows, so a curve would read as noise. Braille dots become one
//! stroked path per colour, each dot joined to its set neighbours (a line the chart drew
//! stays one line, a dashed one keeps its gaps); blocks become rectangles. Never writes text.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use ratatui::buffer::Buffer;

use super::{CELL_H, CELL_W, look};

/// Braille's dot bits in Unicode order (dots 1–8) as (column, row) within a 2×4 cell.
const DOTS: [(u32, u32); 8] = [
    (0, 0),
    (0, 1),
    (0, 2),
    (1, 0),
    (1, 1),
    (1, 2),
    (0, 3),
    (1, 3),
];

/// A braille pattern's dot bits (None for any other symbol; `⠀` has none set).
fn braille(symbol: &str) -> Option<u8> {
    let c = u32::from(symbol.chars().next()?);
    (0x2800..=0x28FF).contains(&c).then(|| (c - 0x2800) as u8)
}

/// Eighths of the cell a lower block fills (`▁` 1 … `█` 8).
fn lower_block(symbol: &str) -> Option<u32> {
    let c = u32::from(symbol.chars().next()?);
    (0x2581..=0x2588).contains(&c).then(|| c - 0x2580)
}

/// True for the symbols this module draws (the text writer leaves them out).
pub(super) fn is_drawn(symbol: &str) -> bool {
    braille(symbol).is_some() || lower_block(symbol).is_some()
}

/// The drawn cells of `buf`, appended to `out` as SVG elements.
pub(super) fn shapes(buf: &Buffer, out: &mut String) {
    // Colour → dots (column, row in dot units), and colour → block rectangles.
    let mut dots: BTreeMap<String, BTreeSet<(u32, u32)>> = BTreeMap::new();
    let mut blocks: BTreeMap<String, Vec<(u16, u16, u32)>> = BTreeMap::new();
    let (w, h) = (buf.area.width, buf.area.height);
    for y in 0..h {
        for x in 0..w {
            let cell = &buf[(x, y)];
            let fg = look(cell).0;
            if let Some(bits) = braille(cell.symbol()) {
                let set = dots.entry(fg).or_default();
                for (i, &(c, r)) in DOTS.iter().enumerate() {
                    if bits & (1 << i) != 0 {
                        set.insert((u32::from(x) * 2 + c, u32::from(y) * 4 + r));
                    }
                }
            } else if let Some(eighths) = lower_block(cell.symbol()) {
                blocks.entry(fg).or_default().push((x, y, eighths));
            }
        }
    }
    for (fg, cells) in &blocks {
        let mut d = String::new();
        for &(x, y, eighths) in cells {
            let height = CELL_H * f64::from(eighths) / 8.0;
            let _ = write!(
                d,
                "M{:.1} {:.2}h{CELL_W}v{height:.3}h-{CELL_W}z",
                f64::from(x) * CELL_W,
                f64::from(y + 1) * CELL_H - height
            );
        }
        let _ = writeln!(out, r#"<path class="blocks" fill="{fg}" d="{d}"/>"#);
    }
    for (fg, set) in &dots {
        let _ = writeln!(
            out,
            r#"<path class="braille" fill="none" stroke="{fg}" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" d="{}"/>"#,
            braille_path(set)
        );
    }
}

/// The centre of a dot, in the picture's units.
fn centre((c, r): (u32, u32)) -> (f64, f64) {
    (
        (f64::from(c) + 0.5) * CELL_W / 2.0,
        (f64::from(r) + 0.5) * CELL_H / 4.0,
    )
}

/// One segment from each dot to each set neighbour ahead of it (right, below and the two
/// diagonals below), and a dot of its own for a dot with no neighbour.
fn braille_path(set: &BTreeSet<(u32, u32)>) -> String {
    let mut d = String::new();
    let near = |c: u32, r: u32| -> bool {
        [
            (-1i64, -1i64),
            (0, -1),
            (1, -1),
            (-1, 0),
            (1, 0),
            (-1, 1),
            (0, 1),
            (1, 1),
        ]
        .iter()
        .any(|&(dc, dr)| {
            let (nc, nr) = (i64::from(c) + dc, i64::from(r) + dr);
            nc >= 0 && nr >= 0 && set.contains(&(nc as u32, nr as u32))
        })
    };
    for &(c, r) in set {
        let (x0, y0) = centre((c, r));
        if !near(c, r) {
            let _ = write!(d, "M{x0:.2} {y0:.3}h0.01");
            continue;
        }
        let ahead = [(c + 1, r), (c, r + 1), (c + 1, r + 1)]
            .into_iter()
            .chain(c.checked_sub(1).map(|left| (left, r + 1)));
        for n in ahead.filter(|n| set.contains(n)) {
            let (x1, y1) = centre(n);
            let _ = write!(d, "M{x0:.2} {y0:.3}L{x1:.2} {y1:.3}");
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::style::{Color, Style};
    use ratatui::symbols::Marker;
    use ratatui::widgets::{Axis, Chart, Dataset, GraphType};

    /// The connected pieces of one colour's braille path: segments that share an end are one
    /// piece. Returns each piece's number of segments.
    fn pieces(svg: &str, stroke: &str) -> Vec<usize> {
        let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
        let d = doc
            .descendants()
            .find(|n| {
                n.attribute("class") == Some("braille") && n.attribute("stroke") == Some(stroke)
            })
            .and_then(|n| n.attribute("d"))
            .unwrap_or_else(|| panic!("no braille path in {stroke}:\n{svg}"));
        let mut segs: Vec<(String, String)> = Vec::new();
        for part in d.split('M').filter(|p| !p.is_empty()) {
            let (a, b) = part.split_once(['L', 'h']).expect("a segment");
            segs.push((a.to_string(), b.to_string()));
        }
        // Union of segments through shared end points.
        let mut group: Vec<usize> = (0..segs.len()).collect();
        fn root(g: &mut [usize], mut i: usize) -> usize {
            while g[i] != i {
                i = g[i];
            }
            i
        }
        for i in 0..segs.len() {
            for j in 0..i {
                let (a, b) = (&segs[i], &segs[j]);
                if a.0 == b.0 || a.0 == b.1 || a.1 == b.0 || a.1 == b.1 {
                    let (ri, rj) = (root(&mut group, i), root(&mut group, j));
                    group[ri] = rj;
                }
            }
        }
        let mut sizes = std::collections::BTreeMap::new();
        for i in 0..segs.len() {
            *sizes.entry(root(&mut group, i)).or_insert(0) += 1;
        }
        sizes.into_values().collect()
    }

    #[test]
    fn a_solid_braille_line_is_one_stroke_and_a_dashed_one_keeps_its_dashes() {
        let solid: Vec<(f64, f64)> = vec![(5.0, 1.0), (8.0, 3.0), (10.0, 2.5), (16.0, 6.0)];
        let raised: Vec<(f64, f64)> = solid.iter().map(|&(x, y)| (x, y + 3.0)).collect();
        let dashed = crate::tui::panel::curve::dashed(&raised, 60.0 * 2.0 / 11.0);
        let mut term = Terminal::new(TestBackend::new(60, 16)).unwrap();
        term.draw(|f| {
            let chart = Chart::new(vec![
                Dataset::default()
                    .marker(Marker::Braille)
                    .graph_type(GraphType::Line)
                    .style(Style::new().fg(Color::Cyan))
                    .data(&solid),
                Dataset::default()
                    .marker(Marker::Braille)
                    .graph_type(GraphType::Scatter)
                    .style(Style::new().fg(Color::Green))
                    .data(&dashed),
            ])
            .x_axis(Axis::default().bounds([5.0, 16.0]))
            .y_axis(Axis::default().bounds([0.0, 10.0]));
            f.render_widget(chart, f.area());
        })
        .unwrap();
        let svg = super::super::render(term.backend().buffer(), "chart");
        // Nothing of the chart is left to a font.
        assert!(
            !svg.chars().any(|c| ('\u{2801}'..='\u{28ff}').contains(&c)),
            "{svg}"
        );
        let line = pieces(&svg, "#11a8cd");
        assert_eq!(line.len(), 1, "the solid line breaks into {line:?}");
        let dashes = pieces(&svg, "#0dbc79");
        assert!(
            dashes.len() >= 5 && dashes.iter().all(|&n| n >= 1),
            "the dashed line reads as {dashes:?}"
        );
    }

    #[test]
    fn lower_blocks_are_filled_from_the_cell_bottom() {
        let mut buf = ratatui::buffer::Buffer::empty(ratatui::layout::Rect::new(0, 0, 3, 1));
        buf.set_string(0, 0, "█▄", Style::new().fg(Color::Blue));
        let svg = super::super::render(&buf, "bars");
        assert!(
            svg.contains(r##"<path class="blocks" fill="#2472c8" d="M0.0 0.00h8.4v17.000h-8.4zM8.4 8.50h8.4v8.500h-8.4z"/>"##),
            "{svg}"
        );
        assert!(!svg.contains('█') && !svg.contains('▄'), "{svg}");
    }
}
