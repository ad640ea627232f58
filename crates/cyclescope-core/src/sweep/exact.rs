//! The block structure of an instruction-count sweep, read off the counts instead of fitted:
//! an exact count rises a little with each byte (the tail copied into the padding buffer) and
//! jumps by a whole block's instructions where one more block is hashed. The first length of
//! k + 1 blocks is n = k·B − p + 1 (`fit::CostModel::blocks`), so two jumps placed byte by
//! byte give B (their distance) and p ≡ 1 − n (mod B). Which lengths to count byte by byte is
//! decided here too. Pure arithmetic on points; it never measures.

use std::collections::BTreeSet;

use super::fit::{self, CostModel, SweepPoint};

/// `CostModel::structure` of a model whose B and p come from here.
pub(crate) const STRUCTURE: &str = "instructions";

/// Block boundaries placed byte by byte (the refinement stops after these).
const BOUNDARIES: usize = 3;

/// A step between two measured lengths counts as a jump when it rises by more than this share
/// of the steepest step's rise per byte.
const JUMP_SHARE: f64 = 0.5;

/// The block size and padding threshold the counts show, or why they show none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Structure {
    Found {
        block_bytes: u64,
        padding_bytes: u64,
        /// The first length of each further block, as counted.
        jumps: Vec<u64>,
    },
    Undetermined(String),
}

/// Consecutive measured lengths `(a, b)` between which the count jumps: the steps that rise by
/// more than `JUMP_SHARE` of the steepest step's rise per byte. Per byte, because a sweep's
/// steps are of many widths: a wide step between two long lengths (16 KiB to 64 KiB) rises by
/// hundreds of blocks, far more than a short step across one boundary (48 to 56 B: one block),
/// which a share of the largest rise would hide — yet the short step is the steeper, and it is
/// the one to place a boundary in. A step without a boundary rises by a few instructions (the
/// tail's copy), whatever its width.
fn jump_steps(points: &[SweepPoint]) -> Vec<(u64, u64)> {
    let mut sorted: Vec<&SweepPoint> = points.iter().collect();
    sorted.sort_by_key(|p| p.input_bytes);
    let slopes: Vec<(u64, u64, f64)> = sorted
        .windows(2)
        .filter(|w| w[1].input_bytes > w[0].input_bytes)
        .map(|w| {
            let width = (w[1].input_bytes - w[0].input_bytes) as f64;
            (
                w[0].input_bytes,
                w[1].input_bytes,
                (w[1].cycles - w[0].cycles) / width,
            )
        })
        .collect();
    let steepest = slopes.iter().map(|r| r.2).fold(0.0, f64::max);
    if steepest <= 0.0 {
        return Vec::new();
    }
    slopes
        .into_iter()
        .filter(|r| r.2 > JUMP_SHARE * steepest)
        .map(|r| (r.0, r.1))
        .collect()
}

/// Rounds of bisection at most (a step of 2^12 bytes is placed to the byte in 12).
pub(crate) const MAX_ROUNDS: usize = 12;

/// The next round of bisection: the middle of each of the first jumps not yet placed to the
/// byte (a count is exact, so the jump is on the side whose count rose).
pub(crate) fn refinement(points: &[SweepPoint]) -> Vec<u64> {
    let measured: BTreeSet<u64> = points.iter().map(|p| p.input_bytes).collect();
    jump_steps(points)
        .into_iter()
        .take(BOUNDARIES)
        .filter(|(a, b)| b - a > 1)
        .map(|(a, b)| a + (b - a) / 2)
        .filter(|n| !measured.contains(n))
        .collect()
}

/// The structure of exact counts (after `refinement`'s lengths were counted too).
pub(crate) fn structure(points: &[SweepPoint]) -> Structure {
    let jumps: Vec<u64> = jump_steps(points)
        .into_iter()
        .filter(|(a, b)| b - a == 1)
        .map(|(_, b)| b)
        .collect();
    if jumps.len() < 2 {
        return Structure::Undetermined(format!(
            "the counts place {} block boundar{} to the byte, and a block size needs two \
             (sweep longer messages, or without --no-refine)",
            jumps.len(),
            if jumps.len() == 1 { "y" } else { "ies" }
        ));
    }
    let gaps: Vec<u64> = jumps.windows(2).map(|w| w[1] - w[0]).collect();
    let block = gaps.iter().copied().min().unwrap_or(0);
    if block == 0 || gaps.iter().any(|g| g % block != 0) {
        return Structure::Undetermined(format!(
            "the counts jump at {jumps:?} B, which no single block size explains"
        ));
    }
    let padding = (block - (jumps[0] - 1) % block) % block;
    Structure::Found {
        block_bytes: block,
        padding_bytes: padding,
        jumps,
    }
}

