//! Live histogram panel: the per-call cycle histogram of the shown job (hdrhistogram
//! snapshot), binned to the panel width, with p50/p90/p99 and the loop mean marked under the
//! bars and the outliers counted. Bins come from `bins`, a pure function tested on its own.

use hdrhistogram::Histogram;
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{BAD, DIM, GOOD, WARN, block};
use crate::format;
use crate::measure::stats::outlier_fence;
use crate::tui::app::{App, HistView, JobState, Panel};
use crate::vocabulary::HistogramSnapshot;

const BAR: Color = Color::Blue;
const MEAN: Color = Color::Magenta;
const EIGHTHS: [&str; 8] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"];

/// A histogram cut into equal-width bins between a low and a high quantile.
#[derive(Debug, Clone, PartialEq)]
pub struct Bins {
    pub lo: u64,
    pub hi: u64,
    /// Samples per column; a histogram bucket wider than a column is spread evenly over the
    /// columns it covers (hdrhistogram keeps 3 significant digits, so at 7000 ticks a bucket
    /// is 4 ticks wide), which keeps narrow distributions from drawing as a comb.
    pub counts: Vec<f64>,
    /// Samples above `hi` (not drawn; counted in the legend).
    pub above: u64,
}

impl Bins {
    /// The column a value falls in, if it is inside the drawn range.
    pub fn column(&self, v: f64) -> Option<usize> {
        let n = self.counts.len();
        let span = (self.hi - self.lo + 1) as f64;
        if n == 0 || v < self.lo as f64 || v > self.hi as f64 + 1.0 {
            return None;
        }
        Some((((v - self.lo as f64) / span * n as f64) as usize).min(n - 1))
    }
}

/// `n` bins from the 0.1 % quantile to the 99 % quantile or the outlier fence, whichever is
/// lower (so a few interrupts do not squeeze the bulk into one column), at least one tick per
/// bin.
pub fn bins(h: &Histogram<u64>, n: usize) -> Option<Bins> {
    if h.is_empty() || n == 0 {
        return None;
    }
    let lo = h.value_at_quantile(0.001);
    let fence = outlier_fence(h.value_at_quantile(0.5), h.value_at_quantile(0.9));
    let hi = h.value_at_quantile(0.99).min(fence).max(lo + n as u64 - 1);
    let mut b = Bins {
        lo,
        hi,
        counts: vec![0.0; n],
        above: 0,
    };
    for v in h.iter_recorded() {
        let (value, count) = (v.value_iterated_to(), v.count_at_value());
        if value > hi {
            b.above += count;
            continue;
        }
        let from = b
            .column(h.lowest_equivalent(value).max(lo) as f64)
            .unwrap_or(0);
        let to = b.column(value.max(lo) as f64).unwrap_or(0).max(from);
        let share = count as f64 / (to - from + 1) as f64;
        for c in &mut b.counts[from..=to] {
            *c += share;
        }
    }
    Some(b)
}

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
    }
    let blk = block(app, Panel::Histogram, title);
    let inner = blk.inner(area);
    frame.render_widget(blk, area);
    match job.and_then(|j| j.snapshot.as_ref()) {
        Some(s) if inner.height >= 4 => draw_snapshot(frame.buffer_mut(), inner, s),
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

/// Legend, bars, marker row and axis into `area` (at least 4 rows).
pub fn draw_snapshot(buf: &mut Buffer, area: Rect, s: &HistogramSnapshot) {
    let Some(b) = bins(&s.histogram, usize::from(area.width)) else {
        return;
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
        .map(|col| {
            marks
                .iter()
                .filter(|(_, c, _)| *c != MEAN)
                .find(|(v, _, _)| b.column(*v) == Some(col))
                .map(|(_, c, _)| *c)
        })
        .collect();
    for (col, &count) in b.counts.iter().enumerate() {
        let eighths = (count / top * f64::from(bars.height) * 8.0).round() as u32;
        let eighths = if count > 0.0 { eighths.max(1) } else { 0 };
        let style = Style::new().fg(colored[col].unwrap_or(BAR));
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
        if let Some(col) = b.column(*v) {
            let sym = if *name == "loop mean" { "◆" } else { "▲" };
            buf.set_string(area.x + col as u16, marker_y, sym, Style::new().fg(*c));
        }
    }

    let axis_y = area.y + area.height - 1;
    let lo = format::int(Some(b.lo as f64));
    let hi = format!("{} ›", format::int(Some(b.hi as f64)));
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
    use std::sync::Arc;

    fn flat(from: u64, to: u64) -> Histogram<u64> {
        let mut h = new_histogram();
        for v in from..=to {
            h.record(v).unwrap();
        }
        h
    }

    #[test]
    fn bins_cover_the_bulk_and_count_what_is_above() {
        let mut h = flat(1000, 1999);
        h.record_n(50_000, 3).unwrap();
        // The top 1 % (10 flat samples and the 3 outliers) lies above the drawn range.
        let b = bins(&h, 10).unwrap();
        assert_eq!(b.lo, 1001);
        assert!(b.hi >= 1985 && b.hi < 2000, "{}", b.hi);
        assert_eq!(b.above, 3 + (1999 - b.hi));
        assert_eq!(b.counts.iter().sum::<f64>().round() as u64 + b.above, 1003);
        assert!(
            b.counts.iter().all(|&c| (90.0..=110.0).contains(&c)),
            "{:?}",
            b.counts
        );
        assert_eq!(b.column(1001.0), Some(0));
        assert_eq!(b.column(b.hi as f64), Some(9));
        assert_eq!(b.column(10.0), None);
        assert!(bins(&new_histogram(), 10).is_none());
    }

    #[test]
    fn a_narrow_histogram_still_gets_one_tick_per_bin() {
        let b = bins(&flat(500, 500), 40).unwrap();
        assert_eq!((b.lo, b.hi), (500, 539));
        assert_eq!(b.counts[0], 1.0);
    }

    #[test]
    fn wide_buckets_are_spread_over_the_columns_they_cover() {
        // At 7000 ticks a bucket holds 4 values: 7000..=7003 in one bucket, 40 columns over
        // ~40 ticks put it across 4 columns instead of one spike and three gaps.
        let mut h = new_histogram();
        for v in 7000..7040u64 {
            h.record(v).unwrap();
        }
        let b = bins(&h, 40).unwrap();
        assert_eq!(h.lowest_equivalent(7002), 7000);
        let filled = b.counts.iter().filter(|&&c| c > 0.0).count();
        assert!(filled >= 36, "{:?}", b.counts);
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
        draw_snapshot(&mut buf, area, &s);
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
            row(5).starts_with("1000") && row(5).trim_end().ends_with("›"),
            "{}",
            row(5)
        );
    }
}
