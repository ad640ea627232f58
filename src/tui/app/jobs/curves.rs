//! The cycles/byte curves derived from the session's jobs: one series per shown instance, an
//! earlier run's figures, a sweep's fit and outliers, the pseudoXOF reference of each width,
//! and the lengths and axis scale the curve panel reads from them.

use crate::tui::app::{App, JobState};

/// One instance's cycles/byte against message length.
#[derive(Debug, Clone, PartialEq)]
pub struct CurveSeries {
    pub label: String,
    /// (bytes, cycles per byte), by bytes.
    pub points: Vec<(u64, f64)>,
    /// The pseudoXOF of the same width, or a sweep's fit: drawn dashed.
    pub reference: bool,
    /// An earlier run's figures of an instance (`delta`), drawn dashed in the instance's colour.
    pub earlier: Option<usize>,
    /// A sweep's residual outliers: drawn as marks, not joined.
    pub outliers: bool,
}

impl App {
    /// The newest figure of `label` at each length, as cycles per byte.
    fn cycles_per_byte(&self, label: &str) -> Vec<(u64, f64)> {
        let mut pts: Vec<(u64, f64)> = Vec::new();
        for j in self.jobs.iter().rev() {
            if j.key.label != label || j.key.input_bytes == 0 {
                continue;
            }
            if let JobState::Done(s) = &j.state
                && let Some(c) = s.mean_cycles
                && !pts.iter().any(|p| p.0 == j.key.input_bytes)
            {
                pts.push((j.key.input_bytes, c / j.key.input_bytes as f64));
            }
        }
        pts.sort_by_key(|p| p.0);
        pts
    }

    /// Curves of the selected instances (of every measured one when none is selected), then
    /// the pseudoXOF reference of each width among them when it has been measured.
    pub fn curves(&self) -> Vec<CurveSeries> {
        let mut labels: Vec<String> = self
            .jobs
            .iter()
            .filter(|j| matches!(j.state, JobState::Done(_)))
            .map(|j| j.key.label.clone())
            .filter(|l| self.selected.is_empty() || self.selected.contains(l))
            .collect();
        labels.sort_by_key(|l| self.label_rank(l));
        labels.dedup();
        let mut out: Vec<CurveSeries> = labels
            .iter()
            .map(|l| CurveSeries {
                label: l.clone(),
                points: self.cycles_per_byte(l),
                reference: false,
                earlier: None,
                outliers: false,
            })
            .collect();
        let earlier = self.earlier_curves(&out);
        out.extend(earlier);
        for l in &labels {
            out.extend(self.sweep_series(l));
        }
        let mut widths: Vec<u32> = labels
            .iter()
            .filter(|l| !l.starts_with("pseudoXOF-"))
            .filter_map(|l| self.instance(l).map(|i| i.digest_bits))
            .collect();
        widths.sort_unstable();
        widths.dedup();
        for bits in widths {
            let label = format!("pseudoXOF-{bits}");
            let points = self.cycles_per_byte(&label);
            if !points.is_empty() {
                out.push(CurveSeries {
                    label,
                    points,
                    reference: true,
                    earlier: None,
                    outliers: false,
                });
            }
        }
        out
    }

    /// The fit of `label`'s sweep at its lengths (cycles/byte), and its outliers as measured.
    fn sweep_series(&self, label: &str) -> Vec<CurveSeries> {
        let Some(s) = self.sweeps.iter().find(|s| s.label == label) else {
            return vec![];
        };
        let Some(m) = &s.model else {
            return vec![];
        };
        let per_byte = |n: u64, cycles: f64| (n, cycles / n.max(1) as f64);
        let fit = CurveSeries {
            label: format!("{label} fit ⌈(n+{})/{}⌉", m.padding_bytes, m.block_bytes),
            points: s
                .points
                .iter()
                .map(|p| per_byte(p.input_bytes, m.predict(p.input_bytes)))
                .collect(),
            reference: true,
            earlier: None,
            outliers: false,
        };
        let marks = CurveSeries {
            label: format!("{label} outliers"),
            points: s
                .points
                .iter()
                .filter(|p| m.outliers.contains(&p.input_bytes))
                .map(|p| per_byte(p.input_bytes, p.cycles))
                .collect(),
            reference: false,
            earlier: None,
            outliers: true,
        };
        std::iter::once(fit)
            .chain((!marks.points.is_empty()).then_some(marks))
            .collect()
    }

    /// Lengths with a point in some curve, ascending (the readout steps through them).
    pub fn curve_lengths(&self) -> Vec<u64> {
        let mut lens: Vec<u64> = self
            .curves()
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .collect();
        lens.sort_unstable();
        lens.dedup();
        lens
    }

    /// Whether the visible curves differ by more than 10× (then a log y axis shows them all).
    pub fn curve_wants_log(&self) -> bool {
        let ys: Vec<f64> = self
            .curves()
            .iter()
            .filter(|s| !self.curve_hidden.contains(&s.label))
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .filter(|y| *y > 0.0)
            .collect();
        let lo = ys.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ys.iter().copied().fold(0.0f64, f64::max);
        lo.is_finite() && hi > 10.0 * lo
    }

    /// Whether the curve draws a log y axis now.
    pub fn curve_is_log(&self) -> bool {
        self.curve_log.unwrap_or_else(|| self.curve_wants_log())
    }
}
