//! The report's SVG figures, drawn with `plotters` (its SVG backend only): per candidate,
//! cycles/byte against message length for all its instances and the same-width `pseudoXOF`
//! of the baseline; per job with cyclescope's per-call histogram, that histogram's body
//! (`measure::body`, the TUI's binning) with the samples outside it counted at the edges.
//! Returns SVG text; never reads or writes files.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::dataset::InstanceEvidence;
use crate::measure::body;
use crate::record::TimingRecord;

mod legend;

const SIZE: (u32, u32) = (800, 480);
const FONT: &str = "sans-serif";

#[derive(Debug, thiserror::Error)]
#[error("drawing a figure: {0}")]
pub struct FigureError(String);

fn err<E: std::fmt::Debug>(e: E) -> FigureError {
    FigureError(format!("{e:?}"))
}

/// An axis label: whole numbers as the tables write them, small ones to 3 digits.
fn axis_number(v: f64) -> String {
    if v >= 100.0 {
        crate::format::int(Some(v))
    } else {
        crate::format::g3(v)
    }
}

/// One line of the cycles/byte figure: a name and its (bytes, cycles/byte) points.
struct Series {
    name: String,
    points: Vec<(f64, f64)>,
    /// The points whose figure is doubtful (`measure::doubt`): marked ⚠ as in the tables.
    doubtful: Vec<(f64, f64)>,
    reference: bool,
}

fn series_of(i: &InstanceEvidence, reference: bool) -> Option<Series> {
    let mut points = Vec::new();
    let mut doubtful = Vec::new();
    for (_, r) in &i.records {
        let Some(c) = r
            .mean_cycles
            .filter(|_| r.status.is_complete() && r.input_bytes > 0)
        else {
            continue;
        };
        let p = (r.input_bytes as f64, c / r.input_bytes as f64);
        points.push(p);
        if crate::baseline::figure_doubtful(&r.summary()) {
            doubtful.push(p);
        }
    }
    (!points.is_empty()).then(|| Series {
        name: if reference {
            format!("{} (baseline)", i.label)
        } else {
            i.label.clone()
        },
        points,
        doubtful,
        reference,
    })
}

/// Cycles/byte against message length (both axes logarithmic) of `instances` and of the
/// baseline instances of their widths among `baseline`; None without a complete record.
pub(crate) fn cycles_per_byte(
    title: &str,
    counter: crate::counter::Counter,
    instances: &[InstanceEvidence],
    baseline: &[InstanceEvidence],
) -> Result<Option<String>, FigureError> {
    let mut lines: Vec<Series> = instances
        .iter()
        .filter_map(|i| series_of(i, false))
        .collect();
    if lines.is_empty() {
        return Ok(None);
    }
    let mut widths: Vec<u64> = instances.iter().filter_map(|i| i.digest_bits).collect();
    widths.sort_unstable();
    widths.dedup();
    for bits in widths {
        let label = crate::baseline::label(bits as u32);
        if let Some(b) = baseline.iter().find(|b| b.label == label) {
            lines.extend(series_of(b, true));
        }
    }
    let mut lengths: Vec<f64> = lines
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    lengths.sort_by(f64::total_cmp);
    lengths.dedup();
    let all = lines.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in all {
        (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
    }
    let (y0, y1) = ((y0 * 0.8).max(1e-6), (y1 * 1.25).max(y0 * 2.0));
    // The legend has a strip of its own right of the plot, so it can cover no line.
    let mut entries: Vec<legend::Entry> = lines
        .iter()
        .enumerate()
        .map(|(n, s)| legend::Entry {
            name: s.name.clone(),
            mark: legend::Mark::Line(line_style(n, s)),
        })
        .collect();
    let doubtful: Vec<(f64, f64)> = lines.iter().flat_map(|s| s.doubtful.clone()).collect();
    if !doubtful.is_empty() {
        entries.push(legend::Entry {
            name: "⚠ doubtful figure (see the table)".into(),
            mark: legend::Mark::Cross(RED.stroke_width(2)),
        });
    }
    let strip = legend::width(&entries);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (SIZE.0 + strip, SIZE.1)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (plot, side) = root.split_horizontally(SIZE.0);
        let mut chart = ChartBuilder::on(&plot)
            .caption(title, (FONT, 18))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(
                (x0 * 0.8..x1 * 1.25).log_scale().with_key_points(lengths),
                (y0..y1).log_scale(),
            )
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("message length (bytes)")
            .y_desc(format!("{} per byte", counter.name()))
            .x_label_formatter(&|v| crate::format::size(v.round() as u64))
            .y_label_formatter(&|v| axis_number(*v))
            .draw()
            .map_err(err)?;
        for (n, s) in lines.iter().enumerate() {
            chart
                .draw_series(
                    LineSeries::new(s.points.iter().copied(), line_style(n, s)).point_size(3),
                )
                .map_err(err)?;
        }
        if !doubtful.is_empty() {
            chart
                .draw_series(
                    doubtful
                        .iter()
                        .map(|&p| Cross::new(p, 7, RED.stroke_width(2))),
                )
                .map_err(err)?;
        }
        legend::draw(&side, &entries)?;
        root.present().map_err(err)?;
    }
    Ok(Some(svg))
}

