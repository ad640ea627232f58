//! The `?` overlay: every row of the key table with its help text, plus the mouse gestures,
//! centred over the screen; scrolled and narrowed by a filter (`HelpView`) when the terminal
//! is too short for all of it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph};

use super::{ACCENT, DIM, scroll_hint};
use crate::tui::action::Action;
use crate::tui::app::HelpView;
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
                Scope::Help => "help: ".into(),
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

/// The plain text of a help line, for the filter.
fn plain(line: &Line) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

/// The lines the filter keeps (any case; all of them when it is empty).
pub fn shown_lines(keys: &Keymap, filter: &str) -> Vec<Line<'static>> {
    let needle = filter.to_lowercase();
    lines(keys)
        .into_iter()
        .filter(|l| plain(l).to_lowercase().contains(&needle))
        .collect()
}

/// `line` cut to `width` columns, its last character `…` when cut.
fn fit_line(line: Line<'static>, width: usize) -> Line<'static> {
    if line.width() <= width {
        return line;
    }
    let mut room = width.saturating_sub(1);
    let mut spans = Vec::new();
    for span in line.spans {
        let n = span.content.chars().count();
        if n <= room {
            room -= n;
            spans.push(span);
            continue;
        }
        let cut: String = span.content.chars().take(room).collect();
        spans.push(Span::styled(cut, span.style));
        break;
    }
    spans.push(Span::styled("…", Style::new().fg(DIM)));
    Line::from(spans)
}

/// Draws the overlay scrolled to `view`; returns how many lines it had room for (a page).
pub fn render(frame: &mut Frame, area: Rect, keys: &Keymap, view: &HelpView) -> usize {
    let all = lines(keys);
    // The box keeps the width of the whole list, so filtering does not make it jump.
    let w = all.iter().map(Line::width).max().unwrap_or(40) as u16 + 4;
    let shown = shown_lines(keys, &view.filter);
    let room = usize::from(area.height.saturating_sub(2)).max(1);
    let top = view.top.min(shown.len().saturating_sub(room));
    let mut text: Vec<Line> = shown.iter().skip(top).take(room).cloned().collect();
    if text.is_empty() {
        text.push(Line::from(Span::styled(
            "no key matches the filter (Esc clears it)",
            Style::new().fg(DIM),
        )));
    }
    let w = w.min(area.width);
    let h = (text.len() as u16 + 2).min(area.height);
    // A line wider than the box ends in `…`, never silently cut (`/` finds it, a wider
    // terminal shows it whole).
    let text: Vec<Line> = text
        .into_iter()
        .map(|l| fit_line(l, usize::from(w.saturating_sub(2))))
        .collect();
    let rect = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    let close = [Action::Back, Action::Help, Action::Quit]
        .map(|a| keys.key_of(a))
        .join("/");
    let mut block = Block::bordered()
        .border_type(BorderType::Double)
        .border_style(Style::new().fg(ACCENT))
        .title(format!(" Keys · {close} closes "));
    // Lines the window does not show are counted on the border, never silently cut.
    if let Some(hint) = scroll_hint(top, text.len().min(shown.len()), shown.len()) {
        block = block.title_bottom(Line::from(hint).right_aligned());
    }
    if view.typing || !view.filter.is_empty() {
        let caret = if view.typing { "▏" } else { "" };
        block = block.title_bottom(Line::from(Span::styled(
            format!(" /{}{caret} ", view.filter),
            Style::new().fg(ACCENT).add_modifier(Modifier::BOLD),
        )));
    } else if shown.len() > room {
        block = block.title_bottom(Line::from(Span::styled(
            format!(
                " {}/{} · {} filter ",
                keys.key_of(Action::HelpPageUp),
                keys.key_of(Action::HelpPageDown),
                keys.key_of(Action::HelpFilter)
            ),
            Style::new().fg(ACCENT),
        )));
    }
    frame.render_widget(Clear, rect);
    frame.render_widget(Paragraph::new(text).block(block), rect);
    room
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
