//! The summary page `performance/summary_<ID>.md` as far as hash data reaches: header, intro
//! bullets, the `## ICCS hash helpers` table and the `## Hash functions` table with ratios to
//! `pseudoXOF` of the same width (spec §6, §8). Public-key sections need records cyclescope
//! does not produce and are left out. Never reads files.

use std::collections::BTreeMap;

use super::dataset::InstanceEvidence;
use super::host_view::HostView;
use super::side_files::{CandidateInfo, LabelNote};
use crate::format;
use crate::record::TimingRecord;

/// S1–S8.
pub(crate) const LENGTHS: [u64; 8] = [32, 128, 512, 1024, 4096, 8192, 16384, 65536];
const HARNESS_BLOB: &str = "https://github.com/ngcc-dev/ngcc-harness/blob/main";

const BULLETS: &str = include_str!("summary_bullets.md");
/// Which widths the helper table has, said once for both kinds of dataset.
const WIDTHS: &str = "`pseudohash` comes in 512, 768 and 1024 output bits only; `pseudoXOF` is listed at each output width that some hash candidate uses.";

/// What the summary's algorithm column can say of a candidate: the published candidates
/// file (name and specification link), else the algorithm the run's catalog gave it.
pub(crate) struct Names<'a> {
    pub(crate) published: &'a BTreeMap<String, CandidateInfo>,
    pub(crate) catalog: &'a BTreeMap<String, String>,
}

/// The whole summary page.
pub(crate) fn render(
    host: &HostView,
    by_candidate: &BTreeMap<String, Vec<InstanceEvidence>>,
    names: &Names<'_>,
    notes: &[LabelNote],
    baseline: &str,
) -> String {
    let id = &host.system_id;
    let mut l = vec![
        format!("# Performance — {}, system {id}", host.arch_title()),
        String::new(),
        format!(
            "Cycle counts of NGCC Round 1 hash implementations and of the ICCS helpers, measured on system {id}: one {} core, {}.",
            host.cpu_model(),
            host.clock_text()
        ),
        String::new(),
    ];
    l.extend(
        BULLETS
            .lines()
            .map(|b| b.replace("method_{ID}.md", &format!("method_{id}.md"))),
    );
    l.push(String::new());
    // The helpers the ratios divide by: `iccs` unless the report was told another baseline.
    let iccs = by_candidate.get(baseline).map(Vec::as_slice).unwrap_or(&[]);
    let helpers = |c: &str| c == crate::baseline::DEFAULT_CANDIDATE || c == baseline;
    if !iccs.is_empty() {
        l.extend(iccs_section(iccs));
    }
    let hashes: Vec<&InstanceEvidence> = by_candidate
        .iter()
        .filter(|(c, _)| !helpers(c))
        .flat_map(|(_, v)| v)
        .collect();
    if !hashes.is_empty() {
        l.push("## Hash functions".into());
        l.push(String::new());
        l.push("| id | algorithm | instance performance report | 32 B cycles (× pseudoXOF) | 1 KiB cycles (× pseudoXOF) | 64 KiB cycles (× pseudoXOF) | notes |".into());
        l.push("|---|---|---|---|---|---|---|".into());
        for i in hashes {
            l.push(hash_row(host, i, iccs, names, notes));
        }
        l.push(String::new());
        l.push(format!(
            "The ratios divide by the `pseudoXOF` records of candidate `{baseline}` in this dataset."
        ));
        l.push(String::new());
    }
    l.join("\n") + "\n"
}

