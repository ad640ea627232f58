//! The cost model on synthetic sweeps whose structure is known: the block size and threshold
//! must be found, the intervals must cover the true coefficients, outliers must be flagged and
//! must not move the fit, and the byte-by-byte refinement must ask for exactly the lengths that
//! tell the thresholds apart. Deterministic noise (a fixed-seed generator), no timing.

use std::collections::BTreeSet;

use super::fit::{SweepPoint, block_candidates, fit};
use super::{SweepLengths, refinement};

/// A small deterministic generator (xorshift) for reproducible noise.
struct Noise(u64);

impl Noise {
    /// Roughly normal, mean 0, sd 1 (sum of 12 uniforms − 6).
    fn next(&mut self) -> f64 {
        let mut s = 0.0;
        for _ in 0..12 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            s += (self.0 >> 11) as f64 / (1u64 << 53) as f64;
        }
        s - 6.0
    }
}

/// T(n) = a + b·⌈(n+p)/B⌉ + c·n with relative noise `rel` at `lengths`.
fn sweep(
    lengths: &[u64],
    (a, b, c): (f64, f64, f64),
    (block, pad): (u64, u64),
    rel: f64,
) -> Vec<SweepPoint> {
    let mut noise = Noise(0x9e37_79b9_7f4a_7c15);
    lengths
        .iter()
        .map(|&n| {
            let t = a + b * (n + pad).div_ceil(block) as f64 + c * n as f64;
            SweepPoint {
                input_bytes: n,
                cycles: t * (1.0 + rel * noise.next()),
            }
        })
        .collect()
}

fn dense() -> Vec<u64> {
    SweepLengths::default().coarse()
}

#[test]
fn sm3_structure_is_found_and_the_intervals_cover_the_truth() {
    let mut lengths = dense();
    lengths.extend(49..56);
    let pts = sweep(&lengths, (600.0, 1100.0, 0.0), (64, 9), 0.01);
    let m = fit(&pts).unwrap();
    assert_eq!((m.block_bytes, m.padding_bytes), (64, 9));
    assert!(
        m.padding_alternatives.is_empty(),
        "{:?}",
        m.padding_alternatives
    );
    for (iv, truth) in [(m.fixed_cycles, 600.0), (m.cycles_per_block, 1100.0)] {
        assert!(iv.low <= truth && truth <= iv.high, "{iv:?} vs {truth}");
    }
    let slope = m.cycles_per_byte;
    assert!(
        slope.low <= 1100.0 / 64.0 && 1100.0 / 64.0 <= slope.high,
        "{slope:?}"
    );
    assert!(
        m.cycles_per_extra_byte.is_none(),
        "no per-byte cost in the data"
    );
    assert!(m.runner_up.unwrap().loss_ratio > 2.0);
}

#[test]
fn other_structures_and_a_per_byte_term_are_found() {
    let mut lengths = dense();
    lengths.extend(1..64);
    for (block, pad, c) in [(32, 5, 0.0), (136, 1, 0.0), (128, 17, 2.0), (8, 0, 0.0)] {
        let pts = sweep(&lengths, (3000.0, 900.0, c), (block, pad), 0.005);
        let m = fit(&pts).unwrap();
        assert_eq!(
            (m.block_bytes, m.padding_bytes),
            (block, pad),
            "B={block} p={pad}"
        );
        assert_eq!(
            m.cycles_per_extra_byte.is_some(),
            c > 0.0,
            "B={block}: {m:?}"
        );
        let truth = 900.0 / block as f64 + c;
        assert!(
            m.cycles_per_byte.low <= truth && truth <= m.cycles_per_byte.high,
            "B={block}: {:?} vs {truth}",
            m.cycles_per_byte
        );
    }
}

#[test]
fn outliers_are_flagged_and_do_not_move_the_fit() {
    let mut lengths = dense();
    lengths.extend(49..56);
    let mut pts = sweep(&lengths, (600.0, 1100.0, 0.0), (64, 9), 0.005);
    // A preempted point or three: several times their true cost.
    for n in [104, 512, 1000] {
        let p = pts.iter_mut().find(|p| p.input_bytes == n).unwrap();
        p.cycles *= 3.0;
    }
    let m = fit(&pts).unwrap();
    assert_eq!((m.block_bytes, m.padding_bytes), (64, 9));
    assert_eq!(m.outliers, vec![104, 512, 1000]);
    assert_eq!(m.points_fitted, pts.len() - 3);
    assert!(
        (m.cycles_per_block.value - 1100.0).abs() < 0.02 * 1100.0,
        "{m:?}"
    );
}

