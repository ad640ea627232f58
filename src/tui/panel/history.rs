//! History panel: the tuning journal's builds of one instance at one length — each build's
//! mean cycles with its 95 % interval as an error bar (⚠ above a doubtful figure), the means
//! joined by a line, the highlighted build in the accent colour, and below it that build's flags, date,
//! figure with its interval and verdict against the build before (the journal's `history`,
//! `compare`'s rule). Every string from a record goes through the sanitizer.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Chart, Dataset, GraphType, Paragraph};

use super::{ACCENT, DIM, WARN, block};
use crate::format;
use crate::sanitize::terminal;
use crate::tui::app::{App, Panel};

/// The lines under the chart: the highlighted build, and how to pin it.
pub fn detail(app: &App) -> Vec<Line<'static>> {
    let h = &app.history;
    let Some(row) = h.rows.get(h.cursor) else {
        let why = h
            .problem
            .clone()
            .unwrap_or_else(|| "no build measured yet at this length (s measures one)".into());
        return vec![Line::from(Span::styled(
            terminal(&why).into_owned(),
            Style::new().fg(DIM),
        ))];
    };
    let e = &row.entry;
    let figure = match (e.mean_cycles, e.ci95_half_width) {
        (Some(m), Some(w)) => format::with_interval(m, m - w, m + w),
        (m, _) => format::int(m),
    };
    let verdict = match &row.verdict {
        None => "first build".to_string(),
        Some(v) => format!("vs build {}: {v}", h.cursor),
    };
    let pinned = app.pinned_build.as_ref().is_some_and(|p| p.row.entry == *e);
    let date = e
        .ended_utc
        .get(..16)
        .unwrap_or(&e.ended_utc)
        .replace('T', " ");
    vec![
        Line::from(vec![
            Span::styled(format!("build {} ", h.cursor + 1), Style::new().fg(ACCENT)),
            Span::raw(terminal(&e.flags_short()).into_owned()),
            Span::styled(
                format!(" · {} · {date}", e.library_sha256.get(..12).unwrap_or("")),
                Style::new().fg(DIM),
            ),
        ]),
        Line::from(vec![
            Span::raw(format!(
                "{figure} cycles{} · ",
                if e.doubt.is_some() { " ⚠" } else { "" }
            )),
            Span::styled(
                terminal(&verdict).into_owned(),
                Style::new().fg(if e.doubt.is_some() {
                    WARN
                } else {
                    Color::Reset
                }),
            ),
            Span::styled(
                if pinned {
                    "  · the Δ baseline (b unpins)".to_string()
                } else {
                    format!(
                        "  · {} makes it the Δ baseline",
                        app.keys.key_of(crate::tui::action::Action::PinBuild)
                    )
                },
                Style::new().fg(DIM),
            ),
        ]),
    ]
}

pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let h = &app.history;
    let label = h
        .label
        .as_deref()
        .map_or_else(String::new, |l| terminal(l).into_owned());
    let title = format!(
        "History · {label} · {} · {} builds",
        format::size(h.length),
        h.rows.len()
    );
    let blk = block(app, Panel::History, title);
    let inner = blk.inner(area);
    frame.render_widget(blk, area);
    let [chart_area, text_area] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(2)]).areas(inner);
    frame.render_widget(Paragraph::new(detail(app)), text_area);
    let builds: Vec<Bar> = h
        .rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| Bar::of(i, &r.entry))
        .collect();
    if builds.is_empty() || chart_area.height < 3 {
        return;
    }
    // The y range holds every interval, not only the means.
    let (lo, hi) = builds.iter().fold((f64::MAX, f64::MIN), |(lo, hi), b| {
        (lo.min(b.low), hi.max(b.high))
    });
    let pad = ((hi - lo) * 0.1).max(hi * 0.01).max(1.0);
    let y = [(lo - pad).max(0.0), hi + pad];
    // Half a build of room either side, so the first and last bars stay off the axes.
    let x = [0.5, h.rows.len() as f64 + 0.5];
    let pts: Vec<(f64, f64)> = builds.iter().map(|b| (b.x, b.mean)).collect();
    let datasets = vec![
        Dataset::default()
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(Style::new().fg(DIM))
            .data(&pts),
    ];
    let y_labels: Vec<Span> = [y[0], (y[0] + y[1]) / 2.0, y[1]]
        .iter()
        .map(|&v| Span::raw(format::int(Some(v))))
        .collect();
    // Blank x labels keep a row for the build numbers, placed under their bars; a short
    // panel gives that row to the bars.
    let x_labels: &[&str] = if chart_area.height >= 6 {
        &["", ""]
    } else {
        &[]
    };
    let chart = Chart::new(datasets)
        .x_axis(
            Axis::default()
                .bounds(x)
                .labels(x_labels.iter().copied())
                .style(Style::new().fg(DIM)),
        )
        .y_axis(
            Axis::default()
                .bounds(y)
                .labels(y_labels)
                .style(Style::new().fg(DIM)),
        );
    frame.render_widget(chart, chart_area);
    bars::draw(frame.buffer_mut(), chart_area, x, y, &builds, h.cursor);
}

mod bars;
#[cfg(test)]
pub(crate) mod tests;

/// One build as the chart draws it: its mean, its 95 % interval (the mean alone without
/// one), and whether its figure is doubtful.
pub(super) struct Bar {
    /// The build's index in the history.
    index: usize,
    x: f64,
    mean: f64,
    low: f64,
    high: f64,
    doubtful: bool,
}

impl Bar {
    fn of(index: usize, e: &crate::journal::Entry) -> Option<Self> {
        let mean = e.mean_cycles?;
        let half = e.ci95_half_width.unwrap_or(0.0).abs();
        Some(Self {
            index,
            x: (index + 1) as f64,
            mean,
            low: (mean - half).max(0.0),
            high: mean + half,
            doubtful: e.doubt.is_some(),
        })
    }
}