/// `## ICCS hash helpers` with its intro and table, ending with a blank line.
pub(crate) fn iccs_section(iccs: &[InstanceEvidence]) -> Vec<String> {
    // The page says what was measured: the harness's C helpers, or cyclescope's own (a
    // record that carries cyclescope's additions came from a cyclescope run).
    let ours = iccs
        .iter()
        .flat_map(|i| i.records.iter())
        .find_map(|(_, r)| r.cyclescope.as_ref().map(|a| (r, a)));
    let intro = match ours {
        None => format!(
            "Cycles per call of the three ICCS helpers of `api/auxfunc.c`, compiled with the reference flags and run like any hash instance over the guide's eight lengths S1–S8. {WIDTHS}"
        ),
        Some((r, _)) => format!(
            "Cycles per call of the ICCS helpers as bundled with cyclescope: Rust implementations of `sm3hash`, `pseudohash` and `pseudoXOF` from `api/auxfunc.c` that reproduce its published self-test values (build: {}), run like any hash instance over the guide's eight lengths S1–S8. These are not the harness's C builds, so compare candidates with them only within runs of this system. {WIDTHS}",
            if r.build_flags.is_empty() {
                "unknown".into()
            } else {
                crate::sanitize::markdown(&r.build_flags)
            }
        ),
    };
    let mut l = vec![
        "## ICCS hash helpers".to_string(),
        String::new(),
        intro,
        String::new(),
    ];
    let heads: Vec<String> = LENGTHS.iter().map(|&b| format::size(b)).collect();
    l.push(format!(
        "| ICCS helper | output bits | {} | cycles/byte (64 KiB) |",
        heads.join(" | ")
    ));
    l.push(format!("|{}", "---|".repeat(LENGTHS.len() + 3)));
    let mut helpers: Vec<&InstanceEvidence> = iccs.iter().collect();
    let rank = |l: &str| {
        ["sm3hash", "pseudohash", "pseudoXOF"]
            .iter()
            .position(|p| l.starts_with(p))
    };
    helpers.sort_by_key(|i| (rank(&i.label).unwrap_or(3), i.digest_bits, i.label.clone()));
    for i in helpers {
        let name = i
            .label
            .rsplit_once('-')
            .map_or(i.label.as_str(), |(n, _)| n);
        let cells: Vec<String> = LENGTHS.iter().map(|&b| cell(i.at(b))).collect();
        let cpb = i
            .at(65536)
            .filter(|r| r.status.is_complete())
            .and_then(|r| r.mean_cycles)
            .map_or(format::MISSING.to_string(), |c| {
                format::cycles_per_byte(c, 65536)
            });
        let bits = i
            .digest_bits
            .map_or(format::MISSING.to_string(), |b| b.to_string());
        l.push(format!(
            "| `{name}` | {bits} | {} | {cpb} |",
            cells.join(" | ")
        ));
    }
    l.push(String::new());
    if let Some((r, a)) = ours {
        l.push(format!(
            "Measured by {}.",
            crate::report::measured_by(&r.environment, a.cycle_source_name(), a.reference_cycles)
        ));
        l.push(String::new());
    }
    l
}

/// `cell(rec)`: `–` missing, `failed`, else mean cycles (or time) with ` (n=…)` under 100.
pub(crate) fn cell(r: Option<&TimingRecord>) -> String {
    let Some(r) = r else {
        return format::MISSING.into();
    };
    if !r.status.is_complete() {
        return "failed".into();
    }
    let mut text = match r.mean_cycles {
        Some(c) => format::int(Some(c)),
        None => format::time(r.mean_seconds.unwrap_or(0.0)),
    };
    if r.measurements < 100 {
        text += &format!(" (n={})", r.measurements);
    }
    text
}

fn hash_row(
    host: &HostView,
    i: &InstanceEvidence,
    iccs: &[InstanceEvidence],
    names: &Names<'_>,
    notes: &[LabelNote],
) -> String {
    let cand = &i.candidate;
    let algorithm = match (names.published.get(cand), names.catalog.get(cand)) {
        (Some(n), _) => format!(
            "{} [PDF]({HARNESS_BLOB}/{cand}/{cand}-spec.pdf)",
            n.algorithm
        ),
        // The run's own name of it: catalog or library metadata, so Markdown-escaped.
        (None, Some(a)) => crate::sanitize::markdown(a).into_owned(),
        (None, None) => cand.clone(),
    };
    let baseline = i.digest_bits.and_then(|bits| {
        iccs.iter()
            .find(|b| b.label == crate::baseline::label(bits as u32))
    });
    let cells: Vec<String> = [32, 1024, 65536]
        .iter()
        .map(|&b| {
            let r = i.at(b);
            let base_record = baseline.and_then(|x| x.at(b));
            let base = base_record
                .filter(|x| x.status.is_complete())
                .and_then(|x| x.mean_cycles);
            // A ratio is as doubtful as either figure it divides.
            let doubtful = [r, base_record]
                .into_iter()
                .flatten()
                .any(|x| crate::baseline::figure_doubtful(&x.summary()));
            let own = r
                .filter(|x| x.status.is_complete())
                .and_then(|x| x.mean_cycles);
            match r {
                None => format::MISSING.to_string(),
                Some(_) => {
                    let ratio = format::ratio(own, base);
                    if ratio.starts_with('(') {
                        format!("{} {ratio}", cell(r))
                    } else if doubtful {
                        format!("{} ({ratio} ⚠)", cell(r))
                    } else {
                        format!("{} ({ratio})", cell(r))
                    }
                }
            }
        })
        .collect();
    let mut label = format!("`{}`", i.label);
    let mut row_notes: Vec<String> = notes
        .iter()
        .filter(|n| n.applies(cand, &i.label))
        .map(|n| n.text.clone())
        .collect();
    if !i.kat.is_pass() {
        label += &format!(" ⚠ KAT {}", super::conformance_section::kat_cell(i));
        row_notes.push("KAT/output caveat; see candidate page".into());
    }
    let notes = if row_notes.is_empty() {
        format::MISSING.to_string()
    } else {
        row_notes.join("; ")
    };
    format!(
        "| [{cand}](../{cand}/perf_{}.md) | {algorithm} | {label} | {} | {notes} |",
        host.system_id,
        cells.join(" | ")
    )
}