#[test]
fn an_eight_byte_grid_leaves_the_threshold_open_and_refinement_closes_it() {
    let pts = sweep(&dense(), (600.0, 1100.0, 0.0), (64, 9), 0.002);
    let m = fit(&pts).unwrap();
    assert_eq!(m.block_bytes, 64);
    // On multiples of 8, every p in 9..=16 gives the same block counts.
    let mut all: Vec<u64> = m.padding_alternatives.clone();
    all.push(m.padding_bytes);
    all.sort_unstable();
    assert_eq!(all, (9..=16).collect::<Vec<_>>());
    let measured: BTreeSet<u64> = pts.iter().map(|p| p.input_bytes).collect();
    let extra = refinement(&m, &measured);
    // Boundaries k·64 − p + 1 for p in 9..=16: 49..=56 (48 and 56 measured), 113..=120, …
    assert!(
        extra.starts_with(&[49, 50, 51, 52, 53, 54, 55, 113]),
        "{extra:?}"
    );
    assert!(extra.iter().all(|n| !measured.contains(n)));
    let mut lengths = dense();
    lengths.extend(&extra);
    let m = fit(&sweep(&lengths, (600.0, 1100.0, 0.0), (64, 9), 0.002)).unwrap();
    assert_eq!((m.padding_bytes, m.padding_alternatives.len()), (9, 0));
    assert!(refinement(&m, &lengths.iter().copied().collect()).is_empty());
}

#[test]
fn too_few_or_bad_points_are_refused_with_the_reason() {
    let few = sweep(&[8, 16, 24], (1.0, 1.0, 0.0), (64, 9), 0.0);
    assert!(fit(&few).unwrap_err().to_string().contains("at least"));
    let mut bad = sweep(&dense(), (1.0, 1.0, 0.0), (64, 9), 0.0);
    bad[3].cycles = f64::NAN;
    assert!(fit(&bad).unwrap_err().to_string().contains("length 32 B"));
}

#[test]
fn block_candidates_repeat_within_the_lengths() {
    assert_eq!(block_candidates(40), vec![8, 16]);
    let c = block_candidates(65536);
    assert!(c.contains(&64) && c.contains(&136) && c.contains(&2048));
    assert_eq!(SweepLengths::default().coarse().len(), 256 + 4);
}

/// A fit whose free fixed cost comes out below zero holds it at 0 and says so; the per-block
/// cost is still found.
#[test]
fn a_negative_fixed_cost_is_held_at_zero() {
    let lengths: Vec<u64> = (1..=64).map(|k| 8 * k).collect();
    let points = sweep(&lengths, (-60.0, 400.0, 0.0), (64, 9), 0.002);
    let m = super::fit::fit_given(&points, 64, 9, "given").unwrap();
    assert!(m.fixed_at_zero, "{m:?}");
    assert_eq!(m.fixed_cycles.value, 0.0);
    assert_eq!(m.fixed_cycles.low, 0.0);
    assert!(m.fixed_cycles.high >= 0.0);
    // Held at 0, a block absorbs some of the negative part: within 10 %.
    assert!((m.cycles_per_block.value - 400.0).abs() < 40.0, "{m:?}");
    assert_eq!(m.structure, "given");
    // The searched fit never reports one either.
    let searched = fit(&points).unwrap();
    assert!(searched.fixed_cycles.value >= 0.0, "{searched:?}");
}

/// Points with no block structure (a cost linear in the length, noisy) fit many block sizes
/// about equally: the answer is "undetermined", with the candidates that came close.
#[test]
fn lengths_that_cannot_tell_block_sizes_apart_leave_the_block_undetermined() {
    let lengths: Vec<u64> = (1..=32).map(|k| 8 * k).collect();
    let points = sweep(&lengths, (500.0, 0.0, 6.0), (64, 9), 0.03);
    let m = fit(&points).unwrap();
    assert!(!m.block_determined(), "{m:?}");
    assert!(m.close_blocks.iter().all(|c| c.block_bytes != m.block_bytes
        && c.loss_ratio <= super::fit::CLOSE_LOSS_RATIO));
    // A clean SM3-like sweep is determined.
    let clean = sweep(&lengths, (300.0, 380.0, 0.0), (64, 9), 0.002);
    let m = fit(&clean).unwrap();
    assert_eq!((m.block_bytes, m.padding_bytes), (64, 9));
    assert!(m.block_determined(), "{m:?}");
}
