//! A figure's legend, drawn in a strip of its own beside the plot: inside the plot it would
//! sit over some series somewhere (the arm_1 uHash-1024 line ran under plotters' upper-right
//! box from 8 KiB to 64 KiB). The strip is as wide as its longest name needs.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{FONT, FigureError, err};

/// How an entry's sample is drawn: a stretch of its line with a point, or a cross.
pub(super) enum Mark {
    Line(ShapeStyle),
    Cross(ShapeStyle),
}

pub(super) struct Entry {
    pub(super) name: String,
    pub(super) mark: Mark,
}

/// Pixels: between rows, above the first row, inside the box, and the sample's length.
const ROW: i32 = 22;
const TOP: i32 = 60;
const PAD: i32 = 10;
const SAMPLE: i32 = 24;
/// A generous width of one character of the 13-pixel font (no font is measured, so the
/// figures stay the same on every machine).
const CHAR_W: f64 = 7.6;
const FONT_PX: u32 = 13;

/// The strip's width in pixels for `entries`.
pub(super) fn width(entries: &[Entry]) -> u32 {
    let longest = entries
        .iter()
        .map(|e| e.name.chars().count())
        .max()
        .unwrap_or(0);
    (longest as f64 * CHAR_W).ceil() as u32 + (SAMPLE + 4 * PAD) as u32
}

/// Draws the legend box and its entries into `area` (the strip).
pub(super) fn draw(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    entries: &[Entry],
) -> Result<(), FigureError> {
    if entries.is_empty() {
        return Ok(());
    }
    let (w, _) = area.dim_in_pixel();
    let rows = entries.len() as i32;
    area.draw(&Rectangle::new(
        [
            (0, TOP - ROW / 2 - 4),
            (w as i32 - PAD, TOP + ROW * rows - ROW / 2 + 4),
        ],
        BLACK.stroke_width(1),
    ))
    .map_err(err)?;
    let text = TextStyle::from((FONT, FONT_PX).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (i, e) in entries.iter().enumerate() {
        let (x, y) = (PAD, TOP + ROW * i as i32);
        match e.mark {
            Mark::Line(style) => {
                area.draw(&PathElement::new(vec![(x, y), (x + SAMPLE, y)], style))
                    .map_err(err)?;
                area.draw(&Circle::new((x + SAMPLE / 2, y), 3, style.filled()))
                    .map_err(err)?;
            }
            Mark::Cross(style) => area
                .draw(&Cross::new((x + SAMPLE / 2, y), 5, style))
                .map_err(err)?,
        }
        area.draw(&Text::new(
            e.name.clone(),
            (x + SAMPLE + PAD, y),
            text.clone(),
        ))
        .map_err(err)?;
    }
    Ok(())
}
