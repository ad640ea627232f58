//! The least-squares arithmetic under the sweep's cost model: the relative-residual design of
//! a (B, p) candidate, its normal equations, the trimmed loss a candidate is judged by, and the
//! coefficients with their covariance and 95 % intervals.

use nalgebra::{DMatrix, DVector};

use super::{Interval, KEEP_SHARE, MIN_POINTS, SweepPoint};
use crate::measure::stats::t95;

/// The design of (B, p): columns 1, ⌈(n+p)/B⌉ and optionally n, each row divided by the
/// point's cycles so that least squares weighs relative residuals (the target is then 1).
pub(super) fn design(
    points: &[&SweepPoint],
    b: u64,
    p: u64,
    per_byte: bool,
) -> (DMatrix<f64>, DVector<f64>) {
    let k = if per_byte { 3 } else { 2 };
    let x = DMatrix::from_fn(points.len(), k, |i, j| {
        let pt = points[i];
        let v = match j {
            0 => 1.0,
            1 => (pt.input_bytes + p).div_ceil(b) as f64,
            _ => pt.input_bytes as f64,
        };
        v / pt.cycles
    });
    (x, DVector::from_element(points.len(), 1.0))
}

/// Least squares through the normal equations; None when they are singular (collinear
/// columns, e.g. a block count that grows exactly like n on these lengths).
pub(super) fn solve(x: &DMatrix<f64>, y: &DVector<f64>) -> Option<(DVector<f64>, DMatrix<f64>)> {
    let xtx = x.transpose() * x;
    let inv = xtx.clone().cholesky()?.inverse();
    let beta = &inv * (x.transpose() * y);
    beta.iter().all(|v| v.is_finite()).then_some((beta, inv))
}

pub(super) fn residuals(x: &DMatrix<f64>, y: &DVector<f64>, beta: &DVector<f64>) -> Vec<f64> {
    (y - x * beta).iter().copied().collect()
}

/// Coefficients (a, b, c) of a + b·⌈(n+p)/B⌉ + c·n.
pub(super) type Coef = [f64; 3];

/// Weighted least squares of the model with columns 1, ⌈(n+p)/B⌉ and n on `rows` (indices
/// into `points`), in closed form (Cramer's rule on the normal equations): the grid search
/// fits thousands of candidates, and this is its inner loop. The per-byte column is kept in
/// the search because a real per-byte cost (copying the tail into a padding buffer) would
/// otherwise be imitated by a wrong threshold. Without it (`per_byte` false, or collinear
/// columns, as with 8-byte blocks on 8-byte lengths) c is 0.
pub(super) fn fit_rows(
    points: &[SweepPoint],
    rows: &[usize],
    b: u64,
    p: u64,
    per_byte: bool,
) -> Option<Coef> {
    let mut m = [[0.0f64; 3]; 3];
    let mut v = [0.0f64; 3];
    for &i in rows {
        let pt = &points[i];
        let x = [
            1.0 / pt.cycles,
            (pt.input_bytes + p).div_ceil(b) as f64 / pt.cycles,
            pt.input_bytes as f64 / pt.cycles,
        ];
        for j in 0..3 {
            v[j] += x[j];
            for k in 0..3 {
                m[j][k] += x[j] * x[k];
            }
        }
    }
    if per_byte {
        let det = det3(&m);
        let scale = m[0][0] * m[1][1] * m[2][2];
        if det.abs() > 1e-10 * scale {
            let col = |j: usize| {
                let mut mj = m;
                for (row, vi) in mj.iter_mut().zip(v) {
                    row[j] = vi;
                }
                det3(&mj) / det
            };
            return Some([col(0), col(1), col(2)]);
        }
    }
    let det = m[0][0] * m[1][1] - m[0][1] * m[0][1];
    if det.abs() <= 1e-12 * m[0][0] * m[1][1] {
        return None;
    }
    Some([
        (m[1][1] * v[0] - m[0][1] * v[1]) / det,
        (m[0][0] * v[1] - m[0][1] * v[0]) / det,
        0.0,
    ])
}

pub(super) fn det3(m: &[[f64; 3]; 3]) -> f64 {
    m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
        - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
}

