//! History panel: the tuning journal's builds of one instance at one length — mean cycles per
//! build as a line with the highlighted build marked, and below it that build's flags, date,
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
            Span::raw(terminal(&e.flags_text()).into_owned()),
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
    let pts: Vec<(f64, f64)> = h
        .rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| Some(((i + 1) as f64, r.entry.mean_cycles?)))
        .collect();
    if pts.is_empty() || chart_area.height < 3 {
        return;
    }
    let (lo, hi) = pts.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &(_, y)| {
        (lo.min(y), hi.max(y))
    });
    let pad = ((hi - lo) * 0.1).max(hi * 0.01).max(1.0);
    let (y_lo, y_hi) = ((lo - pad).max(0.0), hi + pad);
    let x_hi = (pts.len() as f64).max(2.0);
    let marked: Vec<(f64, f64)> = pts
        .iter()
        .copied()
        .filter(|&(x, _)| x == (h.cursor + 1) as f64)
        .collect();
    let datasets = vec![
        Dataset::default()
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(Style::new().fg(Color::Cyan))
            .data(&pts),
        Dataset::default()
            .marker(Marker::Block)
            .graph_type(GraphType::Scatter)
            .style(Style::new().fg(ACCENT))
            .data(&marked),
    ];
    let y_labels: Vec<Span> = [y_lo, (y_lo + y_hi) / 2.0, y_hi]
        .iter()
        .map(|&v| Span::raw(format::int(Some(v))))
        .collect();
    let x_labels: Vec<Span> = ["1".to_string(), format!("{}", pts.len())]
        .into_iter()
        .map(Span::raw)
        .collect();
    let chart = Chart::new(datasets)
        .x_axis(
            Axis::default()
                .bounds([1.0, x_hi])
                .labels(x_labels)
                .style(Style::new().fg(DIM)),
        )
        .y_axis(
            Axis::default()
                .bounds([y_lo, y_hi])
                .labels(y_labels)
                .style(Style::new().fg(DIM)),
        );
    frame.render_widget(chart, chart_area);
}
