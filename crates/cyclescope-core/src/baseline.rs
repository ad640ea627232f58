//! The NGCC headline figure "× pseudoXOF" (spec §8, ICCS baseline relative cost): which
//! candidate supplies the baseline (the bundled Rust `iccs` by default, or the official C
//! helpers as `iccs-c`), which of its instances matches a hash instance's output width, the
//! reference jobs a run adds when its session lacks them, and the one division every table,
//! page and panel prints. Never measures, never reads files.

use std::collections::BTreeMap;

use crate::catalog::Instance;
use crate::counter::CycleSource;
use crate::vocabulary::{JobKey, JobSummary};

/// The baseline candidate unless a setting or `--baseline` says otherwise.
pub const DEFAULT_CANDIDATE: &str = "iccs";

/// The header of the ratio column, exactly as the issue and the summary page word it.
pub const COLUMN: &str = "× pseudoXOF";

/// The candidate whose `pseudoXOF-<bits>` instances a hash instance is divided by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Baseline {
    pub candidate: String,
}

impl Default for Baseline {
    fn default() -> Self {
        Self::new(DEFAULT_CANDIDATE)
    }
}

/// The label of the baseline instance of a width: `pseudoXOF-512`.
pub fn label(digest_bits: u32) -> String {
    format!("pseudoXOF-{digest_bits}")
}

/// `own / base`: the ratio of two mean cycle counts, when both are there and the base is
/// positive. The one implementation of "× pseudoXOF" (the summary page, the run table, the
/// JSON, the TUI and the figures all call it).
pub fn ratio(own: Option<f64>, base: Option<f64>) -> Option<f64> {
    match (own, base) {
        (Some(v), Some(b)) if b > 0.0 && v.is_finite() => Some(v / b),
        _ => None,
    }
}

impl Baseline {
    pub fn new(candidate: &str) -> Self {
        Self {
            candidate: candidate.to_string(),
        }
    }

    /// Whether `label` of `candidate` is one of this baseline's pseudoXOF instances.
    pub fn is_reference(&self, candidate: &str, label: &str) -> bool {
        candidate == self.candidate && label.starts_with("pseudoXOF-")
    }

    /// The baseline instance for `digest_bits` among `pool`.
    pub fn instance<'a>(&self, pool: &'a [Instance], digest_bits: u32) -> Option<&'a Instance> {
        let want = label(digest_bits);
        pool.iter()
            .find(|i| i.candidate == self.candidate && i.label == want)
    }

    /// The baseline instances `selected` needs and does not include, once per width, in the
    /// order of first need. The baseline candidate's own helpers need none (they are the
    /// reference, not a candidate). Widths without a baseline instance in `pool` are returned in the
    /// second list, so the frontend can say why a ratio stays empty.
    pub fn missing(&self, selected: &[Instance], pool: &[Instance]) -> (Vec<Instance>, Vec<u32>) {
        let mut add: Vec<Instance> = Vec::new();
        let mut unknown = Vec::new();
        for i in selected {
            if i.candidate == self.candidate {
                continue;
            }
            let bits = i.digest_bits;
            let have = |v: &[Instance]| {
                v.iter()
                    .any(|x| x.candidate == self.candidate && x.label == label(bits))
            };
            if have(selected) || have(&add) {
                continue;
            }
            match self.instance(pool, bits) {
                Some(b) => add.push(b.clone()),
                None if !unknown.contains(&bits) => unknown.push(bits),
                None => {}
            }
        }
        (add, unknown)
    }
}

/// The baseline's mean cycles by (width, length), from the finished jobs of a session.
#[derive(Debug, Clone, Default)]
pub struct BaselineMeans {
    means: BTreeMap<(u32, u64), (f64, Option<CycleSource>)>,
}

impl BaselineMeans {
    /// The means of `baseline`'s complete pseudoXOF jobs among `jobs` (width from the label).
    pub fn from_jobs<'a>(
        baseline: &Baseline,
        jobs: impl IntoIterator<Item = (&'a JobKey, &'a JobSummary)>,
    ) -> Self {
        let mut means = BTreeMap::new();
        for (k, s) in jobs {
            if !baseline.is_reference(&k.candidate, &k.label) || !s.status.is_complete() {
                continue;
            }
            let bits = k
                .label
                .strip_prefix("pseudoXOF-")
                .and_then(|b| b.parse::<u32>().ok());
            if let (Some(bits), Some(c)) = (bits, s.mean_cycles) {
                means.insert((bits, k.input_bytes), (c, s.cycle_source));
            }
        }
        Self { means }
    }

    /// The baseline mean at this width and length.
    pub fn at(&self, digest_bits: u32, input_bytes: u64) -> Option<f64> {
        self.means.get(&(digest_bits, input_bytes)).map(|m| m.0)
    }

    /// "× pseudoXOF" of a job of width `digest_bits`: its complete mean over the baseline's,
    /// when both were counted by the same counter (another counter is another unit).
    pub fn ratio_of(&self, digest_bits: u32, key: &JobKey, s: &JobSummary) -> Option<f64> {
        let own = s.mean_cycles.filter(|_| s.status.is_complete());
        let base = self
            .means
            .get(&(digest_bits, key.input_bytes))
            .filter(|(_, source)| *source == s.cycle_source)
            .map(|m| m.0);
        ratio(own, base)
    }

    /// Whether the session has no baseline figure at all.
    pub fn is_empty(&self) -> bool {
        self.means.is_empty()
    }
}

/// The ratio as tables print it: `3.58×`, or `–` when there is none.
pub fn cell(r: Option<f64>) -> String {
    r.map_or_else(
        || crate::format::MISSING.to_string(),
        |r| format!("{r:.2}×"),
    )
}

/// The report's §4 table with the `× pseudoXOF` column last, as `run` and the workbench print
/// it: per row its §4 cells, whether the run added it as a reference job (marked), its ratio.
/// Empty without rows.
pub fn perf_table_with_ratio(
    rows: impl IntoIterator<Item = ([String; 7], bool, Option<f64>)>,
) -> String {
    let cells: Vec<Vec<String>> = rows
        .into_iter()
        .map(|(cells, reference, ratio)| {
            let mut c = cells.to_vec();
            if reference {
                c[0] += " (reference)";
            }
            c.push(cell(ratio));
            c
        })
        .collect();
    if cells.is_empty() {
        return String::new();
    }
    let mut header: Vec<&str> = crate::report::PERF_HEADER.to_vec();
    header.push(COLUMN);
    crate::report::export::markdown(&header, &cells)
}

/// The sentence under every table that carries the column: which baseline it divides by.
pub fn divides_by(baseline: &Baseline) -> String {
    format!(
        "{COLUMN}: mean cycles over `pseudoXOF` of the same output width, length and counter, from candidate `{}`{}",
        baseline.candidate,
        if baseline.candidate == DEFAULT_CANDIDATE {
            " (cyclescope's Rust helpers, faster than the official C ones: not comparable with published ratios; `--baseline iccs-c` divides by the C helpers)"
        } else {
            ""
        }
    )
}

#[cfg(test)]
mod tests;
