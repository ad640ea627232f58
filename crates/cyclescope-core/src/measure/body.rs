//! The body of a per-call distribution, cut into equal-width bins for drawing: from the 0.5 %
//! to the 99.5 % quantile (tightened to the outlier fence), so one far sample cannot squeeze
//! the bulk into a single column; what lies outside is counted at either edge, not dropped.
//! Shared by the TUI's histogram panel and the report's SVG figures. Pure.

use hdrhistogram::Histogram;

use super::stats::outlier_fence;

/// Quantiles that bound the drawn body.
pub const LOW_QUANTILE: f64 = 0.005;
pub const HIGH_QUANTILE: f64 = 0.995;

/// A histogram's body in `counts.len()` equal-width bins over `lo..=hi`.
#[derive(Debug, Clone, PartialEq)]
pub struct Bins {
    pub lo: u64,
    pub hi: u64,
    /// Samples per column; a histogram bucket wider than a column is spread evenly over the
    /// columns it covers (hdrhistogram keeps 3 significant digits, so at 7000 ticks a bucket
    /// is 4 ticks wide), which keeps narrow distributions from drawing as a comb.
    pub counts: Vec<f64>,
    /// Samples below `lo` (counted at the left edge).
    pub below: u64,
    /// Samples above `hi` (counted at the right edge).
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
        // Multiplied before dividing: a value on a column's edge lands in that column exactly
        // (338 / 598 × 23 reads 12.999…, and would leave column 13 empty).
        Some((((v - self.lo as f64) * n as f64 / span) as usize).min(n - 1))
    }

    /// The value at the left edge of column `i`.
    pub fn edge(&self, i: usize) -> f64 {
        let span = (self.hi - self.lo + 1) as f64;
        self.lo as f64 + span * i as f64 / self.counts.len().max(1) as f64
    }
}

/// `n` bins over the body: the 0.5 % quantile up to the 99.5 % quantile or the outlier fence,
/// whichever is lower, at least one tick per bin.
pub fn bins(h: &Histogram<u64>, n: usize) -> Option<Bins> {
    if h.is_empty() || n == 0 {
        return None;
    }
    let lo = h.lowest_equivalent(h.value_at_quantile(LOW_QUANTILE));
    let fence = outlier_fence(h.value_at_quantile(0.5), h.value_at_quantile(0.9));
    let hi = h
        .value_at_quantile(HIGH_QUANTILE)
        .min(fence)
        .max(lo + n as u64 - 1);
    Some(fill(h, lo, hi, n))
}

/// The counter's resolution as the samples show it: the smallest distance between two
/// neighbouring distinct recorded values (a TSC that steps by 26 ticks records only multiples
/// of 26). 1 when fewer than two distinct values were recorded.
pub fn step(h: &Histogram<u64>) -> u64 {
    let mut last: Option<u64> = None;
    let mut least = u64::MAX;
    for v in h.iter_recorded() {
        let value = h.lowest_equivalent(v.value_iterated_to());
        if let Some(prev) = last {
            least = least.min(value - prev);
        }
        last = Some(value);
    }
    if least == u64::MAX { 1 } else { least.max(1) }
}

/// Like [`bins`], at most `n` bins, each a whole number of counter steps wide (see [`step`]):
/// a bin finer than the counter's resolution would leave every other column empty (a comb).
pub fn bins_at_resolution(h: &Histogram<u64>, n: usize) -> Option<Bins> {
    let first = bins(h, n)?;
    let step = step(h);
    let span = first.hi - first.lo + 1;
    let width = span.div_ceil(n as u64 * step).max(1) * step;
    let columns = span.div_ceil(width).max(1);
    Some(fill(
        h,
        first.lo,
        first.lo + columns * width - 1,
        columns as usize,
    ))
}

