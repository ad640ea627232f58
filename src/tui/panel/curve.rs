//! Curve panel: cycles per byte against message length on a log₂ x axis, one solid line per
//! measured instance (an earlier run's figures of it dashed in its colour, labelled `#run`),
//! and the pseudoXOF of the same width dashed as the reference when it has been measured. The y axis is logarithmic when the series differ by more than 10× (or as
//! the operator chose), series can be hidden, and a readout names every visible series' value
//! at one length. Points appear as lengths finish.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::symbols::Marker;
use ratatui::text::Span;
use ratatui::widgets::{Axis, Chart, Dataset, GraphType, LegendPosition, Paragraph};

use super::{DIM, block};
use crate::format;
use crate::tui::app::{App, CurveSeries, Panel};

const PALETTE: [Color; 6] = [
    Color::Cyan,
    Color::Green,
    Color::Magenta,
    Color::Yellow,
    Color::LightBlue,
    Color::LightRed,
];
const REFERENCE: Color = Color::Gray;

/// Points of a dashed line through `pts` (log₂ x): samples along each segment, in runs of
/// `on` kept and `off` skipped.
pub fn dashed(pts: &[(f64, f64)], samples_per_unit: f64) -> Vec<(f64, f64)> {
    let (on, off) = (3usize, 3usize);
    let mut out = vec![];
    let mut k = 0usize;
    for w in pts.windows(2) {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        let n = (((x1 - x0) * samples_per_unit).ceil() as usize).max(1);
        for i in 0..n {
            let t = i as f64 / n as f64;
            if k % (on + off) < on {
                out.push((x0 + t * (x1 - x0), y0 + t * (y1 - y0)));
            }
            k += 1;
        }
    }
    if let Some(&last) = pts.last() {
        out.push(last);
    }
    out
}

/// Chart coordinates: log₂ bytes, and cycles/byte or its log₁₀.
fn chart_points(s: &CurveSeries, log_y: bool) -> Vec<(f64, f64)> {
    s.points
        .iter()
        .map(|&(b, c)| {
            let y = if log_y { c.max(1e-9).log10() } else { c };
            ((b as f64).log2(), y)
        })
        .collect()
}

/// The legend's marker of the series under the curve's cursor (while the curve has focus).
fn cursor_mark(app: &App, i: usize) -> &'static str {
    if app.focus == Panel::Curve && i == app.curve_series {
        "▸"
    } else {
        ""
    }
}

