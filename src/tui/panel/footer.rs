//! Footer: the keys that matter now, straight from the key table (only the actions the
//! current state offers), or the prompt of the text field being typed into.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::{ACCENT, DIM};
use crate::tui::action::Action;
use crate::tui::app::{App, Mode};
use crate::tui::keymap::Scope;

/// Whether the footer should offer `a` in the current state.
fn offered(app: &App, a: Action) -> bool {
    if app.read_only && a.mutates_run() {
        return false;
    }
    match a {
        Action::Start | Action::StartLayouts | Action::RunKats | Action::RecheckHost => {
            !app.is_running()
        }
        Action::Cancel => app.is_running(),
        Action::StartAnyway => app.consent_applies(),
        Action::HistPrev => app.hist_jobs().len() > 1,
        Action::PinBaseline => !app.result_rows().is_empty(),
        _ => true,
    }
}

/// Hints dropped first when the footer is too narrow, least needed first.
const DROPPABLE: [Action; 6] = [
    Action::HistPrev,
    Action::FocusNext,
    Action::Filter,
    Action::RecheckHost,
    Action::ToggleLength(0),
    Action::Help,
];

/// The hints for a footer `width` columns wide: what the state offers, dropping the least
/// needed ones until the rest fit uncut.
pub fn hints(app: &App, width: u16) -> Line<'static> {
    let mut dropped: Vec<Action> = Vec::new();
    loop {
        let line = hints_without(app, &dropped);
        let Some(next) = DROPPABLE.iter().find(|a| !dropped.contains(a)) else {
            return line;
        };
        if line.width() <= usize::from(width) {
            return line;
        }
        dropped.push(*next);
    }
}

fn hints_without(app: &App, dropped: &[Action]) -> Line<'static> {
    match &app.mode {
        Mode::ConfirmQuit => {
            let (done, total) = app.run_counts();
            return Line::from(vec![
                Span::styled(
                    format!(" leave during the run ({done}/{total} jobs)? "),
                    Style::new().fg(ACCENT).add_modifier(Modifier::BOLD),
                ),
                Span::styled("y", Style::new().fg(ACCENT).add_modifier(Modifier::BOLD)),
                Span::styled(
                    " leave (the run stops; finished records stay, resumable)  any other key stays",
                    Style::new().fg(ACCENT),
                ),
            ]);
        }
        Mode::Filter => {
            return Line::from(Span::styled(
                " type to filter · Enter keep · Esc clear",
                Style::new().fg(ACCENT),
            ));
        }
        Mode::ProfileInput(_) => {
            return Line::from(Span::styled(
                " profile name or -flags · Enter sets it for the selected · Esc cancel",
                Style::new().fg(ACCENT),
            ));
        }
        Mode::LengthInput(_) => {
            return Line::from(Span::styled(
                " length in bytes (100, 2k, 1KiB) · Enter add/remove · Esc cancel",
                Style::new().fg(ACCENT),
            ));
        }
        Mode::Help if app.help.typing => {
            return Line::from(Span::styled(
                " type to narrow the help · Enter keep · Esc clear",
                Style::new().fg(ACCENT),
            ));
        }
        Mode::Help => return help_hints(app),
        Mode::Normal => {}
    }
    let mut spans = vec![Span::raw(" ")];
    for b in app.keys.rows() {
        let Some(word) = b.footer else { continue };
        let here = match b.scope {
            Scope::Global => true,
            Scope::In(p) => p == app.focus,
            Scope::Help => false,
        };
        if !here || !offered(app, b.action) || dropped.contains(&b.action) {
            continue;
        }
        // The first key is enough here; the help overlay names them all.
        let key = match (b.action, b.keys.as_slice()) {
            (Action::HistPrev, _) => app.keys.keys_text(b),
            (_, [k, ..]) => k.text(),
            (_, []) => continue,
        };
        spans.push(Span::styled(
            key,
            Style::new().fg(ACCENT).add_modifier(Modifier::BOLD),
        ));
        spans.push(Span::styled(format!(" {word}  "), Style::new().fg(DIM)));
    }
    Line::from(spans)
}

/// The keys of the open help overlay: its own rows, the line keys and the ones that close it.
fn help_hints(app: &App) -> Line<'static> {
    let key = |k: String| Span::styled(k, Style::new().fg(ACCENT).add_modifier(Modifier::BOLD));
    let word = |w: &str| Span::styled(format!(" {w}  "), Style::new().fg(DIM));
    let keys = &app.keys;
    let mut spans = vec![
        Span::raw(" "),
        key(format!(
            "{}/{}",
            keys.key_of(Action::Up),
            keys.key_of(Action::Down)
        )),
        word("line"),
    ];
    for b in keys.rows().iter().filter(|b| b.scope == Scope::Help) {
        if let Some(w) = b.footer {
            spans.extend([key(keys.keys_text(b)), word(w)]);
        }
    }
    let close = [Action::Back, Action::Help, Action::Quit].map(|a| keys.key_of(a));
    spans.extend([key(close.join("/")), word("close")]);
    Line::from(spans)
}

pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    frame.render_widget(hints(app, area.width), area);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::app::Panel;
    use crate::tui::demo;

    fn text(app: &App) -> String {
        hints(app, 200)
            .spans
            .iter()
            .map(|s| s.content.as_ref())
            .collect()
    }

    #[test]
    fn offers_what_the_state_allows() {
        let mut app = demo::idle();
        let idle = text(&app);
        assert!(
            idle.contains("s start") && !idle.contains("c cancel"),
            "{idle}"
        );
        assert!(idle.contains("Space select"), "{idle}");
        app.focus = Panel::Results;
        assert!(text(&app).contains("Enter histogram"));
        let running = text(&demo::measuring());
        assert!(
            running.contains("c cancel") && !running.contains("s start"),
            "{running}"
        );
        app.read_only = true;
        assert!(!text(&app).contains("s start"));
        app.mode = crate::tui::app::Mode::Filter;
        assert!(text(&app).contains("type to filter"));
    }
}
