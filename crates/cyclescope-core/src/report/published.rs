//! The summary page's `## Beside the published figures` section, when the report is given a
//! published dataset (`report --published DATASET`): for every hash job both have, this
//! dataset's `× pseudoXOF` ratio and the published one, each a quotient within its own host
//! and counter and therefore comparable across them. A ratio either of whose figures is marked
//! ⚠ carries the mark. Reads records only; never measures.

use std::collections::BTreeMap;

use crate::format;
use crate::record::TimingRecord;

type Key = (String, u64);

/// One dataset's complete records by (label, length).
fn by_job(records: &[TimingRecord]) -> BTreeMap<Key, &TimingRecord> {
    records
        .iter()
        .filter(|r| r.status.is_complete())
        .map(|r| ((r.label.clone(), r.input_bytes), r))
        .collect()
}

/// Whether the figure itself is doubtful (what puts ⚠ beside it in every table).
fn doubtful(r: &TimingRecord) -> bool {
    r.summary().doubts.iter().any(|d| d.of_figure())
}

/// The `× pseudoXOF` ratio of the job `k` in one dataset, and whether either side is ⚠.
fn ratio_in(run: &BTreeMap<Key, &TimingRecord>, k: &Key) -> Option<(f64, bool)> {
    let own = run.get(k)?;
    let base = run.get(&(crate::baseline::label(own.digest_bits()?), k.1))?;
    let r = crate::baseline::ratio(own.mean_cycles, base.mean_cycles)?;
    Some((r, doubtful(own) || doubtful(base)))
}

fn cell(r: Option<(f64, bool)>) -> String {
    match r {
        None => format::MISSING.to_string(),
        Some((x, doubt)) => format!(
            "{}{}",
            format::ratio(Some(x), Some(1.0)),
            if doubt { " ⚠" } else { "" }
        ),
    }
}

/// Whether a hash job (not a baseline pseudoXOF) is complete in both.
pub(crate) fn any_in_common(ours: &[TimingRecord], published: &[TimingRecord]) -> bool {
    let theirs = by_job(published);
    by_job(ours)
        .keys()
        .any(|k| !k.0.starts_with("pseudoXOF-") && theirs.contains_key(k))
}

/// The section's lines (ending with a blank line); empty when no hash job is in both.
pub(crate) fn section(
    ours: &[TimingRecord],
    published: &[TimingRecord],
    name: &str,
) -> Vec<String> {
    let (mine, theirs) = (by_job(ours), by_job(published));
    let rows: Vec<String> = mine
        .keys()
        .filter(|(label, _)| !label.starts_with("pseudoXOF-"))
        .filter_map(|k| {
            let (a, b) = (ratio_in(&mine, k), ratio_in(&theirs, k));
            b?;
            Some(format!(
                "| {} | {} | {} | {} |",
                crate::sanitize::markdown_code(&k.0),
                format::size(k.1),
                cell(a),
                cell(b)
            ))
        })
        .collect();
    if rows.is_empty() {
        return vec![];
    }
    let mut l = vec![
        "## Beside the published figures".to_string(),
        String::new(),
        format!(
            "`× pseudoXOF` of each hash job here and in the published dataset `{}`: each ratio divides by the `pseudoXOF` of its own dataset, at the same width and length, so the two are comparable whatever counter and host measured them (⚠: a figure of that ratio is doubtful).",
            crate::sanitize::markdown(name)
        ),
        String::new(),
        "| instance | message | × pseudoXOF here | × pseudoXOF published |".into(),
        "|---|---|---|---|".into(),
    ];
    l.extend(rows);
    l.push(String::new());
    l
}

/// The section beside a published page (`report --published PAGE`): the page prints mean
/// cycles and no baseline, so the two means stand side by side with their quotient, under what
/// each side says of its counter, clock, processor and flags (`published_page::checks`, whose
/// lines read A for the page and B for this dataset). Empty when no hash job is in both.
pub(crate) fn page_section(
    ours: &[TimingRecord],
    page: &super::published_page::PublishedPage,
    name: &str,
) -> Vec<String> {
    let (mine, theirs) = (by_job(ours), page.records());
    let theirs = by_job(&theirs);
    let rows: Vec<String> = mine
        .iter()
        .filter(|((label, _), _)| !label.starts_with("pseudoXOF-"))
        .filter_map(|(k, own)| {
            let published = theirs.get(k)?;
            Some(format!(
                "| {} | {} | {}{} | {} | {} |",
                crate::sanitize::markdown_code(&k.0),
                format::size(k.1),
                format::int(own.mean_cycles),
                if doubtful(own) { " ⚠" } else { "" },
                format::int(published.mean_cycles),
                format::ratio(own.mean_cycles, published.mean_cycles)
            ))
        })
        .collect();
    if rows.is_empty() {
        return vec![];
    }
    let mut l = vec![
        "## Beside the published figures".to_string(),
        String::new(),
        format!(
            "Mean cycles of each hash job here and on the published page `{}`, as that page prints them (rounded; a page prints no interval and no baseline, so there is no `× pseudoXOF` to set beside ours). What each side says of how it measured (A: the page, B: here):",
            crate::sanitize::markdown(name)
        ),
        String::new(),
    ];
    l.extend(
        super::published_page::checks::lines(page, ours)
            .iter()
            .map(|c| format!("- {}", crate::sanitize::markdown(c))),
    );
    l.extend([
        String::new(),
        "| instance | message | mean cycles here | mean cycles published | here / published |"
            .into(),
        "|---|---|---|---|---|".into(),
    ]);
    l.extend(rows);
    l.push(String::new());
    l
}
