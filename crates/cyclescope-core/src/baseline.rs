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

/// `own / base`: the one implementation of "× pseudoXOF" (the summary page, the run table, the
/// JSON, the TUI and the figures all call it), the arithmetic every ratio of two figures uses.
pub use crate::format::ratio_value as ratio;

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
        self.missing_for(selected, pool, false)
    }

    /// As [`Baseline::missing`]; with `helpers`, the baseline's helpers other than its
    /// pseudoXOF instances need theirs too: `sm3hash-256`'s ratio divides by `pseudoXOF-256`
    /// as any 256-bit instance's does (spec §8), so a run of it alone adds that job.
    pub fn missing_for(
        &self,
        selected: &[Instance],
        pool: &[Instance],
        helpers: bool,
    ) -> (Vec<Instance>, Vec<u32>) {
        let mut add: Vec<Instance> = Vec::new();
        let mut unknown = Vec::new();
        for i in selected {
            let skip = if helpers {
                self.is_reference(&i.candidate, &i.label)
            } else {
                i.candidate == self.candidate
            };
            if skip {
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

/// Each reference job with the instances whose ratio divides by it, as the run's plan says
/// why it was added: `pseudoXOF-256 (sm3hash-256 divides by it)`.
pub fn reference_reasons(references: &[String], instances: &[Instance]) -> Vec<String> {
    references
        .iter()
        .map(|r| {
            let needing: Vec<&str> = instances
                .iter()
                .filter(|i| label(i.digest_bits) == *r && i.label != *r)
                .map(|i| i.label.as_str())
                .collect();
            match needing.as_slice() {
                [] => r.clone(),
                [one] => format!("{r} ({one} divides by it)"),
                many => format!("{r} ({} divide by it)", many.join(", ")),
            }
        })
        .collect()
}

/// One row's "× pseudoXOF": the ratio, and whether it is doubtful because either figure it
/// divides is (a doubt about the figure, `Doubt::of_figure`, on the row or on its baseline).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct XofRatio {
    pub value: f64,
    pub doubtful: bool,
}

/// Whether a finished job's figure carries a doubt about the figure itself.
pub(crate) fn figure_doubtful(s: &JobSummary) -> bool {
    s.doubts.iter().any(crate::measure::doubt::Doubt::of_figure)
}

/// One baseline figure: its mean, counter and whether it is doubtful.
#[derive(Debug, Clone, Copy)]
struct BaseFigure {
    mean: f64,
    source: Option<CycleSource>,
    doubtful: bool,
}

/// The baseline's mean cycles by (width, length), from the finished jobs of one run (a
/// ratio never divides by another run's baseline).
#[derive(Debug, Clone, Default)]
pub struct BaselineMeans {
    means: BTreeMap<(u32, u64), BaseFigure>,
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
            if let (Some(bits), Some(mean)) = (bits, s.mean_cycles) {
                let figure = BaseFigure {
                    mean,
                    source: s.cycle_source,
                    doubtful: figure_doubtful(s),
                };
                means.insert((bits, k.input_bytes), figure);
            }
        }
        Self { means }
    }

    /// The baseline mean at this width and length.
    pub fn at(&self, digest_bits: u32, input_bytes: u64) -> Option<f64> {
        self.means.get(&(digest_bits, input_bytes)).map(|m| m.mean)
    }

    /// "× pseudoXOF" of a job of width `digest_bits`: its complete mean over the baseline's,
    /// when both were counted by the same counter (another counter is another unit); doubtful
    /// when either figure is.
    pub fn ratio_of(&self, digest_bits: u32, key: &JobKey, s: &JobSummary) -> Option<XofRatio> {
        let own = s.mean_cycles.filter(|_| s.status.is_complete());
        let base = self
            .means
            .get(&(digest_bits, key.input_bytes))
            .filter(|b| b.source == s.cycle_source)?;
        Some(XofRatio {
            value: ratio(own, Some(base.mean))?,
            doubtful: base.doubtful || figure_doubtful(s),
        })
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

/// A row's ratio as tables print it: `0.55×`, `0.55× ⚠` when doubtful, `–` when none.
pub fn ratio_cell(r: Option<XofRatio>) -> String {
    match r {
        Some(r) if r.doubtful => format!("{} ⚠", cell(Some(r.value))),
        r => cell(r.map(|r| r.value)),
    }
}

/// The line under a table whose ratios carry ⚠.
pub const DOUBTFUL_RATIO_NOTE: &str =
    "× pseudoXOF ⚠: the row's figure or the baseline it divides by is doubtful (see ⚠ above).";

/// The sentence under every table that carries the column: which baseline it divides by.
pub fn divides_by(baseline: &Baseline, counter: crate::counter::Counter) -> String {
    let figure = match counter {
        crate::counter::Counter::Cycles => "mean cycles",
        crate::counter::Counter::Instructions => "instructions per call",
    };
    format!(
        "{COLUMN}: {figure} over `pseudoXOF` of the same output width, length and counter, from candidate `{}`{}",
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
