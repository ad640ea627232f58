//! `NO_COLOR` (no-color.org: set and not empty): the workbench drawn without colours. The
//! panels pick their colours freely; this strips them from the finished frame in one place,
//! so no panel can forget. Meaning never rests on colour alone (statuses are words), and a
//! coloured background keeps its shape as reverse video. It never changes text.

use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

/// Whether the user asked for no colour: `NO_COLOR` present and not empty.
pub fn requested() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Takes every colour out of `buf`, keeping bold, underline and reverse.
pub fn strip(buf: &mut Buffer) {
    for cell in &mut buf.content {
        if !matches!(cell.bg, Color::Reset | Color::Black) {
            cell.modifier.insert(Modifier::REVERSED);
        }
        cell.fg = Color::Reset;
        cell.bg = Color::Reset;
        cell.underline_color = Color::Reset;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;
    use ratatui::style::Style;

    #[test]
    fn colours_go_and_a_coloured_background_becomes_reverse_video() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 3, 1));
        buf.set_string(
            0,
            0,
            "a",
            Style::new().fg(Color::Green).add_modifier(Modifier::BOLD),
        );
        buf.set_string(1, 0, "b", Style::new().bg(Color::Red));
        buf.set_string(2, 0, "c", Style::new().fg(Color::Cyan).bg(Color::Black));
        strip(&mut buf);
        for cell in &buf.content {
            assert_eq!((cell.fg, cell.bg), (Color::Reset, Color::Reset));
        }
        assert!(buf.content[0].modifier.contains(Modifier::BOLD));
        assert!(buf.content[1].modifier.contains(Modifier::REVERSED));
        assert!(!buf.content[2].modifier.contains(Modifier::REVERSED));
        assert_eq!(buf.content[1].symbol(), "b");
    }
}
