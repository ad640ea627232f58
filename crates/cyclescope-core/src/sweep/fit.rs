//! The cost model of a length sweep: T(n) = a + b·⌈(n + p)/B⌉ (+ c·n where it helps), with the
//! block size B and the padding threshold p searched over a grid, the coefficients by
//! least squares on relative residuals (a long message's cycles are as noisy in proportion as
//! a short one's), robust to outliers (each candidate is judged on its best 80 % of points;
//! the chosen one flags points beyond 3.5 robust standard deviations and is refitted without
//! them), and 95 % confidence intervals from the coefficients' covariance and Student's t.
//! Pure arithmetic on (length, cycles) points; it never measures.

use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};

use crate::measure::stats::t95;

/// One measured length: its bytes and cycles per call.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    pub input_bytes: u64,
    pub cycles: f64,
}

/// A coefficient and its 95 % confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

impl Interval {
    fn around(value: f64, se: f64, t: f64) -> Self {
        Self {
            value,
            low: value - t * se,
            high: value + t * se,
        }
    }

    /// Half the interval's width.
    pub fn half_width(&self) -> f64 {
        (self.high - self.low) / 2.0
    }
}

/// The fitted model of one instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostModel {
    /// B: bytes per block.
    pub block_bytes: u64,
    /// p: bytes the padding adds before the block count is taken.
    pub padding_bytes: u64,
    /// Other thresholds that fit the points exactly as well (the lengths cannot tell them
    /// apart); empty when p is determined.
    pub padding_alternatives: Vec<u64>,
    /// a: cycles per call that do not depend on the length.
    pub fixed_cycles: Interval,
    /// b: cycles per block.
    pub cycles_per_block: Interval,
    /// c: cycles per byte beyond the blocks, when the points show one.
    pub cycles_per_extra_byte: Option<Interval>,
    /// The long-message slope b/B + c.
    pub cycles_per_byte: Interval,
    /// Points fitted (outliers excluded) and the lengths flagged as outliers.
    pub points_fitted: usize,
    pub outliers: Vec<u64>,
    /// Standard deviation of the relative residuals of the fitted points.
    pub residual_relative_sd: f64,
    /// The next-best block size and how much worse its robust loss is (a ratio ≥ 1).
    pub runner_up: Option<RunnerUp>,
    /// Other block sizes that fit within [`CLOSE_LOSS_RATIO`] of the best: the lengths cannot
    /// decide between them, so B (and every coefficient that depends on it) is undetermined.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub close_blocks: Vec<RunnerUp>,
    /// True when the unconstrained fit put the fixed cost below zero: a is then held at its
    /// bound 0 (a call cannot cost less than nothing) and b, c are fitted under it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fixed_at_zero: bool,
    /// Where B and p come from: `fit` (searched over the grid), `instructions` (the jumps of an
    /// exact instruction count, byte by byte), or `given` (another sweep's, `--blocks-from`).
    #[serde(default = "searched")]
    pub structure: String,
}

fn searched() -> String {
    "fit".to_string()
}

impl CostModel {
    /// Whether B is determined by the data (or given): no other block size fits nearly as well.
    pub fn block_determined(&self) -> bool {
        self.close_blocks.is_empty()
    }
}

/// A block size whose robust loss is within this factor of the best one's is as good an
/// explanation of timed points: the fit then answers "undetermined".
pub const CLOSE_LOSS_RATIO: f64 = 1.5;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RunnerUp {
    pub block_bytes: u64,
    pub padding_bytes: u64,
    pub loss_ratio: f64,
}

impl CostModel {
    /// Blocks of an `n`-byte message under the model.
    pub fn blocks(&self, n: u64) -> u64 {
        (n + self.padding_bytes).div_ceil(self.block_bytes)
    }