/// Squared relative residuals of every point under `c`.
pub(super) fn squared_residuals(points: &[SweepPoint], b: u64, p: u64, c: Coef) -> Vec<f64> {
    points
        .iter()
        .map(|pt| {
            let n = pt.input_bytes;
            let t = c[0] + c[1] * (n + p).div_ceil(b) as f64 + c[2] * n as f64;
            let r = 1.0 - t / pt.cycles;
            r * r
        })
        .collect()
}

/// Indices of the `keep` smallest values, and the sum of those values.
pub(super) fn smallest(values: &[f64], keep: usize) -> (Vec<usize>, f64) {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.select_nth_unstable_by(keep - 1, |&i, &j| values[i].total_cmp(&values[j]));
    order.truncate(keep);
    let sum = order.iter().map(|&i| values[i]).sum();
    (order, sum)
}

/// A candidate's robust loss: fit all points, refit on the best `KEEP_SHARE` of them, and sum
/// the squared relative residuals of the best `KEEP_SHARE` under that refit; with the refit.
pub(super) fn trimmed_loss(points: &[SweepPoint], b: u64, p: u64) -> Option<(f64, Coef)> {
    let n = points.len();
    let keep = ((n as f64 * KEEP_SHARE).ceil() as usize).clamp(MIN_POINTS.min(n), n);
    let all: Vec<usize> = (0..n).collect();
    let first = fit_rows(points, &all, b, p, true)?;
    let (best, _) = smallest(&squared_residuals(points, b, p, first), keep);
    let refit = fit_rows(points, &best, b, p, true)?;
    Some((
        smallest(&squared_residuals(points, b, p, refit), keep).1,
        refit,
    ))
}

pub(super) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The coefficients with a held at 0: the design without its constant column, a's interval
/// [0, max(0, the unconstrained upper end)], its row and column of the covariance zero.
pub(super) fn at_zero_fixed(
    points: &[&SweepPoint],
    b: u64,
    p: u64,
    per_byte: bool,
    free_high: f64,
) -> Option<Coefficients> {
    let (x, y) = design(points, b, p, per_byte);
    let x = x.remove_column(0);
    let k = x.ncols();
    if points.len() <= k {
        return None;
    }
    let (beta, inv) = solve(&x, &y)?;
    let r = residuals(&x, &y, &beta);
    let df = (points.len() - k) as u64;
    let s2 = r.iter().map(|v| v * v).sum::<f64>() / df as f64;
    let t = t95(df);
    let mut cov = DMatrix::zeros(k + 1, k + 1);
    for i in 0..k {
        for j in 0..k {
            cov[(i + 1, j + 1)] = inv[(i, j)] * s2;
        }
    }
    let mut intervals = vec![Interval {
        value: 0.0,
        low: 0.0,
        high: free_high.max(0.0),
    }];
    intervals
        .extend((0..k).map(|j| Interval::around(beta[j], cov[(j + 1, j + 1)].max(0.0).sqrt(), t)));
    let mut all_beta = vec![0.0];
    all_beta.extend(beta.iter().copied());
    Some(Coefficients {
        beta: all_beta,
        cov,
        intervals,
        sd: s2.sqrt(),
        t,
    })
}

pub(super) struct Coefficients {
    pub(super) beta: Vec<f64>,
    pub(super) cov: DMatrix<f64>,
    pub(super) intervals: Vec<Interval>,
    pub(super) sd: f64,
    pub(super) t: f64,
}

pub(super) fn coefficients(
    points: &[&SweepPoint],
    b: u64,
    p: u64,
    per_byte: bool,
) -> Option<Coefficients> {
    let (x, y) = design(points, b, p, per_byte);
    let k = x.ncols();
    if points.len() <= k {
        return None;
    }
    let (beta, inv) = solve(&x, &y)?;
    let r = residuals(&x, &y, &beta);
    let df = (points.len() - k) as u64;
    let s2 = r.iter().map(|v| v * v).sum::<f64>() / df as f64;
    let cov = inv * s2;
    let t = t95(df);
    let intervals = (0..k)
        .map(|j| Interval::around(beta[j], cov[(j, j)].max(0.0).sqrt(), t))
        .collect();
    Some(Coefficients {
        beta: beta.iter().copied().collect(),
        cov,
        intervals,
        sd: s2.sqrt(),
        t,
    })
}