/// Counts `h` into `n` equal bins over `lo..=hi`.
fn fill(h: &Histogram<u64>, lo: u64, hi: u64, n: usize) -> Bins {
    let mut b = Bins {
        lo,
        hi,
        counts: vec![0.0; n],
        below: 0,
        above: 0,
    };
    for v in h.iter_recorded() {
        let (value, count) = (v.value_iterated_to(), v.count_at_value());
        if value > hi {
            b.above += count;
            continue;
        }
        if value < lo {
            b.below += count;
            continue;
        }
        let from = b
            .column(h.lowest_equivalent(value).max(lo) as f64)
            .unwrap_or(0);
        let to = b.column(value as f64).unwrap_or(0).max(from);
        let share = count as f64 / (to - from + 1) as f64;
        for c in &mut b.counts[from..=to] {
            *c += share;
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::stats::new_histogram;

    fn flat(from: u64, to: u64) -> Histogram<u64> {
        let mut h = new_histogram();
        for v in from..=to {
            h.record(v).unwrap();
        }
        h
    }

    #[test]
    fn the_body_runs_from_p0_5_to_p99_5_and_the_edges_are_counted() {
        let mut h = flat(1000, 1999);
        // One far sample at each side, as an interrupt or a cold cache line would give.
        h.record(3).unwrap();
        h.record_n(5_000_000, 3).unwrap();
        let b = bins(&h, 10).unwrap();
        assert!((1003..=1006).contains(&b.lo), "{}", b.lo);
        assert!((1990..=1999).contains(&b.hi), "{}", b.hi);
        assert!(b.below >= 1 && b.below <= 6, "{}", b.below);
        assert!(b.above >= 3, "{}", b.above);
        let drawn = b.counts.iter().sum::<f64>().round() as u64;
        assert_eq!(drawn + b.below + b.above, h.len(), "nothing is lost");
        // The bulk is spread over every column instead of one.
        assert!(
            b.counts.iter().all(|&c| (80.0..=120.0).contains(&c)),
            "{:?}",
            b.counts
        );
        assert_eq!(b.column(b.lo as f64), Some(0));
        assert_eq!(b.column(b.hi as f64), Some(9));
        assert_eq!(b.column(10.0), None);
        assert!(bins(&new_histogram(), 10).is_none());
    }

    #[test]
    fn bins_are_never_finer_than_the_counters_step() {
        // A TSC stepping by 26 ticks: only multiples of 26 are ever recorded.
        let mut h = new_histogram();
        for k in 0..40u64 {
            h.record_n(1300 + 26 * k, 10 + k % 7).unwrap();
        }
        assert_eq!(step(&h), 26);
        let b = bins_at_resolution(&h, 60).unwrap();
        let width = (b.hi - b.lo + 1) / b.counts.len() as u64;
        assert!(width >= 26 && width.is_multiple_of(26), "width {width}");
        assert!(b.counts.len() <= 60);
        // No comb: every column inside the body holds samples.
        assert!(b.counts.iter().all(|&c| c > 0.0), "{:?}", b.counts);
        let drawn = b.counts.iter().sum::<f64>().round() as u64;
        assert_eq!(drawn + b.below + b.above, h.len(), "nothing is lost");
        assert_eq!(step(&flat(500, 500)), 1);
    }

    #[test]
    fn a_value_on_a_columns_edge_lands_in_that_column() {
        // 1300..=1872 in steps of 26: 23 columns of one step each, one value in every one
        // (1638 is 13 steps up; dividing before multiplying put it in column 12).
        let mut h = new_histogram();
        for k in 50..73u64 {
            h.record_n(26 * k, 100).unwrap();
        }
        let b = bins_at_resolution(&h, 60).unwrap();
        assert_eq!(b.counts.len(), 23, "{b:?}");
        assert!(b.counts.iter().all(|&c| c == 100.0), "{:?}", b.counts);
    }

    #[test]
    fn a_narrow_histogram_still_gets_one_tick_per_bin() {
        let b = bins(&flat(500, 500), 40).unwrap();
        assert_eq!((b.lo, b.hi), (500, 539));
        assert_eq!(b.counts[0], 1.0);
        assert_eq!(b.edge(1), 501.0);
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
}