    /// The model's cycles at `n` bytes.
    pub fn predict(&self, n: u64) -> f64 {
        self.fixed_cycles.value
            + self.cycles_per_block.value * self.blocks(n) as f64
            + self
                .cycles_per_extra_byte
                .map_or(0.0, |c| c.value * n as f64)
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    #[error("a cost model needs at least {need} measured lengths, {have} were measured")]
    TooFewPoints { need: usize, have: usize },
    #[error("the measured cycles are not all positive and finite (length {0} B)")]
    BadPoint(u64),
    #[error("no block size fits these lengths (the longest is {0} B)")]
    NoCandidate(u64),
}

/// Fewest points for a fit: three coefficients and enough residual degrees of freedom.
pub(crate) const MIN_POINTS: usize = 8;
/// Share of points each candidate is judged on (the rest may be outliers).
const KEEP_SHARE: f64 = 0.8;
/// Outlier fence, in robust standard deviations of the relative residuals.
const OUTLIER_SDS: f64 = 3.5;

/// Block sizes tried: multiples of 8 up to 256 (hash and sponge rates), and larger powers of
/// two, never more than half the longest length (a block must repeat to be seen).
pub(crate) fn block_candidates(longest: u64) -> Vec<u64> {
    (1..=32)
        .map(|k| 8 * k)
        .chain([512, 1024, 2048])
        .filter(|&b| 2 * b <= longest)
        .collect()
}

/// Fits the model to `points` (any order, one per length).
pub fn fit(points: &[SweepPoint]) -> Result<CostModel, FitError> {
    if points.len() < MIN_POINTS {
        return Err(FitError::TooFewPoints {
            need: MIN_POINTS,
            have: points.len(),
        });
    }
    if let Some(p) = points
        .iter()
        .find(|p| !(p.cycles.is_finite() && p.cycles > 0.0))
    {
        return Err(FitError::BadPoint(p.input_bytes));
    }
    let longest = points.iter().map(|p| p.input_bytes).max().unwrap_or(0);
    // Stage 1: every candidate judged on its best points (outliers cannot steer it).
    let mut trimmed: Vec<(f64, u64, u64, Coef)> = Vec::new();
    for b in block_candidates(longest) {
        for p in 0..b {
            if let Some((loss, coef)) = trimmed_loss(points, b, p) {
                trimmed.push((loss, b, p, coef));
            }
        }
    }
    let first = trimmed
        .iter()
        .min_by(|x, y| x.0.total_cmp(&y.0))
        .ok_or(FitError::NoCandidate(longest))?;
    // Stage 2: every point counts again, each capped at the outlier fence of the stage-1
    // winner's noise — a threshold that misplaces a few boundary lengths must pay for them,
    // which trimming alone would forgive.
    let (_, b1, p1, c1) = *first;
    let noise = 1.4826
        * median(
            squared_residuals(points, b1, p1, c1)
                .iter()
                .map(|r| r.sqrt())
                .collect(),
        );
    let cap = (OUTLIER_SDS * noise.max(1e-9)).powi(2);
    let mut scored: Vec<(f64, u64, u64)> = trimmed
        .iter()
        .map(|&(_, b, p, coef)| {
            let capped = squared_residuals(points, b, p, coef)
                .into_iter()
                .map(|r| r.min(cap))
                .sum::<f64>();
            (capped, b, p)
        })
        .collect();
    scored.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
    let &(best_loss, block, padding) = scored.first().ok_or(FitError::NoCandidate(longest))?;
    // Thresholds the lengths cannot tell apart give the very same block counts.
    let same = |p: u64| {
        points.iter().all(|pt| {
            (pt.input_bytes + p).div_ceil(block) == (pt.input_bytes + padding).div_ceil(block)
        })
    };
    let padding_alternatives = (0..block).filter(|&p| p != padding && same(p)).collect();
    let runner_up = scored
        .iter()
        .find(|s| s.1 != block)
        .map(|&(loss, b, p)| RunnerUp {
            block_bytes: b,
            padding_bytes: p,
            loss_ratio: if best_loss > 0.0 {
                loss / best_loss
            } else {
                f64::INFINITY
            },
        });
    // Every other block size within the close ratio, its best threshold each.
    let mut close_blocks: Vec<RunnerUp> = Vec::new();
    for &(loss, b, p) in &scored {
        let ratio = if best_loss > 0.0 {
            loss / best_loss
        } else if loss > 0.0 {
            f64::INFINITY
        } else {
            1.0
        };
        if b != block
            && ratio <= CLOSE_LOSS_RATIO
            && !close_blocks.iter().any(|c| c.block_bytes == b)
        {
            close_blocks.push(RunnerUp {
                block_bytes: b,
                padding_bytes: p,
                loss_ratio: ratio,
            });
        }
    }
    let mut model = final_fit(points, block, padding)?;
    model.padding_alternatives = padding_alternatives;
    model.runner_up = runner_up;
    model.close_blocks = close_blocks;
    Ok(model)
}

/// The model with B and p given (by an instruction sweep, or as known): the coefficients only.
pub fn fit_given(
    points: &[SweepPoint],
    b: u64,
    p: u64,
    structure: &str,
) -> Result<CostModel, FitError> {
    if points.len() < MIN_POINTS {
        return Err(FitError::TooFewPoints {
            need: MIN_POINTS,
            have: points.len(),
        });
    }
    if let Some(pt) = points
        .iter()
        .find(|pt| !(pt.cycles.is_finite() && pt.cycles > 0.0))
    {
        return Err(FitError::BadPoint(pt.input_bytes));
    }
    let mut model = final_fit(points, b, p)?;
    model.structure = structure.to_string();
    Ok(model)
}

/// The design of (B, p): columns 1, ⌈(n+p)/B⌉ and optionally n, each row divided by the
/// point's cycles so that least squares weighs relative residuals (the target is then 1).
fn design(points: &[&SweepPoint], b: u64, p: u64, per_byte: bool) -> (DMatrix<f64>, DVector<f64>) {
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
fn solve(x: &DMatrix<f64>, y: &DVector<f64>) -> Option<(DVector<f64>, DMatrix<f64>)> {
    let xtx = x.transpose() * x;
    let inv = xtx.clone().cholesky()?.inverse();
    let beta = &inv * (x.transpose() * y);
    beta.iter().all(|v| v.is_finite()).then_some((beta, inv))
}

fn residuals(x: &DMatrix<f64>, y: &DVector<f64>, beta: &DVector<f64>) -> Vec<f64> {
    (y - x * beta).iter().copied().collect()
}

/// Coefficients (a, b, c) of a + b·⌈(n+p)/B⌉ + c·n.
type Coef = [f64; 3];

/// Weighted least squares of the model with columns 1, ⌈(n+p)/B⌉ and n on `rows` (indices
/// into `points`), in closed form (Cramer's rule on the normal equations): the grid search
/// fits thousands of candidates, and this is its inner loop. The per-byte column is kept in
/// the search because a real per-byte cost (copying the tail into a padding buffer) would
/// otherwise be imitated by a wrong threshold. Without it (`per_byte` false, or collinear
/// columns, as with 8-byte blocks on 8-byte lengths) c is 0.
fn fit_rows(points: &[SweepPoint], rows: &[usize], b: u64, p: u64, per_byte: bool) -> Option<Coef> {
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

fn det3(m: &[[f64; 3]; 3]) -> f64 {
    m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
        - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
}

/// Squared relative residuals of every point under `c`.
fn squared_residuals(points: &[SweepPoint], b: u64, p: u64, c: Coef) -> Vec<f64> {
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
fn smallest(values: &[f64], keep: usize) -> (Vec<usize>, f64) {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.select_nth_unstable_by(keep - 1, |&i, &j| values[i].total_cmp(&values[j]));
    order.truncate(keep);
    let sum = order.iter().map(|&i| values[i]).sum();
    (order, sum)
}

/// A candidate's robust loss: fit all points, refit on the best `KEEP_SHARE` of them, and sum
/// the squared relative residuals of the best `KEEP_SHARE` under that refit; with the refit.
fn trimmed_loss(points: &[SweepPoint], b: u64, p: u64) -> Option<(f64, Coef)> {
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

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The chosen (B, p): flag outliers by the median absolute residual, refit on the rest, keep
/// the per-byte term only when its interval excludes zero, and derive the intervals.
pub(crate) fn final_fit(points: &[SweepPoint], b: u64, p: u64) -> Result<CostModel, FitError> {
    let all: Vec<&SweepPoint> = points.iter().collect();
    let (x, y) = design(&all, b, p, false);
    let (beta, _) = solve(&x, &y).ok_or(FitError::NoCandidate(b))?;
    let r = residuals(&x, &y, &beta);
    let scale = 1.4826 * median(r.iter().map(|v| v.abs()).collect());
    let fence = OUTLIER_SDS * scale.max(1e-6);
    let mut outliers = Vec::new();
    let mut inliers = Vec::new();
    for (pt, res) in points.iter().zip(&r) {
        if res.abs() > fence {
            outliers.push(pt.input_bytes);
        } else {
            inliers.push(pt);
        }
    }
    outliers.sort_unstable();
    let with_c = coefficients(&inliers, b, p, true).filter(|f| {
        let c = f.intervals[2];
        c.low > 0.0 || c.high < 0.0
    });
    let f = match with_c {
        Some(f) => f,
        None => coefficients(&inliers, b, p, false).ok_or(FitError::NoCandidate(b))?,
    };
    // A negative fixed cost is no cost: hold a at 0 and fit the rest under it.
    let fixed_at_zero = f.beta[0] < 0.0;
    let f = if fixed_at_zero {
        let per_byte = f.beta.len() == 3;
        at_zero_fixed(&inliers, b, p, per_byte, f.intervals[0].high)
            .ok_or(FitError::NoCandidate(b))?
    } else {
        f
    };
    let per_byte = f.intervals.get(2).copied();
    // Var(b/B + c) = Var(b)/B² + Var(c) + 2·Cov(b, c)/B.
    let bf = b as f64;
    let slope = f.beta[1] / bf + f.beta.get(2).copied().unwrap_or(0.0);
    let mut var = f.cov[(1, 1)] / (bf * bf);
    if per_byte.is_some() {
        var += f.cov[(2, 2)] + 2.0 * f.cov[(1, 2)] / bf;
    }
    Ok(CostModel {
        block_bytes: b,
        padding_bytes: p,
        padding_alternatives: Vec::new(),
        fixed_cycles: f.intervals[0],
        cycles_per_block: f.intervals[1],
        cycles_per_extra_byte: per_byte,
        cycles_per_byte: Interval::around(slope, var.max(0.0).sqrt(), f.t),
        points_fitted: inliers.len(),
        outliers,
        residual_relative_sd: f.sd,
        runner_up: None,
        close_blocks: Vec::new(),
        fixed_at_zero,
        structure: searched(),
    })
}

/// The coefficients with a held at 0: the design without its constant column, a's interval
/// [0, max(0, the unconstrained upper end)], its row and column of the covariance zero.
fn at_zero_fixed(
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

struct Coefficients {
    beta: Vec<f64>,
    cov: DMatrix<f64>,
    intervals: Vec<Interval>,
    sd: f64,
    t: f64,
}

fn coefficients(points: &[&SweepPoint], b: u64, p: u64, per_byte: bool) -> Option<Coefficients> {
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
