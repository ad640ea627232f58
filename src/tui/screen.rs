//! The whole screen: picks the layout for the terminal size (compact from 80×24, wide from
//! 140×40, a clear message below 80×24), draws the title bar, every panel, the footer and the
//! help overlay, and returns where things landed (`Hitmap`) so mouse clicks can be mapped
//! back to panels and rows.

use ratatui::Frame;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::app::{App, Chart, Mode, Panel, RunState};
use super::panel::{self, ACCENT, BAD, DIM, GOOD, WARN};

pub const MIN_WIDTH: u16 = 80;
pub const MIN_HEIGHT: u16 = 24;
const WIDE_WIDTH: u16 = 140;
const WIDE_HEIGHT: u16 = 40;

/// Where panels and their rows were drawn, for the mouse.
#[derive(Debug, Clone, Default)]
pub struct Hitmap {
    pub panels: Vec<(Panel, Rect)>,
    /// The list area and the index of its first visible row.
    pub catalog_rows: Option<(Rect, usize)>,
    pub host_rows: Option<(Rect, usize)>,
    pub results_rows: Option<(Rect, usize)>,
    /// Lines the help overlay had room for (while it is open): its page.
    pub help_page: Option<usize>,
}

pub fn draw(frame: &mut Frame, app: &App) -> Hitmap {
    let area = frame.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        too_small(frame, area);
        return Hitmap::default();
    }
    let [header, body, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(area);
    title_bar(frame, header, app);
    let wide = area.width >= WIDE_WIDTH && area.height >= WIDE_HEIGHT;
    let (left_w, host_h) = if wide { (40, 14) } else { (32, 8) };
    let [left, right] =
        Layout::horizontal([Constraint::Length(left_w), Constraint::Min(0)]).areas(body);
    let [catalog, host] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(host_h)]).areas(left);
    // On a small screen the results get the rows: charts and progress keep their essentials.
    let (charts_h, progress_h) = if wide {
        (Constraint::Percentage(42), 12)
    } else {
        (Constraint::Length(8), 5)
    };
    let [charts, results, progress] =
        Layout::vertical([charts_h, Constraint::Min(5), Constraint::Length(progress_h)])
            .areas(right);

    let mut map = Hitmap {
        catalog_rows: panel::catalog::render(frame, catalog, app),
        host_rows: panel::host::render(frame, host, app),
        ..Hitmap::default()
    };
    if wide {
        let [h, c] = Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
            .areas(charts);
        panel::histogram::render(frame, h, app);
        // The History or Profile panel takes the curve's half while it is shown.
        let right = match app.chart {
            Chart::History => {
                panel::history::render(frame, c, app);
                Panel::History
            }
            Chart::Profile => {
                panel::profile::render(frame, c, app);
                Panel::Profile
            }
            _ => {
                panel::curve::render(frame, c, app);
                Panel::Curve
            }
        };
        map.panels.extend([(Panel::Histogram, h), (right, c)]);
    } else {
        match app.chart {
            Chart::Histogram => panel::histogram::render(frame, charts, app),
            Chart::Curve => panel::curve::render(frame, charts, app),
            Chart::History => panel::history::render(frame, charts, app),
            Chart::Profile => panel::profile::render(frame, charts, app),
        }
        let shown = match app.chart {
            Chart::Histogram => Panel::Histogram,
            Chart::Curve => Panel::Curve,
            Chart::History => Panel::History,
            Chart::Profile => Panel::Profile,
        };
        map.panels.push((shown, charts));
    }
    map.results_rows = panel::results::render(frame, results, app);
    panel::progress::render(frame, progress, app);
    panel::footer::render(frame, footer, app);
    map.panels.extend([
        (Panel::Catalog, catalog),
        (Panel::Host, host),
        (Panel::Results, results),
        (Panel::Progress, progress),
    ]);
    if app.mode == Mode::Help {
        // Over everything but the footer, which names the keys that move in it.
        let over = Rect {
            height: area.height - 1,
            ..area
        };
        map.help_page = Some(panel::help::render(frame, over, &app.keys, &app.help));
    }
    map
}

fn title_bar(frame: &mut Frame, area: Rect, app: &App) {
    let word = app.run_word();
    let color = match &app.run {
        RunState::Idle => DIM,
        RunState::Running { cancelling: true } | RunState::Kats { cancelling: true } => WARN,
        RunState::Running { .. } if app.cpu_wait.is_some() => WARN,
        RunState::Running { .. } | RunState::Kats { .. } => ACCENT,
        RunState::Refused { .. } => BAD,
        RunState::Finished {
            cancelled: false,
            failed: 0,
            ..
        } => GOOD,
        RunState::Finished { .. } => WARN,
        RunState::Lost(_) => BAD,
    };
    let mut spans = vec![
        Span::styled(" cyclescope ", Style::new().add_modifier(Modifier::BOLD)),
        Span::raw("│ "),
        Span::styled(word, Style::new().fg(color).add_modifier(Modifier::BOLD)),
        Span::raw(if app.lanes.is_empty() {
            format!(" │ CPU {} of {}", app.cpu, app.cpus_online)
        } else {
            format!(
                " │ CPU {} of {} · measuring on {}",
                app.cpu,
                app.cpus_online,
                crate::host::format_cpu_list(&app.lanes)
            )
        }),
    ];
    if app.read_only {
        spans.push(Span::styled(
            " │ watching (read-only)",
            Style::new().fg(WARN),
        ));
    }
    // While the run queues for its CPU it has no folder yet: whom it waits for, not the last
    // run's folder.
    if let Some(held) = app.cpu_wait_holder() {
        spans.push(Span::styled(format!(" │ {held}"), Style::new().fg(WARN)));
    } else if let Some(dir) = &app.run_dir {
        spans.push(Span::styled(
            format!(" │ {}", crate::sanitize::path_as_given(dir)),
            Style::new().fg(DIM),
        ));
    }
    let line = Line::from(spans);
    let room = usize::from(area.width).saturating_sub(line.width());
    frame.render_widget(line, area);
    if room >= 8 {
        frame.render_widget(
            Line::from(Span::styled(
                format!("{} keys ", app.keys.key_of(super::action::Action::Help)),
                Style::new().fg(DIM),
            ))
            .alignment(Alignment::Right),
            area,
        );
    }
}

fn too_small(frame: &mut Frame, area: Rect) {
    let text = vec![
        Line::from(Span::styled(
            "cyclescope: terminal too small",
            Style::new().fg(WARN).add_modifier(Modifier::BOLD),
        )),
        Line::from(format!(
            "this one is {}×{}; the workbench needs at least {MIN_WIDTH}×{MIN_HEIGHT}",
            area.width, area.height
        )),
        Line::from("enlarge the window, or press q to leave"),
    ];
    let y = area.height.saturating_sub(3) / 2;
    let rect = Rect::new(
        area.x,
        area.y + y,
        area.width,
        area.height.saturating_sub(y),
    );
    frame.render_widget(
        Paragraph::new(text)
            .alignment(Alignment::Center)
            .wrap(Wrap { trim: true }),
        rect,
    );
}
