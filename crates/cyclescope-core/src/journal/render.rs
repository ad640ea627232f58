//! The history as `cyclescope history` prints it: a Markdown table (numbers through
//! `format`, every string from a record through the sanitizer, long flags cut to 40
//! characters), JSON objects or CSV rows with numbers unformatted and the flags whole. Nothing here decides a verdict; `history` does.

use super::BuildRow;
use crate::format;
use crate::report::compare::Verdict;
use crate::sanitize::{markdown, markdown_code};

const COLUMNS: [&str; 17] = [
    "instance",
    "message_bytes",
    "build",
    "ended_utc",
    "library_sha256",
    "flags",
    "build_flags",
    "compiler",
    "system_id",
    "counter",
    "mean_cycles",
    "ci95_cycles",
    "doubt",
    "measurements",
    "verdict",
    "why",
    "run_dir",
];

/// The verdict's word and its reason (None for the first build).
fn verdict_parts(r: &BuildRow) -> (&'static str, Option<String>) {
    match &r.verdict {
        None => ("first", None),
        Some(v @ Verdict::NotComparable(w)) => (v.word(), Some(w.clone())),
        Some(v @ Verdict::Doubtful(side, w)) => (v.word(), Some(format!("{side}: {w}"))),
        Some(v) => (v.word(), None),
    }
}

/// The verdict as the table says it: against the previous build (A), this one (B).
fn verdict_text(r: &BuildRow) -> String {
    match &r.verdict {
        None => "first build".into(),
        Some(Verdict::Doubtful(side, why)) => {
            let whose = if *side == crate::report::compare::Side::A {
                "the previous build"
            } else {
                "this build"
            };
            format!("doubtful (⚠ {whose}: {why})")
        }
        Some(v) => v.to_string(),
    }
}

fn figure_text(r: &BuildRow) -> String {
    let e = &r.entry;
    let mark = if e.doubt.is_some() { " ⚠" } else { "" };
    match (e.mean_cycles, e.ci95_half_width) {
        (Some(m), Some(h)) => format!("{}{mark}", format::with_interval(m, m - h, m + h)),
        (m, _) => format!("{} (no interval){mark}", format::int(m)),
    }
}

/// A Markdown table, one row per build, numbered per length.
pub fn table(rows: &[BuildRow]) -> String {
    let mut out = String::from(
        "| instance | message | # | date (UTC) | library | flags | mean cycles [95 % CI] | counter | verdict vs the previous build | run |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (i, r) in rows.iter().enumerate() {
        let e = &r.entry;
        let n = build_number(rows, i);
        let date: String = e
            .ended_utc
            .chars()
            .take(16)
            .collect::<String>()
            .replace('T', " ");
        let runs = if r.measurements > 1 {
            format!(" (latest of {})", r.measurements)
        } else {
            String::new()
        };
        out += &format!(
            "| {} | {} | {n} | {} | {} | {} | {}{runs} | {} | {} | {} |\n",
            markdown_code(&e.label),
            format::size(e.input_bytes),
            markdown(&date),
            markdown_code(e.library_sha256.get(..12).unwrap_or(&e.library_sha256)),
            markdown(&r.entry.flags_short()),
            figure_text(r),
            markdown(if e.counter.is_empty() {
                "–"
            } else {
                &e.counter
            }),
            markdown(&verdict_text(r)),
            markdown(&e.run_dir.display().to_string()),
        );
    }
    out
}

/// The 1-based number of row `i` among the builds of its length.
fn build_number(rows: &[BuildRow], i: usize) -> usize {
    let len = rows[i].entry.input_bytes;
    rows[..=i]
        .iter()
        .filter(|r| r.entry.input_bytes == len)
        .count()
}

fn raw(rows: &[BuildRow], i: usize) -> Vec<String> {
    let r = &rows[i];
    let e = &r.entry;
    let num = |x: Option<f64>| x.map_or_else(String::new, |v| v.to_string());
    let (word, why) = verdict_parts(r);
    vec![
        e.label.clone(),
        e.input_bytes.to_string(),
        build_number(rows, i).to_string(),
        e.ended_utc.clone(),
        e.library_sha256.clone(),
        e.flags.clone(),
        e.build_flags.clone(),
        e.compiler.clone(),
        e.system_id.clone(),
        e.counter.clone(),
        num(e.mean_cycles),
        num(e.ci95_half_width),
        e.doubt.clone().unwrap_or_default(),
        r.measurements.to_string(),
        word.to_string(),
        why.unwrap_or_default(),
        e.run_dir.display().to_string(),
    ]
}

/// CSV, one line per build, numbers unformatted.
pub fn rows_csv(rows: &[BuildRow]) -> String {
    let cells: Vec<Vec<String>> = (0..rows.len()).map(|i| raw(rows, i)).collect();
    crate::report::export::csv(&COLUMNS, &cells)
}

/// JSON objects, one per build.
pub fn rows_json(rows: &[BuildRow]) -> serde_json::Value {
    let one = |i: usize| {
        let r = &rows[i];
        let e = &r.entry;
        let (word, why) = verdict_parts(r);
        serde_json::json!({
            "instance": e.label,
            "candidate": e.candidate,
            "message_bytes": e.input_bytes,
            "build": build_number(rows, i),
            "ended_utc": e.ended_utc,
            "library_sha256": e.library_sha256,
            "flags": e.flags,
            "build_flags": e.build_flags,
            "compiler": e.compiler,
            "cpu_model": e.cpu_model,
            "system_id": e.system_id,
            "counter": e.counter,
            "mean_cycles": e.mean_cycles,
            "ci95_cycles": e.ci95_half_width,
            "doubt": e.doubt,
            "measurements": r.measurements,
            "origin": e.origin.word(),
            "verdict": word,
            "why": why,
            "run_dir": e.run_dir,
            "record": e.record,
        })
    };
    serde_json::Value::Array((0..rows.len()).map(one).collect())
}
