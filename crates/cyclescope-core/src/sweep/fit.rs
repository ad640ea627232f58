//! The cost model of a length sweep: T(n) = a + b·⌈(n + p)/B⌉ (+ c·n where it helps), with the
//! block size B and the padding threshold p searched over a grid, the coefficients by
//! least squares on relative residuals (a long message's cycles are as noisy in proportion as
//! a short one's), robust to outliers (each candidate is judged on its best 80 % of points;
//! the chosen one flags points beyond 3.5 robust standard deviations and is refitted without
//! them), and 95 % confidence intervals from the coefficients' covariance and Student's t.
//! Pure arithmetic on (length, cycles) points; it never measures.

use serde::{Deserialize, Serialize};

mod least_squares;

use least_squares::{
    Coef, at_zero_fixed, coefficients, design, median, residuals, solve, squared_residuals,
    trimmed_loss,
};

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
