//! The History chart's marks drawn over the rendered chart: per build an error bar from the
//! low to the high end of its 95 % interval (`┬ │ ┴`, a single `●` when the interval is
//! narrower than a row), the mean as `●`, `⚠` above a doubtful figure, and the build's number
//! under its bar. Cells are placed on the chart's own plot area, found from the axes' corner,
//! so the marks sit where the chart put the line through the means.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::symbols::line::{BOTTOM_LEFT, VERTICAL};

use super::super::{ACCENT, WARN};
use super::Bar;

/// The bars' colour (the highlighted build's is the accent).
const BAR: Color = Color::Gray;

/// The plot area of a chart drawn in `area`: right of the y axis, above the x axis (the
/// axes' corner), or the full height beside the y axis when the chart has no x axis (None
/// when it drew no y axis either).
fn plot_area(buf: &Buffer, area: Rect) -> Option<Rect> {
    let area = area.intersection(buf.area);
    let beside = |x: u16, bottom: u16| Rect::new(x + 1, area.top(), area.right() - x - 1, bottom);
    let corner = (area.top()..area.bottom()).rev().find_map(|y| {
        (area.left()..area.right())
            .find(|&x| buf[(x, y)].symbol() == BOTTOM_LEFT)
            .map(|x| beside(x, y - area.top()))
    });
    corner.or_else(|| {
        (area.left()..area.right())
            .find(|&x| buf[(x, area.top())].symbol() == VERTICAL)
            .map(|x| beside(x, area.height))
    })
}

/// Where a value lands in `span` cells from `start` (`up`: counted from the far end).
fn cell(value: f64, bounds: [f64; 2], start: u16, span: u16, up: bool) -> u16 {
    let t = ((value - bounds[0]) / (bounds[1] - bounds[0])).clamp(0.0, 1.0);
    let k = (t * f64::from(span.saturating_sub(1))).round() as u16;
    if up { start + span - 1 - k } else { start + k }
}

/// Draws the bars of `builds` on the chart rendered in `area` with bounds `x` and `y`.
pub(super) fn draw(
    buf: &mut Buffer,
    area: Rect,
    x: [f64; 2],
    y: [f64; 2],
    builds: &[Bar],
    cursor: usize,
) {
    let Some(plot) = plot_area(buf, area) else {
        return;
    };
    if plot.width == 0 || plot.height == 0 {
        return;
    }
    let row = |v: f64| cell(v, y, plot.top(), plot.height, true);
    // The label row is the one under the x axis.
    let label_row = plot.bottom() + 1;
    let mut labels_end = 0u16;
    for b in builds {
        let col = cell(b.x, x, plot.left(), plot.width, false);
        let colour = if b.index == cursor { ACCENT } else { BAR };
        let style = Style::new().fg(colour);
        let (top, bottom, mean) = (row(b.high), row(b.low), row(b.mean));
        if top < bottom {
            buf[(col, top)].set_symbol("┬").set_style(style);
            for r in top + 1..bottom {
                buf[(col, r)].set_symbol("│").set_style(style);
            }
            buf[(col, bottom)].set_symbol("┴").set_style(style);
        }
        buf[(col, mean)].set_symbol("●").set_style(style);
        if b.doubtful {
            // Above the bar, else beside its top when the bar reaches the top row.
            let at = if top > plot.top() {
                Some((col, top - 1))
            } else {
                (col + 1 < plot.right()).then_some((col + 1, top))
            };
            if let Some(at) = at {
                buf[at].set_symbol("⚠").set_style(Style::new().fg(WARN));
            }
        }
        // The build's number under its bar, where it does not run into the one before.
        let number = (b.index + 1).to_string();
        let width = number.len() as u16;
        let from = col.saturating_sub((width - 1) / 2);
        if label_row < area.bottom() && from >= labels_end && from + width <= area.right() {
            buf.set_string(from, label_row, &number, style);
            labels_end = from + width + 1;
        }
    }
}
