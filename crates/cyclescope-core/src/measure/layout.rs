//! Buffer layouts (issue 21 §3). The guide's figure is taken at one layout, the harness
//! driver's: the message and the digest each in an allocation of its own, right after its guard
//! bytes, wherever the C heap puts them. `run --layouts` times each job again at `LAYOUTS`,
//! where the message and the digest sit at chosen offsets past a 64-byte boundary (the
//! message at 0…7 bytes, as SMHasher's alignment test, the digest at 0, 8, …, 56), and reports
//! the lowest, median and highest figure across them beside the guide's. Pure: the campaign
//! runs the processes.

use serde::{Deserialize, Serialize};

use super::stats::{Trial, median};

/// Where the message and the digest start, in bytes past a 64-byte boundary (each < 64).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BufferOffsets {
    pub message: u32,
    pub digest: u32,
}

/// The layouts `--layouts` times, in order.
pub const LAYOUTS: [BufferOffsets; 8] = {
    let mut out = [BufferOffsets {
        message: 0,
        digest: 0,
    }; 8];
    let mut i = 0;
    while i < 8 {
        out[i] = BufferOffsets {
            message: i as u32,
            digest: 8 * i as u32,
        };
        i += 1;
    }
    out
};

/// Trials of one layout's process.
pub(crate) const LAYOUT_TRIALS: u32 = 2;

/// The figure of each layout and their spread, as the record keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayoutSpread {
    pub offsets: Vec<BufferOffsets>,
    /// Mean cycles per call at each layout (Σcycles/Σcalls of its trials), in `offsets` order.
    pub mean_cycles: Vec<f64>,
    pub min: f64,
    pub median: f64,
    pub max: f64,
    /// Layout trials the disturbance rule flags (preempted, slow clock); they are not re-run,
    /// so the spread is doubtful when any is.
    #[serde(default)]
    pub disturbed_trials: u32,
    #[serde(default)]
    pub trials: u32,
}

impl LayoutSpread {
    /// The spread of the figures measured at `offsets` (None when any layout has none).
    pub(crate) fn of(measured: Vec<(BufferOffsets, Vec<Trial>)>, disturbed: u32) -> Option<Self> {
        let mut offsets = Vec::new();
        let mut means = Vec::new();
        let mut all = 0;
        for (o, trials) in measured {
            all += trials.len() as u32;
            let calls: u64 = trials.iter().map(|t| t.measurements).sum();
            if calls == 0 || trials.iter().any(|t| t.cycles == 0) {
                return None;
            }
            offsets.push(o);
            means.push(trials.iter().map(|t| t.cycles).sum::<u64>() as f64 / calls as f64);
        }
        Some(Self {
            min: means.iter().copied().fold(f64::INFINITY, f64::min),
            max: means.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            median: median(means.clone())?,
            offsets,
            mean_cycles: means,
            disturbed_trials: disturbed,
            trials: all,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layouts_are_eight_message_and_digest_offsets_inside_a_cache_line() {
        assert_eq!(
            LAYOUTS[0],
            BufferOffsets {
                message: 0,
                digest: 0
            }
        );
        assert_eq!(
            LAYOUTS[7],
            BufferOffsets {
                message: 7,
                digest: 56
            }
        );
        assert!(LAYOUTS.iter().all(|o| o.message < 64 && o.digest < 64));
    }

    #[test]
    fn the_spread_is_min_median_max_of_each_layouts_mean() {
        let t = |calls, cycles| Trial {
            measurements: calls,
            seconds: 1e-3,
            cycles,
        };
        let s = LayoutSpread::of(
            vec![
                (LAYOUTS[0], vec![t(10, 1000), t(10, 1200)]),
                (LAYOUTS[1], vec![t(10, 900)]),
                (LAYOUTS[2], vec![t(10, 2000)]),
            ],
            1,
        )
        .unwrap();
        assert_eq!(s.mean_cycles, [110.0, 90.0, 200.0]);
        assert_eq!((s.min, s.median, s.max), (90.0, 110.0, 200.0));
        assert_eq!((s.disturbed_trials, s.trials), (1, 4));
        assert_eq!(
            LayoutSpread::of(vec![(LAYOUTS[0], vec![t(10, 0)])], 0),
            None
        );
    }
}