/// How series `n` of the cycles/byte figure is drawn: the baseline thinner.
fn line_style(n: usize, s: &Series) -> ShapeStyle {
    let color = Palette99::pick(n).to_rgba();
    if s.reference {
        color.stroke_width(1)
    } else {
        color.stroke_width(2)
    }
}

/// The per-call histogram of one record (cyclescope's addition): the body in at most 60 bins,
/// each a whole number of counter steps wide (no comb), with the samples below and above it
/// named in the caption; None when the record has none.
pub(crate) fn per_call_histogram(r: &TimingRecord) -> Result<Option<String>, FigureError> {
    let Some(add) = r.cyclescope.as_ref() else {
        return Ok(None);
    };
    let Some(h) = add
        .histogram_v2_base64
        .as_deref()
        .and_then(crate::record::histogram::decode)
    else {
        return Ok(None);
    };
    let Some(b) = body::bins_at_resolution(&h, 60) else {
        return Ok(None);
    };
    let top = b.counts.iter().copied().fold(0.0, f64::max).max(1.0);
    let unit = add
        .per_call_source
        .map_or("ticks", crate::counter::CycleSource::name);
    let title = format!(
        "{} @ {} · per-call {unit} · n {} · {} below, {} above the drawn body",
        r.label,
        crate::format::size(r.input_bytes),
        h.len(),
        b.below,
        b.above
    );
    let (left, right) = (b.lo as f64, (b.hi + 1) as f64);
    // The loop mean's entry, in a strip of its own (it covers no bin): its value always,
    // once, and the arrow when it lies off the scale.
    let entries: Vec<legend::Entry> = r
        .mean_cycles
        .map(|mean| legend::Entry {
            name: format!(
                "◆ loop mean {} {}",
                crate::format::int(Some(mean)),
                off_scale(mean, left, right)
            )
            .trim_end()
            .to_string(),
            mark: legend::Mark::Line(MAGENTA.stroke_width(1)),
        })
        .into_iter()
        .collect();
    let strip = legend::width(&entries);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (SIZE.0 + strip, SIZE.1)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (plot, side) = root.split_horizontally(SIZE.0);
        let mut chart = ChartBuilder::on(&plot)
            .caption(title, (FONT, 15))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(b.lo as f64..(b.hi + 1) as f64, 0.0..top * 1.15)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc(format!(
                "cycles per call ({unit}), p{:.1}–p{:.1} and outlier fence",
                100.0 * body::LOW_QUANTILE,
                100.0 * body::HIGH_QUANTILE
            ))
            .y_desc("calls")
            .x_label_formatter(&|v| crate::format::int(Some(*v)))
            .y_label_formatter(&|v| crate::format::int(Some(*v)))
            .draw()
            .map_err(err)?;
        chart
            .draw_series(b.counts.iter().enumerate().map(|(i, &c)| {
                Rectangle::new(
                    [(b.edge(i), 0.0), (b.edge(i + 1), c)],
                    BLUE.mix(0.7).filled(),
                )
            }))
            .map_err(err)?;
        // The markers the workbench draws: p50/p90/p99 ▲ and the loop mean ◆, each at the
        // axis end (named with its value) when it lies beyond the drawn body, so a loop mean
        // twice the body cannot pass unseen.
        let place = |v: f64| v.clamp(left, right);
        if let Some(pc) = add.per_call {
            let grey = RGBColor(80, 80, 80);
            // Quantiles that fall on one value (a coarse counter makes them so) share one
            // marker and one label, `▲ p50 p90`, instead of labels written over each other.
            let mut markers: Vec<(String, u64)> = Vec::new();
            for (name, v) in [("p50", pc.p50), ("p90", pc.p90), ("p99", pc.p99)] {
                match markers.iter_mut().find(|m| m.1 == v) {
                    Some(m) => m.0 = format!("{} {name}", m.0),
                    None => markers.push((name.to_string(), v)),
                }
            }
            for (name, v) in markers {
                let (v, at) = (v as f64, place(v as f64));
                chart
                    .draw_series([PathElement::new(
                        vec![(at, 0.0), (at, top * 1.02)],
                        grey.stroke_width(1),
                    )])
                    .map_err(err)?;
                // A label at the right end ends there, not in the legend's strip.
                let anchor = if v > right { HPos::Right } else { HPos::Left };
                chart
                    .draw_series([Text::new(
                        format!("▲ {}", marker_name(&name, v, left, right)),
                        (at, top * 1.08),
                        (FONT, 12)
                            .into_font()
                            .color(&grey)
                            .pos(Pos::new(anchor, VPos::Bottom)),
                    )])
                    .map_err(err)?;
            }
        }
        if let Some(mean) = r.mean_cycles {
            let at = place(mean);
            chart
                .draw_series(LineSeries::new([(at, 0.0), (at, top * 1.05)], MAGENTA))
                .map_err(err)?;
        }
        legend::draw(&side, &entries)?;
        root.present().map_err(err)?;
    }
    Ok(Some(svg))
}

