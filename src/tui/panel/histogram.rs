//! Live histogram panel: the per-call cycle histogram of the shown job (hdrhistogram
//! snapshot), its body (p0.5–p99.5 and the outlier fence, `measure::body`, the binning the
//! report's figures use too) binned to the panel width, the calls outside it counted at
//! either edge of the axis, p50/p90/p99 and the loop mean marked under the bars, and the
//! counts on a linear or log scale (`y`).

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{BAD, DIM, GOOD, WARN, block};
use crate::format;
use crate::measure::body::{bins, bins_at_resolution, step};
use crate::tui::app::{App, HistView, JobState, Panel};
use crate::vocabulary::HistogramSnapshot;

const BAR: Color = Color::Blue;
const MEAN: Color = Color::Magenta;
const EIGHTHS: [&str; 8] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"];

pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let job = app.hist_job();
    let mut title = "Histogram".to_string();
    if let Some(j) = job {
        title.push_str(&format!(" · {}", j.key));
        match &j.state {
            JobState::Running { trial, trials, .. } => {
                title.push_str(&format!(" · trial {trial}/{trials}"));
            }
            _ => title.push_str(" · done"),
        }
        if app.hist_view != HistView::Live {
            title.push_str(" · pinned");
        }
        if app.hist_log {
            title.push_str(" · log count");
        }
    }
    let blk = block(app, Panel::Histogram, title);
    let inner = blk.inner(area);
    frame.render_widget(blk, area);
    match job.and_then(|j| j.snapshot.as_ref()) {
        Some(s) if inner.height >= 4 => draw_snapshot(frame.buffer_mut(), inner, s, app.hist_log),
        _ => frame.render_widget(
            Paragraph::new(Span::styled(
                "no per-call samples yet: the running job's histogram appears here",
                Style::new().fg(DIM),
            ))
            .wrap(ratatui::widgets::Wrap { trim: true }),
            inner,
        ),
    }
}

/// A bar's height as a share of the tallest, on a linear or log scale (log: a column of one
/// call still shows beside a peak of thousands).
fn share(count: f64, top: f64, log: bool) -> f64 {
    if log {
        (1.0 + count).ln() / (1.0 + top).ln()
    } else {
        count / top
    }
}

