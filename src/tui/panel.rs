//! One file per panel; each draws from `&App` into a rectangle and knows nothing of the
//! layout around it. Shared here: the framed block with the focus highlight and the colours
//! the panels agree on (so Pass is the same green everywhere).

pub mod catalog;
pub mod curve;
pub mod footer;
pub mod help;
pub mod histogram;
pub mod history;
pub mod host;
pub mod profile;
pub mod progress;
pub mod results;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use ratatui::widgets::{Block, BorderType};

use super::app::{App, KatState, LogLevel, Panel};
use crate::kat::KatStatus;

pub const GOOD: Color = Color::Green;
pub const WARN: Color = Color::Yellow;
pub const BAD: Color = Color::Red;
pub const DIM: Color = Color::DarkGray;
pub const ACCENT: Color = Color::Cyan;

/// The frame of a panel: its title, and a bright border when it has the focus.
pub fn block<'a>(app: &App, panel: Panel, title: String) -> Block<'a> {
    let focused = app.focus == panel;
    let style = if focused {
        Style::new().fg(ACCENT)
    } else {
        Style::new().fg(DIM)
    };
    Block::bordered()
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Plain
        })
        .border_style(style)
        .title(Span::styled(
            format!(" {title} "),
            if focused {
                Style::new().fg(ACCENT).add_modifier(Modifier::BOLD)
            } else {
                Style::new().add_modifier(Modifier::BOLD)
            },
        ))
}

/// The highlight of the row under the cursor (dimmer when the panel is not focused).
pub fn cursor_style(focused: bool) -> Style {
    if focused {
        Style::new().add_modifier(Modifier::REVERSED)
    } else {
        Style::new().add_modifier(Modifier::UNDERLINED)
    }
}

pub fn log_color(level: LogLevel) -> Color {
    match level {
        LogLevel::Info => Color::Reset,
        LogLevel::Good => GOOD,
        LogLevel::Warn => WARN,
        LogLevel::Bad => BAD,
    }
}

/// A KAT state as its status word, coloured by what it means: PASS green; NOKAT (nothing to
/// compare with, not a wrong digest) yellow; every real failure red.
pub fn kat_span(state: &KatState) -> Span<'static> {
    match state {
        KatState::Unknown => Span::styled("·", Style::new().fg(DIM)),
        KatState::Running { done, total } if *total > 0 => {
            Span::styled(format!("{:>3}%", done * 100 / total), Style::new().fg(WARN))
        }
        KatState::Running { .. } => Span::styled("KAT…", Style::new().fg(WARN)),
        // A pass with a finding that does not block: measured, the check named in warning.
        KatState::Done {
            status, findings, ..
        } if status.is_pass() && !findings.is_empty() => {
            let checks: Vec<&str> = findings.iter().map(|f| f.check.name()).collect();
            Span::styled(
                format!("PASS ⚑ {}", checks.join(",")),
                Style::new().fg(WARN),
            )
        }
        KatState::Done { status, .. } if status.is_pass() => {
            Span::styled("PASS", Style::new().fg(GOOD))
        }
        // No reference to compare with is not a wrong digest, and a broken manifest is not
        // the library's fault: NOKAT and BADMANIFEST are warnings.
        KatState::Done { status, .. } if !status.blames_library() => {
            Span::styled(status.to_string(), Style::new().fg(WARN))
        }
        // NONCONFORM names the check it failed.
        KatState::Done {
            status: KatStatus::Nonconform,
            check: Some(check),
            ..
        } => Span::styled(
            format!("✗ {check}"),
            Style::new().fg(BAD).add_modifier(Modifier::BOLD),
        ),
        KatState::Done { status, .. } => Span::styled(
            status.to_string(),
            Style::new().fg(BAD).add_modifier(Modifier::BOLD),
        ),
    }
}

/// Cuts `s` to `width` characters, ending in `…` when cut.
pub fn fit(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    let mut out: String = s.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `s` cut into lines of at most `width` characters at spaces (a word longer than a line is
/// cut by `fit`): a message that says what to do instead must not lose its end to `…`.
pub fn wrap(s: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in s.split_whitespace() {
        let len = line.chars().count();
        if len > 0 && len + 1 + word.chars().count() > width {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push(line);
    }
    out.into_iter().map(|l| fit(&l, width)).collect()
}

/// ` ↑3 ↓12 `: rows hidden above and below a list showing `shown` of `total` rows from
/// `first` (None when everything shows).
pub fn scroll_hint(first: usize, shown: usize, total: usize) -> Option<String> {
    let below = total.saturating_sub(first + shown);
    (first > 0 || below > 0).then(|| {
        let mut s = String::from(" ");
        if first > 0 {
            s += &format!("↑{first} ");
        }
        if below > 0 {
            s += &format!("↓{below} ");
        }
        s
    })
}

/// The first row to draw so that `cursor` stays visible in `height` rows.
pub fn scroll_start(cursor: usize, height: usize) -> usize {
    (cursor + 1).saturating_sub(height.max(1))
}
