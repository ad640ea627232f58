//! The `?` overlay: every row of the key table with its help text, plus the mouse gestures,
//! centred over the screen.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph};

use super::{ACCENT, DIM};
use crate::tui::keymap::{Keymap, Scope};

pub fn lines(keys: &Keymap) -> Vec<Line<'static>> {
    let key_w = keys
        .help_rows()
        .map(|b| keys.keys_text(b).chars().count())
        .max()
        .unwrap_or(5);
    let mut out: Vec<Line> = keys
        .help_rows()
        .map(|b| {
            let key = keys.keys_text(b);
            let scope = match b.scope {
                Scope::Global => String::new(),
                Scope::In(p) => format!("{}: ", p.title()),
            };
            Line::from(vec![
                Span::styled(
                    format!("{key:>key_w$}  "),
                    Style::new().fg(ACCENT).add_modifier(Modifier::BOLD),
                ),
                Span::styled(scope, Style::new().fg(DIM)),
                Span::raw(b.help),
            ])
        })
        .collect();
    out.push(Line::from(Span::styled(
        format!(
            "{:>key_w$}  click a panel or row to focus / select; wheel scrolls",
            "mouse"
        ),
        Style::new().fg(DIM),
    )));
    out
}

pub fn render(frame: &mut Frame, area: Rect, keys: &Keymap) {
    let mut text = lines(keys);
    // On a short terminal the rows that do not fit are counted, never silently cut.
    let room = usize::from(area.height.saturating_sub(2));
    if text.len() > room && room > 1 {
        let hidden = text.len() - (room - 1);
        text.truncate(room - 1);
        text.push(Line::from(Span::styled(
            format!("… {hidden} more: a taller terminal shows them (all keys: docs/tui.md)"),
            Style::new().fg(DIM),
        )));
    }
    let w = text.iter().map(Line::width).max().unwrap_or(40) as u16 + 4;
    let h = text.len() as u16 + 2;
    let w = w.min(area.width);
    let h = h.min(area.height);
    let rect = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(text).block(
            Block::bordered()
                .border_type(BorderType::Double)
                .border_style(Style::new().fg(ACCENT))
                .title(" Keys · any key closes "),
        ),
        rect,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(keys: &Keymap) -> Vec<String> {
        lines(keys)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn the_overlay_names_the_keys_in_force() {
        let keys = crate::tui::keymap::from_config_text(
            "[keys]\nstart = \"F5\"\ncpu-next = \".\"\n",
            std::path::Path::new("config.toml"),
        )
        .unwrap();
        let text = text(&keys);
        let start = text.iter().find(|l| l.contains("start: KAT")).unwrap();
        assert!(start.trim_start().starts_with("F5 "), "{start}");
        let cpu = text.iter().find(|l| l.contains("measurement CPU")).unwrap();
        assert!(cpu.contains("</."), "{cpu}");
    }

    #[test]
    fn every_help_row_of_the_table_is_in_the_overlay() {
        let keys = Keymap::default();
        let text: Vec<String> = lines(&keys)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        for b in keys.help_rows() {
            assert!(text.iter().any(|l| l.contains(b.help)), "{}", b.help);
        }
        assert!(text.len() < keys.rows().len() + 2, "pairs are merged");
        assert!(text.iter().any(|l| l.contains("Ctrl-C")));
    }
}
