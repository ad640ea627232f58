//! An interleaved A/B comparison as a result of its run: which two instances, how many pairs
//! were asked for, and B/A per length with its interval, kept in the run folder as
//! `ab_result.json` (written atomically, like the records), read back for a reloaded run, and
//! printed as one Markdown table by every frontend that shows it. Never measures.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{LiveComparison, RunRequest};

/// The file name in the run folder.
pub const FILE: &str = "ab_result.json";

/// The columns an export gives each length of an A/B result, after its job columns (B's
/// candidate, label, length and mean): what B was divided by, B/A, its interval, the pairs and
/// the verdict. Job rows leave them empty.
pub const EXPORT_COLUMNS: [&str; 6] = [
    "ab_divided_by",
    "ab_ratio",
    "ab_ci95_low",
    "ab_ci95_high",
    "ab_pairs",
    "ab_verdict",
];

/// One side of the comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbSide {
    pub candidate: String,
    pub label: String,
}

/// B against A at each length of one interleaved run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbResult {
    pub a: AbSide,
    pub b: AbSide,
    pub pairs_requested: u32,
    pub lengths: Vec<LiveComparison>,
}

impl AbResult {
    /// The result of `req` (A its first instance, B its second).
    pub fn new(req: &RunRequest, pairs: u32, lengths: Vec<LiveComparison>) -> Self {
        let side = |i: usize| AbSide {
            candidate: req.instances[i].candidate.clone(),
            label: req.instances[i].label.clone(),
        };
        Self {
            a: side(0),
            b: side(1),
            pairs_requested: pairs,
            lengths,
        }
    }

    /// Writes `ab_result.json` into `run_dir` (temporary file, then rename).
    pub fn write(&self, run_dir: &Path) -> std::io::Result<()> {
        crate::record::pyjson::write_json_atomic(&run_dir.join(FILE), self)
    }

    /// The result kept in `run_dir`, if there is one that reads.
    pub fn read(run_dir: &Path) -> Option<Self> {
        let bytes = std::fs::read(run_dir.join(FILE)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// The Markdown table: per length both means, B/A, its 95 % CI, the pairs and the
    /// verdict, then a line per length that has no interval and why (terminal-escaped).
    pub fn markdown(&self) -> String {
        let mut out = String::from(
            "| message | A mean cycles | B mean cycles | B / A | 95 % CI | pairs | verdict |\n\
             |---|---|---|---|---|---|---|\n",
        );
        for c in &self.lengths {
            let (ratio, ci, n, verdict) = match &c.ratio {
                Some(r) => (
                    format!("{:.3}", r.ratio),
                    format!("{:.3} … {:.3}", r.ci95_low, r.ci95_high),
                    r.pairs.to_string(),
                    r.verdict().to_string(),
                ),
                None => ("—".into(), "—".into(), "0".into(), "no interval".into()),
            };
            out += &format!(
                "| {} | {} | {} | {ratio} | {ci} | {n} | {verdict} |\n",
                crate::format::size(c.input_bytes),
                crate::format::int(c.a_mean_cycles),
                crate::format::int(c.b_mean_cycles),
            );
        }
        for p in self.lengths.iter().filter_map(|c| c.problem.as_ref()) {
            out += &format!("⚠ {}\n", crate::sanitize::terminal(p));
        }
        out
    }

    /// The [`EXPORT_COLUMNS`] cells of one length (raw text: the CSV writer quotes). A length
    /// without an interval has empty figures and says why in the verdict.
    pub fn export_cells(&self, c: &LiveComparison) -> [String; 6] {
        use crate::report::export::number;
        let a = format!("{}/{}", self.a.candidate, self.a.label);
        match &c.ratio {
            Some(r) => [
                a,
                number(Some(r.ratio)),
                number(Some(r.ci95_low)),
                number(Some(r.ci95_high)),
                r.pairs.to_string(),
                r.verdict().to_string(),
            ],
            None => [
                a,
                String::new(),
                String::new(),
                String::new(),
                "0".into(),
                c.problem
                    .as_ref()
                    .map_or_else(|| "no interval".into(), |p| format!("no interval: {p}")),
            ],
        }
    }

    /// `A = cand/label, B = cand/label` (terminal-escaped), the heading of its table.
    pub fn title(&self) -> String {
        format!(
            "A/B: A = {}/{}, B = {}/{} ({} pairs per length, interleaved)",
            crate::sanitize::terminal(&self.a.candidate),
            crate::sanitize::terminal(&self.a.label),
            crate::sanitize::terminal(&self.b.candidate),
            crate::sanitize::terminal(&self.b.label),
            self.pairs_requested
        )
    }
}
