//! `compare --live A A --aa`: an A/A calibration. One instance is measured against itself, the
//! two sides told apart only by their candidate ids (`+A`, `+B`) so their records keep apart;
//! every length is one A/A comparison, and each that shows a difference is a false positive
//! of the interleaved statistic on this host now. The summary line and its JSON are here; the
//! measuring is the ordinary interleaved comparison's.

use crate::campaign::LiveComparison;
use crate::catalog::Instance;
use crate::measure::paired::PairedVerdict;

/// The two sides of an A/A calibration: one instance, its candidate id suffixed `+A` and `+B`.
pub(super) fn split(a: &mut Instance, b: &mut Instance) -> anyhow::Result<()> {
    for (inst, tag) in [(a, "A"), (b, "B")] {
        let id: String = format!("{}+{tag}", inst.candidate)
            .chars()
            .take(64)
            .collect();
        cyclescope_core::name::SafeName::new("candidate id", &id)?;
        inst.candidate = id;
    }
    Ok(())
}

/// Lengths compared, and those that showed a difference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FalsePositives {
    pub(super) compared: usize,
    pub(super) different: usize,
}

impl FalsePositives {
    pub(super) fn of(rows: &[LiveComparison]) -> Self {
        let verdicts: Vec<PairedVerdict> = rows
            .iter()
            .filter_map(|c| c.ratio.map(|r| r.verdict()))
            .collect();
        Self {
            compared: verdicts.len(),
            different: verdicts
                .iter()
                .filter(|v| **v != PairedVerdict::Indistinguishable)
                .count(),
        }
    }

    fn rate(&self) -> Option<f64> {
        (self.compared > 0).then(|| self.different as f64 / self.compared as f64)
    }

    /// The line under the table.
    pub(super) fn line(&self) -> String {
        match self.rate() {
            Some(r) => format!(
                "A/A calibration: {} of {} length(s) showed a difference although both sides are \
                 one instance: false-positive rate {:.0} % (the statistic aims at 5 %)",
                self.different,
                self.compared,
                100.0 * r
            ),
            None => "A/A calibration: no length got an interval".into(),
        }
    }

    pub(super) fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "lengths_compared": self.compared,
            "false_positives": self.different,
            "false_positive_rate": self.rate(),
        })
    }
}