/// A cycles/byte value for an axis label or the readout.
fn cpb(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// `1 KiB: sm3hash-256 22.5 · pseudoXOF-512 45.1` — the visible series' cycles/byte at the
/// readout's length (the last length until the operator moves it).
pub fn readout(app: &App) -> Option<String> {
    let lens = app.curve_lengths();
    let len = *lens.get(app.curve_length.min(lens.len().checked_sub(1)?))?;
    let values: Vec<String> = app
        .curves()
        .iter()
        .filter(|s| !app.curve_hidden.contains(&s.label))
        .filter_map(|s| {
            let (_, v) = s.points.iter().find(|p| p.0 == len)?;
            Some(format!("{} {}", s.label, cpb(*v)))
        })
        .collect();
    Some(format!("{}: {}", format::size(len), values.join(" · ")))
}

/// What the curve's figures count: the finished jobs' counter (as the Results panel names
/// its columns), the counter chosen for the next run before any job has finished.
fn counter(app: &App) -> crate::counter::Counter {
    let rows = app.result_rows();
    let summaries: Vec<&crate::vocabulary::JobSummary> =
        rows.iter().filter_map(|r| r.summary).collect();
    if summaries.is_empty() {
        app.counter.counts()
    } else {
        crate::report::counter_of(summaries)
    }
}

pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let log_y = app.curve_is_log();
    // `cycles/byte`, or `instructions/byte` in instruction mode.
    let per_byte = format!("{}/byte", counter(app).name());
    let title = format!(
        "Curve · {per_byte}{} vs message length",
        if log_y { " (log)" } else { "" }
    );
    let mut blk = block(app, Panel::Curve, title);
    if let Some(r) = readout(app) {
        blk = blk.title_bottom(Span::styled(format!(" {r} "), Style::new().fg(DIM)));
    }
    let series = app.curves();
    if series.is_empty() {
        let inner = blk.inner(area);
        frame.render_widget(blk, area);
        frame.render_widget(
            Paragraph::new(Span::styled(
                format!("{per_byte} per length appears as lengths finish"),
                Style::new().fg(DIM),
            )),
            inner,
        );
        return;
    }
    let all: Vec<(u64, f64)> = series
        .iter()
        .filter(|s| !app.curve_hidden.contains(&s.label))
        .flat_map(|s| s.points.iter().copied())
        .collect();
    let mut lens: Vec<u64> = all
        .iter()
        .map(|p| p.0)
        .chain(app.lengths.iter().copied())
        .collect();
    lens.sort_unstable();
    lens.dedup();
    let x_lo = (lens.first().copied().unwrap_or(32) as f64).log2().floor();
    let x_hi = (lens.last().copied().unwrap_or(65536) as f64)
        .log2()
        .ceil()
        .max(x_lo + 1.0);
    let y_max = all.iter().map(|p| p.1).fold(0.0f64, f64::max).max(1e-9);
    let y_min = all
        .iter()
        .map(|p| p.1)
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min)
        .min(y_max);
    // Log: whole decades around the data; linear: from 0 with some headroom.
    let (y_lo, y_hi) = if log_y {
        let lo = y_min.log10().floor();
        (lo, y_max.log10().ceil().max(lo + 1.0))
    } else {
        (0.0, y_max * 1.15)
    };

    let per_unit = f64::from(area.width) * 2.0 / (x_hi - x_lo);
    // (legend name, points, style, dashed reference)
    type Drawn = (String, Vec<(f64, f64)>, Style, bool);
    let data: Vec<Drawn> = series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            // A hidden series stays in the legend, without points, so it can be shown again.
            let hidden = app.curve_hidden.contains(&s.label);
            let pts = if hidden {
                vec![]
            } else {
                chart_points(s, log_y)
            };
            let mark = if hidden {
                format!("{mark_at}(hidden) ", mark_at = cursor_mark(app, i))
            } else {
                cursor_mark(app, i).to_string()
            };
            if s.outliers {
                (
                    format!("{mark}{} ✕", s.label),
                    pts,
                    Style::new().fg(Color::Red),
                    true,
                )
            } else if s.reference {
                (
                    format!("{mark}{} (ref)", s.label),
                    dashed(&pts, per_unit),
                    Style::new().fg(REFERENCE),
                    true,
                )
            } else if s.earlier.is_some() {
                // An earlier build of an instance: dashed, in that instance's colour.
                let base = series
                    .iter()
                    .position(|b| {
                        b.earlier.is_none() && s.label.starts_with(&format!("{} #", b.label))
                    })
                    .unwrap_or(i);
                (
                    format!("{mark}{}", s.label),
                    dashed(&pts, per_unit),
                    Style::new().fg(PALETTE[base % PALETTE.len()]),
                    true,
                )
            } else {
                (
                    format!("{mark}{}", s.label),
                    pts,
                    Style::new().fg(PALETTE[i % PALETTE.len()]),
                    false,
                )
            }
        })
        .collect();
    let datasets: Vec<Dataset> = data
        .iter()
        .map(|(name, pts, style, reference)| {
            Dataset::default()
                .name(name.clone())
                .marker(Marker::Braille)
                .graph_type(if *reference {
                    GraphType::Scatter
                } else {
                    GraphType::Line
                })
                .style(*style)
                .data(pts)
        })
        .collect();
    let x_labels: Vec<Span> = [x_lo, (x_lo + x_hi) / 2.0, x_hi]
        .iter()
        .map(|&e| Span::raw(format::size(2f64.powf(e.round()) as u64)))
        .collect();
    let y_labels: Vec<Span> = [y_lo, (y_lo + y_hi) / 2.0, y_hi]
        .iter()
        .map(|&v| Span::raw(cpb(if log_y { 10f64.powf(v) } else { v })))
        .collect();
    let chart = Chart::new(datasets)
        .block(blk)
        .legend_position(Some(LegendPosition::TopRight))
        .hidden_legend_constraints((
            ratatui::layout::Constraint::Percentage(60),
            ratatui::layout::Constraint::Percentage(60),
        ))
        .x_axis(
            Axis::default()
                .bounds([x_lo, x_hi])
                .labels(x_labels)
                .style(Style::new().fg(DIM)),
        )
        .y_axis(
            Axis::default()
                .bounds([y_lo, y_hi])
                .labels(y_labels)
                .style(Style::new().fg(DIM)),
        );
    frame.render_widget(chart, area);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dashes_alternate_and_end_on_the_last_point() {
        let pts = [(5.0, 100.0), (10.0, 50.0)];
        let d = dashed(&pts, 2.4);
        // 12 samples in runs of 3 kept / 3 skipped, plus the end point.
        assert_eq!(d.len(), 6 + 1);
        assert_eq!(d[0], (5.0, 100.0));
        assert_eq!(*d.last().unwrap(), (10.0, 50.0));
        assert!(dashed(&[(1.0, 1.0)], 4.0).len() == 1);
    }
}

#[cfg(test)]
mod render_tests;