/// The model of exact counts: B and p from their jumps, the coefficients fitted under them;
/// "undetermined" with the reason when the counts place no block size.
pub(crate) fn model(points: &[SweepPoint]) -> Result<CostModel, String> {
    match structure(points) {
        Structure::Found {
            block_bytes,
            padding_bytes,
            ..
        } => {
            fit::fit_given(points, block_bytes, padding_bytes, STRUCTURE).map_err(|e| e.to_string())
        }
        Structure::Undetermined(why) => Err(format!("block size undetermined: {why}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts of a hash of `block`-byte blocks and `pad` bytes of padding: 1000 fixed, 700 a
    /// block, 3 a byte of tail.
    fn counts(block: u64, pad: u64, lengths: impl Iterator<Item = u64>) -> Vec<SweepPoint> {
        lengths
            .map(|n| SweepPoint {
                input_bytes: n,
                cycles: (1000 + 700 * (n + pad).div_ceil(block) + 3 * (n % block)) as f64,
            })
            .collect()
    }

    fn swept(block: u64, pad: u64) -> Structure {
        let mut points = counts(block, pad, (1..=32).map(|k| 8 * k));
        let mut rounds = 0;
        loop {
            let extra = refinement(&points);
            if extra.is_empty() {
                break;
            }
            rounds += 1;
            points.extend(counts(block, pad, extra.into_iter()));
        }
        // Bisection: three rounds place a jump inside an 8-byte step.
        assert!(rounds <= 3, "{rounds} rounds");
        structure(&points)
    }

    #[test]
    fn sm3s_and_a_32_byte_blocks_structure_are_found_to_the_byte() {
        assert_eq!(
            swept(64, 9),
            Structure::Found {
                block_bytes: 64,
                padding_bytes: 9,
                jumps: vec![56, 120, 184]
            }
        );
        let Structure::Found {
            block_bytes,
            padding_bytes,
            ..
        } = swept(32, 5)
        else {
            panic!()
        };
        assert_eq!((block_bytes, padding_bytes), (32, 5));
        // A threshold of 0 (the block boundary itself) and a whole block of padding.
        for (b, p) in [(48, 0), (24, 1), (40, 17)] {
            let Structure::Found {
                block_bytes,
                padding_bytes,
                ..
            } = swept(b, p)
            else {
                panic!("{b}/{p}")
            };
            assert_eq!((block_bytes, padding_bytes), (b, p));
        }
    }

    /// The SM3 sweep: 8-byte steps up to 256 B, then wider and wider steps up to
    /// 64 KiB, whose rise (hundreds of blocks) dwarfed every one-block jump; counts that differ
    /// by a couple of instructions between lengths of one block count.
    #[test]
    fn wide_steps_between_long_lengths_do_not_hide_the_short_jumps() {
        let sm3 = |n: u64| SweepPoint {
            input_bytes: n,
            cycles: (240 + 3058 * (n + 9).div_ceil(64) + (n % 64) / 4) as f64,
        };
        let mut lengths: Vec<u64> = (1..=32).map(|k| 8 * k).collect();
        lengths.extend([512, 1024, 4096, 16_384, 65_536]);
        let mut points: Vec<SweepPoint> = lengths.into_iter().map(sm3).collect();
        loop {
            let extra = refinement(&points);
            if extra.is_empty() {
                break;
            }
            points.extend(extra.into_iter().map(sm3));
        }
        assert_eq!(
            structure(&points),
            Structure::Found {
                block_bytes: 64,
                padding_bytes: 9,
                jumps: vec![56, 120, 184]
            }
        );
    }

    #[test]
    fn too_short_a_sweep_is_undetermined_and_says_why() {
        let points = counts(64, 9, (1..=10).map(|k| 8 * k));
        assert!(matches!(structure(&points), Structure::Undetermined(why) if why.contains("two")));
        let flat: Vec<SweepPoint> = (1..=10)
            .map(|k| SweepPoint {
                input_bytes: 8 * k,
                cycles: 500.0,
            })
            .collect();
        assert!(matches!(structure(&flat), Structure::Undetermined(_)));
    }
}