/// The arrow of a marker beyond the drawn body (`‹` left, `›` right), or "".
fn off_scale(v: f64, left: f64, right: f64) -> &'static str {
    if v < left {
        "‹"
    } else if v > right {
        "›"
    } else {
        ""
    }
}

/// A marker's words: its name, and where it lies beyond the drawn body its value once with
/// the arrow that points off the scale (`loop mean 1 760 ›`); the marker itself sits at the
/// axis end.
fn marker_name(name: &str, v: f64, left: f64, right: f64) -> String {
    match off_scale(v, left, right) {
        "" => name.to_string(),
        arrow => format!("{name} {} {arrow}", crate::format::int(Some(v))),
    }
}

/// One figure: its path relative to the candidate page's folder, what it shows, its SVG.
pub(crate) struct Figure {
    pub(crate) path: std::path::PathBuf,
    pub(crate) what: String,
    pub(crate) svg: String,
}

/// The figures of one candidate page: cycles/byte, then each job's histogram, in the
/// instances' order and by length. `title` makes the per-byte figure's title from what it
/// shows (`cycles per byte`, `instructions per byte`).
pub(crate) fn of_candidate(
    title: &dyn Fn(&str) -> String,
    system_id: &str,
    instances: &[InstanceEvidence],
    baseline: &[InstanceEvidence],
) -> Result<Vec<Figure>, FigureError> {
    let dir = std::path::Path::new("figures");
    let mut out = Vec::new();
    // Instructions where the records count them (the page's tables say so too).
    let summaries: Vec<_> = instances
        .iter()
        .flat_map(|i| i.records.iter())
        .map(|(_, r)| r.summary())
        .collect();
    let counter = super::counter_of(summaries.iter());
    let per_byte = format!("{} per byte", counter.name());
    if let Some(svg) = cycles_per_byte(&title(&per_byte), counter, instances, baseline)? {
        out.push(Figure {
            path: dir.join(format!("cpb_{system_id}.svg")),
            what: format!("{per_byte} against message length"),
            svg,
        });
    }
    for i in instances {
        for (_, r) in &i.records {
            if let Some(svg) = per_call_histogram(r)? {
                out.push(Figure {
                    path: dir.join(format!(
                        "hist_{}_{}_{system_id}.svg",
                        r.label, r.input_bytes
                    )),
                    what: format!("`{}` {} B per-call histogram", r.label, r.input_bytes),
                    svg,
                });
            }
        }
    }
    Ok(out)
}

/// The lines that link the figures from a page: prose lines (no table row, no heading), so
/// the page's tables stay the published ones.
pub(crate) fn links(figures: &[Figure]) -> String {
    if figures.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nFigures drawn by cyclescope from these records:\n\n");
    for f in figures {
        out += &format!("- [{}]({})\n", f.what, f.path.display());
    }
    out
}

#[cfg(test)]
mod tests;
