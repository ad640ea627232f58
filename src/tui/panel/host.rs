//! Host panel: every host check with its coloured verdict and value, and the fix hint of the
//! check under the cursor. Re-checking is an action (`r`); this file only draws.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::{BAD, DIM, GOOD, WARN, block, cursor_style, fit, scroll_start};
use crate::host::Status as CheckStatus;
use crate::tui::app::{App, Panel};

pub fn status_span(s: CheckStatus) -> Span<'static> {
    match s {
        CheckStatus::Pass => Span::styled("Pass", Style::new().fg(GOOD)),
        CheckStatus::Warn => Span::styled("Warn", Style::new().fg(WARN)),
        CheckStatus::Fail => {
            Span::styled("Fail", Style::new().fg(BAD).add_modifier(Modifier::BOLD))
        }
        CheckStatus::Unknown | CheckStatus::Skip => Span::styled("  ? ", Style::new().fg(DIM)),
    }
}

/// Draws the panel; returns the check list's area and first visible row.
pub fn render(frame: &mut Frame, area: Rect, app: &App) -> Option<(Rect, usize)> {
    let blk = block(app, Panel::Host, format!("Host · CPU {}", app.cpu));
    let inner = blk.inner(area);
    frame.render_widget(blk, area);
    let hint_h = if inner.height >= 8 { 2 } else { 1 };
    let [list, hint] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(hint_h)]).areas(inner);
    let height = usize::from(list.height);
    let first = scroll_start(app.host_cursor, height);
    let focused = app.focus == Panel::Host;
    let name_w = app
        .host
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(4)
        .min(16);
    let value_w = usize::from(list.width).saturating_sub(name_w + 6);
    let lines: Vec<Line> = app
        .host
        .iter()
        .enumerate()
        .skip(first)
        .take(height)
        .map(|(i, r)| {
            let line = Line::from(vec![
                status_span(r.status),
                Span::raw(format!(" {:<name_w$} ", fit(&r.name, name_w))),
                Span::styled(fit(&r.value, value_w), Style::new().fg(DIM)),
            ]);
            if i == app.host_cursor {
                line.patch_style(cursor_style(focused))
            } else {
                line
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), list);
    let text = app
        .host
        .get(app.host_cursor)
        .and_then(|r| r.hint.clone())
        .map(|h| format!("→ {h}"))
        .unwrap_or_default();
    frame.render_widget(
        Paragraph::new(Span::styled(text, Style::new().fg(WARN))).wrap(Wrap { trim: true }),
        hint,
    );
    Some((list, first))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::demo;

    #[test]
    fn checks_show_verdict_value_and_the_selected_hint() {
        let mut app = demo::idle();
        app.host_cursor = 1;
        let text = demo::draw_text(60, 12, |f| {
            render(f, f.area(), &app);
        });
        assert!(text.contains("Host · CPU 1"), "{text}");
        assert!(text.contains("Pass architecture  x86_64"), "{text}");
        assert!(text.contains("Fail clock         not steady"), "{text}");
        assert!(
            text.contains("→ sysctl kernel.perf_event_paranoid=2"),
            "{text}"
        );
    }
}
