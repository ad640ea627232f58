//! Profile panel: where the cost of one instance goes at the length shown — what the job is
//! doing (waiting for the CPU, counting under callgrind, timing the native calls), then the
//! share and instructions per call of each function, with the Δ per function against the
//! previous build's profile after a rebuild (exact: callgrind counts), and the source lines
//! of the top function where the library has debug information. Every function, object and
//! file name comes from the candidate library and goes through the sanitizer.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{ACCENT, BAD, DIM, GOOD, WARN, block, fit, wrap};
use crate::format;
use crate::profile::{Counts, OwnLines};
use crate::sanitize::terminal;
use crate::tui::app::{App, FunctionRow, LengthState, Move, Panel, function_rows};

/// Source lines of the top function shown under the table, at most.
const TOP_LINES: usize = 4;

pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let blk = block(app, Panel::Profile, title(app));
    let inner = blk.inner(area);
    frame.render_widget(blk, area);
    let lines = body(app, usize::from(inner.width), usize::from(inner.height));
    frame.render_widget(Paragraph::new(lines), inner);
}

fn title(app: &App) -> String {
    let p = &app.profile;
    let Some(label) = &p.label else {
        return "Profile".into();
    };
    let mut t = format!("Profile · {}", terminal(label));
    if !p.flags.is_empty() {
        t += &format!(" {}", terminal(&p.flags));
    }
    if let Some(l) = p.shown() {
        t += &format!(" · {}", format::size(l.length));
        if p.lengths.len() > 1 {
            t += &format!(" ({}/{}, ↑/↓)", p.shown + 1, p.lengths.len());
        }
    }
    t
}

/// The panel's lines for `width` × `height` cells.
pub fn body(app: &App, width: usize, height: usize) -> Vec<Line<'static>> {
    let p = &app.profile;
    let dim = Style::new().fg(DIM);
    let Some(shown) = p.shown() else {
        let why = p.problem.clone().unwrap_or_else(|| {
            format!(
                "{} profiles the instance under the cursor at the chosen lengths",
                app.keys.key_of(crate::tui::action::Action::ShowProfile)
            )
        });
        return vec![Line::from(Span::styled(terminal(&why).into_owned(), dim))];
    };
    let mut out = Vec::new();
    if let Some(why) = &p.waiting {
        out.push(Line::from(Span::styled(
            fit(&format!("waiting for the CPU: {}", terminal(why)), width),
            Style::new().fg(WARN),
        )));
    }
    if let Some(why) = &p.problem {
        out.push(Line::from(Span::styled(
            fit(&terminal(why), width),
            Style::new().fg(BAD),
        )));
    }
    let status: Vec<Span<'static>> = match &shown.state {
        LengthState::Queued => vec![Span::styled("queued", dim)],
        LengthState::Counting => vec![Span::styled(
            "counting the calls under valgrind callgrind…",
            Style::new().fg(ACCENT),
        )],
        LengthState::Timing(c) => vec![
            Span::raw(per_call_text(c)),
            Span::styled(
                "timing the same calls natively for the overhead…",
                Style::new().fg(ACCENT),
            ),
        ],
        LengthState::Done(c, o) => vec![
            Span::raw(per_call_text(c)),
            Span::styled(
                format!(
                    "done: under valgrind {}× slower than native{}",
                    format::g3(o.slowdown),
                    o.doubt().map(|why| format!(" {why}")).unwrap_or_default()
                ),
                // A ratio the native leg's wait for the CPU made doubtful is not a good one.
                Style::new().fg(if o.doubt().is_some() { WARN } else { GOOD }),
            ),
        ],
        LengthState::Failed(why) => {
            // Whole, over as many lines as it needs: its end says what works instead.
            let text = format!("not profiled: {}", terminal(why));
            out.extend(
                wrap(&text, width)
                    .into_iter()
                    .map(|l| Line::from(Span::styled(l, Style::new().fg(BAD)))),
            );
            Vec::new()
        }
    };
    out.extend(status.into_iter().map(|s| Line::from(fit_span(s, width))));
    let Some(counts) = shown.state.counts() else {
        return out;
    };
    let before = p
        .previous
        .as_ref()
        .and_then(|b| Some((b, b.counts.get(&shown.length)?)));
    if let Some((b, _)) = before {
        out.push(Line::from(Span::styled(
            fit(
                &format!(
                    "Δ Ir/call vs the previous build ({}): exact counts",
                    terminal(&b.flags)
                ),
                width,
            ),
            Style::new().fg(ACCENT),
        )));
    }
    let rows = function_rows(counts, before.map(|(_, c)| c));
    let object = p
        .library
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let top_lines = source_lines(counts, &object, width);
    let room = height
        .saturating_sub(out.len() + 1)
        .saturating_sub(top_lines.len().min(height / 3));
    out.push(Line::from(Span::styled(
        fit(
            &format!(
                "{:>7}  {:>9}{}  function (object)",
                "share",
                "Ir/call",
                if before.is_some() { "  Δ Ir/call" } else { "" }
            ),
            width,
        ),
        dim.add_modifier(Modifier::BOLD),
    )));
    let shown_rows = room.min(rows.len());
    for r in &rows[..shown_rows] {
        out.push(function_line(r, before.is_some(), width));
    }
    if rows.len() > shown_rows {
        out.push(Line::from(Span::styled(
            format!("… {} more", rows.len() - shown_rows),
            dim,
        )));
    }
    let left = height.saturating_sub(out.len());
    out.extend(top_lines.into_iter().take(left));
    out
}

