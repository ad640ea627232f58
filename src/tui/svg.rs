//! A terminal buffer as an SVG picture: one monospace cell per buffer cell, background runs as
//! rectangles, text runs with their colour, boldness and underline; braille and block cells
//! drawn as shapes (`drawn`), so curves and bars stay whole in any renderer. Deterministic (no
//! fonts measured, no time stamps), so screenshots in the repository only change when the
//! screen does.

use std::fmt::Write;

use ratatui::buffer::{Buffer, Cell};
use ratatui::style::{Color, Modifier};

mod drawn;

pub(crate) const CELL_W: f64 = 8.4;
pub(crate) const CELL_H: f64 = 17.0;
const FONT_SIZE: f64 = 14.0;
const DEFAULT_FG: &str = "#d4d4d4";
const DEFAULT_BG: &str = "#1e1e1e";

/// The xterm colour of a ratatui colour (None for the terminal default).
pub fn hex(c: Color) -> Option<String> {
    const BASE: [&str; 16] = [
        "#000000", "#cd3131", "#0dbc79", "#e5e510", "#2472c8", "#bc3fbc", "#11a8cd", "#e5e5e5",
        "#666666", "#f14c4c", "#23d18b", "#f5f543", "#3b8eea", "#d670d6", "#29b8db", "#ffffff",
    ];
    let idx = match c {
        Color::Reset => return None,
        Color::Rgb(r, g, b) => return Some(format!("#{r:02x}{g:02x}{b:02x}")),
        Color::Black => 0,
        Color::Red => 1,
        Color::Green => 2,
        Color::Yellow => 3,
        Color::Blue => 4,
        Color::Magenta => 5,
        Color::Cyan => 6,
        Color::Gray => 7,
        Color::DarkGray => 8,
        Color::LightRed => 9,
        Color::LightGreen => 10,
        Color::LightYellow => 11,
        Color::LightBlue => 12,
        Color::LightMagenta => 13,
        Color::LightCyan => 14,
        Color::White => 15,
        Color::Indexed(i) => return Some(indexed(i)),
    };
    Some(BASE[idx].to_string())
}

fn indexed(i: u8) -> String {
    match i {
        0..=15 => hex(Color::Indexed(i).into_base()).unwrap_or_else(|| DEFAULT_FG.into()),
        16..=231 => {
            let i = i - 16;
            let level = |v: u8| if v == 0 { 0 } else { 55 + 40 * v };
            format!(
                "#{:02x}{:02x}{:02x}",
                level(i / 36),
                level((i / 6) % 6),
                level(i % 6)
            )
        }
        _ => {
            let v = 8 + 10 * (i - 232);
            format!("#{v:02x}{v:02x}{v:02x}")
        }
    }
}

trait IntoBase {
    fn into_base(self) -> Color;
}

