//! Reading the journal back as a tuning history: per length, one row per build (library
//! sha256, flags, host and counter), consecutive measurements of one build folded into its
//! latest, each judged against the build before it by `compare`'s rule (`judge`: noise
//! between runs, no verdict on a doubtful figure, none across counters).

use super::Entry;
use crate::report::compare::{Verdict, judge};

/// One build at one length.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildRow {
    /// Its latest measurement (the figure shown).
    pub entry: Entry,
    /// How many measurements of this build in a row the row folds.
    pub measurements: u32,
    /// Against the previous build at this length (None for the first).
    pub verdict: Option<Verdict>,
}

impl BuildRow {
    /// The build's identity: what a rebuild or a flag change alters.
    fn same_build(a: &Entry, b: &Entry) -> bool {
        a.input_bytes == b.input_bytes
            && a.library_sha256 == b.library_sha256
            && a.flags == b.flags
            && a.build_flags == b.build_flags
            && a.system_id == b.system_id
            && a.counter == b.counter
    }
}

/// The builds of `entries` (one label, oldest first within each length), per length.
pub fn history(entries: &[Entry]) -> Vec<BuildRow> {
    let mut sorted: Vec<&Entry> = entries.iter().collect();
    sorted.sort_by(|a, b| (a.input_bytes, &a.ended_utc).cmp(&(b.input_bytes, &b.ended_utc)));
    let mut rows: Vec<BuildRow> = Vec::new();
    for e in sorted {
        if let Some(last) = rows.last_mut()
            && BuildRow::same_build(&last.entry, e)
        {
            last.entry = e.clone();
            last.measurements += 1;
            continue;
        }
        rows.push(BuildRow {
            entry: e.clone(),
            measurements: 1,
            verdict: None,
        });
    }
    for i in 1..rows.len() {
        if rows[i - 1].entry.input_bytes != rows[i].entry.input_bytes {
            continue;
        }
        let verdict = match (rows[i - 1].entry.figure(), rows[i].entry.figure()) {
            (Some(a), Some(b)) => judge(&a, &b),
            _ => Verdict::NotComparable("no cycle count".into()),
        };
        rows[i].verdict = Some(verdict);
    }
    rows
}