fn per_call_text(c: &Counts) -> String {
    format!(
        "{} instructions per call (exact, {} calls)",
        format::int(Some(c.total as f64 / c.calls.max(1) as f64)),
        c.calls
    )
}

fn fit_span(s: Span<'static>, width: usize) -> Span<'static> {
    Span::styled(fit(&s.content, width), s.style)
}

/// `+1 234`, `−56`, `0`: a move in instructions per call.
pub fn delta_text(m: Move) -> String {
    match m {
        Move::New => "new".into(),
        Move::Gone => "gone".into(),
        Move::By(d) if d.abs() < 0.5 => "0".into(),
        Move::By(d) => format!(
            "{}{}",
            if d > 0.0 { "+" } else { "−" },
            format::int(Some(d.abs()))
        ),
    }
}

fn function_line(r: &FunctionRow, with_delta: bool, width: usize) -> Line<'static> {
    let share = r.share.map_or_else(|| "–".to_string(), format::share);
    let per_call = format::int(r.per_call);
    let mut spans = vec![Span::raw(format!("{share:>7}  {per_call:>9}"))];
    if with_delta {
        let (text, color) = match r.moved {
            Some(m @ Move::By(d)) => (
                delta_text(m),
                if d < -0.5 {
                    GOOD
                } else if d > 0.5 {
                    WARN
                } else {
                    DIM
                },
            ),
            Some(m) => (delta_text(m), ACCENT),
            None => (String::new(), DIM),
        };
        spans.push(Span::styled(format!("  {text:>9}"), Style::new().fg(color)));
    }
    let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    let name = format!(
        "  {} ({})",
        terminal(&r.function),
        if r.object.is_empty() {
            "?".into()
        } else {
            terminal(&r.object)
        }
    );
    spans.push(Span::raw(fit(&name, width.saturating_sub(used))));
    Line::from(spans)
}

/// The source lines of the candidate library's (`object`) top function, where its debug
/// information names them; where it has none, that it has none and how to add it — never
/// the lines of another object's function.
fn source_lines(c: &Counts, object: &str, width: usize) -> Vec<Line<'static>> {
    let (top, lines) = match c.own_lines(object) {
        OwnLines::Lines { function, lines } => (function, lines),
        OwnLines::NoLineInformation => {
            return vec![Line::from(Span::styled(
                fit(
                    &format!(
                        "no source lines: {} has no line information (building it with -g adds it)",
                        terminal(object)
                    ),
                    width,
                ),
                Style::new().fg(DIM),
            ))];
        }
        OwnLines::NoFunction => return Vec::new(),
    };
    let mut out = vec![Line::from(Span::styled(
        fit(&format!("lines of {}:", terminal(top)), width),
        Style::new().fg(DIM).add_modifier(Modifier::BOLD),
    ))];
    for l in lines.into_iter().take(TOP_LINES) {
        let file = std::path::Path::new(&l.file)
            .file_name()
            .map_or_else(|| l.file.clone(), |n| n.to_string_lossy().into_owned());
        out.push(Line::from(Span::raw(fit(
            &format!(
                "{:>7}  {}:{}",
                format::share(l.share),
                terminal(&file),
                l.line
            ),
            width,
        ))));
    }
    out
}
