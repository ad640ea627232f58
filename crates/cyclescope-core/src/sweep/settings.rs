//! What a sweep is asked to measure: the lengths (a dense grid plus the guide's S1–S8) and
//! which statistic of each record becomes the point the model is fitted to.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::catalog::GUIDE_LENGTHS;
use crate::record::TimingRecord;

/// Which lengths a sweep measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepLengths {
    pub step: u64,
    pub max_bytes: u64,
    /// Add the guide's S1–S8 (32 B … 64 KiB).
    pub guide: bool,
    /// Measure byte by byte around block boundaries the coarse lengths cannot place.
    pub refine: bool,
    /// What each point is.
    pub statistic: PointStatistic,
}

impl Default for SweepLengths {
    fn default() -> Self {
        Self {
            step: 8,
            max_bytes: 2048,
            guide: true,
            refine: true,
            statistic: PointStatistic::PerCallLow,
        }
    }
}

impl SweepLengths {
    /// `step, 2·step, … ≤ max_bytes`, and S1–S8 when asked.
    pub fn coarse(&self) -> Vec<u64> {
        let step = self.step.max(1);
        let mut set: BTreeSet<u64> = (1..=self.max_bytes / step).map(|k| k * step).collect();
        if self.guide {
            set.extend(GUIDE_LENGTHS);
        }
        set.into_iter().collect()
    }
}

/// What each point is. A busy or virtualised host slows whole trials down (a sibling thread
/// or another guest sharing the core), which moves every statistic of those trials but the
/// lowest per-call samples; so the default is the per-call 1st percentile, the cost of a call
/// that was not disturbed. The median and the guide's loop mean are there for quiet hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PointStatistic {
    /// 1st percentile of the per-call counter's samples (timer overhead subtracted).
    PerCallLow,
    /// Median of the per-call counter's samples (timer overhead subtracted).
    PerCallMedian,
    /// The guide's Σcycles/Σcalls of the loop counter.
    LoopMean,
}

impl PointStatistic {
    pub fn describe(self) -> &'static str {
        match self {
            PointStatistic::PerCallLow => "per-call 1st percentile",
            PointStatistic::PerCallMedian => "per-call median",
            PointStatistic::LoopMean => "loop mean",
        }
    }

    /// This statistic of a record, when it has one.
    pub(super) fn of(self, r: &TimingRecord) -> Option<f64> {
        let per_call = r.cyclescope.as_ref().and_then(|a| a.per_call);
        let v = match self {
            PointStatistic::PerCallLow => per_call.map(|p| p.p1 as f64),
            PointStatistic::PerCallMedian => per_call.map(|p| p.p50 as f64),
            PointStatistic::LoopMean => r.mean_cycles,
        }?;
        (v > 0.0).then_some(v)
    }

    pub(super) fn counts_per_call(self) -> bool {
        self != PointStatistic::LoopMean
    }
}