/// Legend, bars, marker row and axis into `area` (at least 4 rows).
pub fn draw_snapshot(buf: &mut Buffer, area: Rect, s: &HistogramSnapshot, log: bool) {
    let width = usize::from(area.width);
    let Some(plain) = bins(&s.histogram, width) else {
        return;
    };
    // A counter that steps by more than the histogram's own buckets (this VM's TSC: 26 ticks,
    // where a bucket is one) gets bins a whole number of steps wide, each over as many
    // columns as its share of the axis: finer bins would leave columns empty (a comb). Wide
    // buckets alone are spread over the columns they cover (`measure::body`).
    let h = &s.histogram;
    let b = if step(h) > h.equivalent_range(plain.hi) {
        bins_at_resolution(h, width).unwrap_or(plain)
    } else {
        plain
    };
    let bin_of = |col: usize| col * b.counts.len() / width.max(1);
    let screen_column = |v: f64| {
        b.column(v)?;
        let span = (b.hi - b.lo + 1) as f64;
        Some((((v - b.lo as f64) * width as f64 / span) as usize).min(width.saturating_sub(1)))
    };
    let pc = s.per_call;
    let marks: Vec<(f64, Color, &str)> = [
        pc.map(|p| (p.p50 as f64, GOOD, "p50")),
        pc.map(|p| (p.p90 as f64, WARN, "p90")),
        pc.map(|p| (p.p99 as f64, BAD, "p99")),
        s.loop_mean_cycles.map(|m| (m, MEAN, "loop mean")),
    ]
    .into_iter()
    .flatten()
    .collect();

    // Legend: each figure in its marker's colour; the long form when it fits.
    let outliers = pc.map_or(0, |p| p.outliers);
    let n = s.histogram.len();
    let long = |sep: &'static str, mean: &'static str, with_n: bool, with_out: bool| {
        let mut spans = vec![];
        for (v, c, name) in &marks {
            let name = if *name == "loop mean" { mean } else { name };
            spans.push(Span::styled(
                format!("{name} {}", format::int(Some(*v))),
                Style::new().fg(*c),
            ));
            spans.push(Span::raw(sep));
        }
        if with_out {
            spans.push(Span::raw(format!(
                "out {} ",
                format::int(Some(outliers as f64))
            )));
        }
        if with_n {
            spans.push(Span::styled(
                format!("n {}", format::int(Some(n as f64))),
                Style::new().fg(DIM),
            ));
        }
        Line::from(spans)
    };
    let legend = [
        (" · ", "loop mean", true, true),
        (" ", "μ", true, true),
        (" ", "μ", false, true),
        (" ", "μ", false, false),
    ]
    .into_iter()
    .map(|(sep, mean, with_n, with_out)| long(sep, mean, with_n, with_out))
    .find(|l| l.width() <= usize::from(area.width))
    .unwrap_or_default();
    buf.set_line(area.x, area.y, &legend, area.width);

    let bars = Rect::new(area.x, area.y + 1, area.width, area.height - 3);
    let top = b.counts.iter().copied().fold(0.0, f64::max).max(1e-9);
    let colored: Vec<Option<Color>> = (0..b.counts.len())
        .map(|bin| {
            marks
                .iter()
                .filter(|(_, c, _)| *c != MEAN)
                .find(|(v, _, _)| b.column(*v) == Some(bin))
                .map(|(_, c, _)| *c)
        })
        .collect();
    for col in 0..width {
        let bin = bin_of(col);
        let count = b.counts[bin];
        let eighths = (share(count, top, log) * f64::from(bars.height) * 8.0).round() as u32;
        let eighths = if count > 0.0 { eighths.max(1) } else { 0 };
        let style = Style::new().fg(colored[bin].unwrap_or(BAR));
        for row in 0..u32::from(bars.height) {
            let fill = eighths.saturating_sub(row * 8).min(8);
            if fill == 0 {
                break;
            }
            let y = bars.y + bars.height - 1 - row as u16;
            buf.set_string(bars.x + col as u16, y, EIGHTHS[fill as usize - 1], style);
        }
    }

    let marker_y = area.y + area.height - 2;
    for (v, c, name) in &marks {
        if let Some(col) = screen_column(*v) {
            let sym = if *name == "loop mean" { "◆" } else { "▲" };
            buf.set_string(area.x + col as u16, marker_y, sym, Style::new().fg(*c));
        }
    }

    // The calls outside the drawn body are counted at the edge they lie beyond.
    let axis_y = area.y + area.height - 1;
    let lo = match b.below {
        0 => format::int(Some(b.lo as f64)),
        n => format!("{n}‹ {}", format::int(Some(b.lo as f64))),
    };
    let hi = match b.above {
        0 => format!("{} ›", format::int(Some(b.hi as f64))),
        n => format!("{} ›{n}", format::int(Some(b.hi as f64))),
    };
    let mid = format!("cycles per call · {}", s.per_call_source);
    buf.set_string(area.x, axis_y, &lo, Style::new().fg(DIM));
    let hi_x = area.x + area.width.saturating_sub(hi.chars().count() as u16);
    buf.set_string(hi_x, axis_y, &hi, Style::new().fg(DIM));
    let room = usize::from(area.width).saturating_sub(lo.chars().count() + hi.chars().count() + 2);
    if mid.chars().count() <= room {
        let x = area.x + (area.width - mid.chars().count() as u16) / 2;
        buf.set_string(x, axis_y, &mid, Style::new().fg(DIM));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::stats::{new_histogram, per_call};
    use hdrhistogram::Histogram;
    use std::sync::Arc;

    fn flat(from: u64, to: u64) -> Histogram<u64> {
        let mut h = new_histogram();
        for v in from..=to {
            h.record(v).unwrap();
        }
        h
    }

    #[test]
    fn draws_bars_markers_and_axis() {
        let h = flat(1000, 1999);
        let s = HistogramSnapshot {
            per_call: per_call(&h),
            histogram: Arc::new(h),
            loop_mean_cycles: Some(1200.0),
            timer_overhead_ticks: 20.0,
            per_call_source: "tsc".into(),
        };
        let area = Rect::new(0, 0, 90, 6);
        let mut buf = Buffer::empty(area);
        draw_snapshot(&mut buf, area, &s, false);
        let row = |y: u16| {
            (0..90)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
        };
        assert!(
            row(0).starts_with("p50 1499 · p90 1899 · p99 1989 · loop mean 1200 · out 0"),
            "{}",
            row(0)
        );
        assert!(
            row(3).chars().all(|c| c == '█'),
            "flat bars fill the panel: {}",
            row(3)
        );
        assert_eq!(row(4).matches('▲').count(), 3, "{}", row(4));
        assert_eq!(row(4).matches('◆').count(), 1, "{}", row(4));
        assert!(
            row(5).starts_with("4‹ 1004") && row(5).trim_end().ends_with("1994 ›5"),
            "{}",
            row(5)
        );
    }

    fn snapshot(h: Histogram<u64>) -> HistogramSnapshot {
        HistogramSnapshot {
            per_call: per_call(&h),
            histogram: Arc::new(h),
            loop_mean_cycles: None,
            timer_overhead_ticks: 20.0,
            per_call_source: "tsc".into(),
        }
    }

    fn rows(s: &HistogramSnapshot, log: bool) -> Vec<String> {
        let area = Rect::new(0, 0, 60, 8);
        let mut buf = Buffer::empty(area);
        draw_snapshot(&mut buf, area, s, log);
        (0..8)
            .map(|y| (0..60).map(|x| buf[(x, y)].symbol().to_string()).collect())
            .collect()
    }

    #[test]
    fn one_far_sample_does_not_squeeze_the_body_into_a_column() {
        // As seen on FEILIAN512 at 64 KiB: ~2.1 M cycles per call, one interrupt at 40 M.
        let mut h = new_histogram();
        for i in 0..2000u64 {
            h.record(2_100_000 + (i % 200) * 500).unwrap();
        }
        h.record(40_000_000).unwrap();
        h.record(5).unwrap();
        let r = rows(&snapshot(h), false);
        let filled = (0..60)
            .filter(|&x| r[1..5].iter().any(|row| row.chars().nth(x) != Some(' ')))
            .count();
        assert!(filled >= 50, "the body spans the panel:\n{}", r.join("\n"));
        // The far calls are counted at the edges of the axis, not dropped.
        let axis = &r[7];
        assert!(axis.starts_with("1‹ "), "{axis}");
        assert!(axis.trim_end().ends_with("›1"), "{axis}");
    }

    #[test]
    fn a_counter_that_steps_by_26_ticks_draws_no_comb() {
        // This VM's TSC: only multiples of 26 are read, 1300–1872 at 32 B; 60 columns of
        // plain bins would be 10 ticks wide, and two of every three empty.
        let mut h = new_histogram();
        for k in 50..73u64 {
            h.record_n(26 * k, 1000 - 30 * k.abs_diff(57)).unwrap();
        }
        let r = rows(&snapshot(h), false);
        let bottom: Vec<char> = r[5].chars().collect();
        assert!(
            bottom.iter().all(|&c| c != ' '),
            "a column without a bar:\n{}",
            r.join("\n")
        );
    }

    #[test]
    fn the_log_scale_shows_a_thin_tail_beside_a_peak() {
        let mut h = new_histogram();
        h.record_n(1000, 100_000).unwrap();
        for v in 1001..1060u64 {
            h.record_n(v, 2).unwrap();
        }
        let s = snapshot(h);
        // Ink: the eighths of a cell the bars fill, summed over the panel.
        let ink = |log| {
            rows(&s, log)[1..6]
                .iter()
                .flat_map(|row| row.chars().collect::<Vec<_>>())
                .map(|c| {
                    EIGHTHS
                        .iter()
                        .position(|e| e.starts_with(c))
                        .map_or(0, |i| i + 1)
                })
                .sum::<usize>()
        };
        // Linear: the tail is a row of the thinnest bars; log: it stands up.
        let (log, linear) = (ink(true), ink(false));
        assert!(log > 2 * linear, "{log} vs {linear}");
    }
}