impl IntoBase for Color {
    fn into_base(self) -> Color {
        const NAMED: [Color; 16] = [
            Color::Black,
            Color::Red,
            Color::Green,
            Color::Yellow,
            Color::Blue,
            Color::Magenta,
            Color::Cyan,
            Color::Gray,
            Color::DarkGray,
            Color::LightRed,
            Color::LightGreen,
            Color::LightYellow,
            Color::LightBlue,
            Color::LightMagenta,
            Color::LightCyan,
            Color::White,
        ];
        match self {
            Color::Indexed(i) if i < 16 => NAMED[usize::from(i)],
            other => other,
        }
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The colours and weight a cell is drawn with (reversed cells swap their colours).
pub(crate) fn look(cell: &Cell) -> (String, Option<String>, bool, bool) {
    let fg = hex(cell.fg);
    let bg = hex(cell.bg);
    let m = cell.modifier;
    let (fg, bg) = if m.contains(Modifier::REVERSED) {
        (
            bg.unwrap_or_else(|| DEFAULT_BG.into()),
            Some(fg.unwrap_or_else(|| DEFAULT_FG.into())),
        )
    } else {
        (fg.unwrap_or_else(|| DEFAULT_FG.into()), bg)
    };
    (
        fg,
        bg,
        m.contains(Modifier::BOLD),
        m.contains(Modifier::UNDERLINED),
    )
}

/// Renders `buf` as a standalone SVG document with `title` as its accessible name.
pub fn render(buf: &Buffer, title: &str) -> String {
    let (w, h) = (buf.area.width, buf.area.height);
    let (pw, ph) = (f64::from(w) * CELL_W + 16.0, f64::from(h) * CELL_H + 16.0);
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{pw:.0}" height="{ph:.0}" viewBox="0 0 {pw:.0} {ph:.0}" role="img" aria-label="{t}">"#,
        t = escape(title)
    );
    let _ = writeln!(out, "<title>{}</title>", escape(title));
    let _ = writeln!(
        out,
        r#"<rect width="100%" height="100%" rx="6" fill="{DEFAULT_BG}"/>"#
    );
    let _ = writeln!(
        out,
        r#"<g transform="translate(8 8)" font-family="'DejaVu Sans Mono','Menlo','Consolas',monospace" font-size="{FONT_SIZE}" xml:space="preserve">"#
    );
    for y in 0..h {
        let ty = f64::from(y) * CELL_H;
        // Backgrounds: runs of one colour.
        let mut x = 0;
        while x < w {
            let (_, bg, _, _) = look(&buf[(x, y)]);
            let start = x;
            while x < w && look(&buf[(x, y)]).1 == bg {
                x += 1;
            }
            if let Some(bg) = bg {
                let _ = writeln!(
                    out,
                    r#"<rect x="{:.1}" y="{ty:.1}" width="{:.1}" height="{CELL_H}" fill="{bg}"/>"#,
                    f64::from(start) * CELL_W,
                    f64::from(x - start) * CELL_W
                );
            }
        }
        // Text: runs of one look, each placed at its own column so nothing drifts. Braille
        // and block cells are drawn, not written (`drawn`): a font's glyphs leave gaps.
        let mut x = 0;
        while x < w {
            let first = look(&buf[(x, y)]);
            let start = x;
            let mut text = String::new();
            while x < w && look(&buf[(x, y)]) == first {
                let symbol = buf[(x, y)].symbol();
                if drawn::is_drawn(symbol) {
                    text.push(' ');
                } else {
                    text.push_str(symbol);
                }
                x += 1;
            }
            if text.trim().is_empty() {
                continue;
            }
            let (fg, _, bold, underline) = first;
            let _ = writeln!(
                out,
                r#"<text x="{:.1}" y="{:.1}" fill="{fg}"{}{} textLength="{:.1}" lengthAdjust="spacingAndGlyphs">{}</text>"#,
                f64::from(start) * CELL_W,
                ty + CELL_H * 0.78,
                if bold { r#" font-weight="bold""# } else { "" },
                if underline {
                    r#" text-decoration="underline""#
                } else {
                    ""
                },
                f64::from(x - start) * CELL_W,
                escape(&text)
            );
        }
    }
    drawn::shapes(buf, &mut out);
    out.push_str("</g>\n</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;
    use ratatui::style::Style;

    #[test]
    fn cells_become_positioned_coloured_runs() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 10, 2));
        buf.set_string(0, 0, "ab<c", Style::new().fg(Color::Green));
        buf.set_string(
            5,
            1,
            "OK",
            Style::new().bg(Color::Red).add_modifier(Modifier::BOLD),
        );
        let svg = render(&buf, "t & t");
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(
            svg.contains(r##"fill="#0dbc79""##) && svg.contains(">ab&lt;c</text>"),
            "{svg}"
        );
        assert!(
            svg.contains(r##"<rect x="42.0" y="17.0" width="16.8" height="17" fill="#cd3131"/>"##),
            "{svg}"
        );
        assert!(svg.contains(r#"font-weight="bold""#) && svg.contains("aria-label=\"t &amp; t\""));
        assert_eq!(render(&buf, "t & t"), svg, "deterministic");
    }

    #[test]
    fn palette_covers_indexed_colours() {
        assert_eq!(hex(Color::Indexed(196)).as_deref(), Some("#ff0000"));
        assert_eq!(hex(Color::Indexed(232)).as_deref(), Some("#080808"));
        assert_eq!(hex(Color::Indexed(2)).as_deref(), Some("#0dbc79"));
        assert_eq!(hex(Color::Reset), None);
    }
}
