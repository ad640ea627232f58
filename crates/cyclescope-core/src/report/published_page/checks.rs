//! What a published page and the other side of a comparison say of how they measured —
//! counter, clock, processor, build flags — side by side, each line ending in whether the
//! two agree, so a reader knows what a row of mean cycles beside a page's can mean. Reads the
//! page and the other side's records only.

use std::collections::BTreeSet;

use super::PublishedPage;
use crate::record::TimingRecord;

/// The distinct non-empty values `f` gives over `records`, joined, or `unknown`.
fn distinct(records: &[&TimingRecord], f: impl Fn(&TimingRecord) -> Option<String>) -> String {
    let all: BTreeSet<String> = records
        .iter()
        .filter_map(|r| f(r))
        .filter(|v| !v.is_empty())
        .collect();
    if all.is_empty() {
        "unknown".into()
    } else {
        all.into_iter().collect::<Vec<_>>().join(", ")
    }
}

/// A string field of a record's environment.
fn env(r: &TimingRecord, key: &str) -> Option<String> {
    match r.environment.get(key)? {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The other side's clock as its environment names it: `max 2.10 GHz, governor performance,
/// turbo off`, as much of it as is known.
fn clock_of(r: &TimingRecord) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(khz) = env(r, "cpufreq_max_khz").and_then(|k| k.parse::<f64>().ok()) {
        parts.push(format!("max {:.2} GHz", khz / 1e6));
    }
    if let Some(g) = env(r, "cpufreq_governor") {
        parts.push(format!("governor {g}"));
    }
    match env(r, "intel_pstate_no_turbo").as_deref() {
        Some("1" | "true") => parts.push("turbo off".into()),
        Some("0" | "false") => parts.push("turbo on".into()),
        _ => {}
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// The lines, A being the page: `counter: A … · B …: different units — …`.
pub fn lines(page: &PublishedPage, other: &[TimingRecord]) -> Vec<String> {
    let labels: BTreeSet<&str> = page.rows.iter().map(|r| r.label.as_str()).collect();
    let common: Vec<&TimingRecord> = other
        .iter()
        .filter(|r| labels.contains(r.label.as_str()))
        .collect();
    let sources = distinct(&common, |r| {
        r.cyclescope
            .as_ref()
            .and_then(|c| c.cycle_source)
            .map(|s| s.name().to_string())
    });
    let harness = common.iter().all(|r| r.cyclescope.is_none());
    let counter = if harness {
        "the harness's on both sides (user-mode core cycles): the same unit".to_string()
    } else {
        format!(
            "A the harness's user-mode core cycles (perf_event; a page does not name its \
             counter, the harness's method does) · B {sources}: {}",
            if sources == "perf_event:cpu-cycles:u" {
                "the same unit, on two hosts"
            } else {
                "different units, so B / A is not a speed-up"
            }
        )
    };
    let or_unknown = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    let page_flags: BTreeSet<&str> = page.flags.values().map(String::as_str).collect();
    let page_flags = if page_flags.is_empty() {
        "unknown".to_string()
    } else {
        page_flags.into_iter().collect::<Vec<_>>().join(", ")
    };
    let flags = distinct(&common, |r| Some(r.flags.clone()));
    let same = |a: &str, b: &str| {
        if a == b && a != "unknown" {
            "the same"
        } else {
            "different"
        }
    };
    vec![
        format!("counter: {counter}"),
        format!(
            "clock: A {} · B {}",
            or_unknown(&page.clock),
            distinct(&common, clock_of)
        ),
        format!(
            "processor: A {} · B {}",
            or_unknown(&page.processor),
            distinct(&common, |r| env(r, "cpu_model"))
        ),
        format!(
            "build flags: A {page_flags} · B {flags}: {}",
            same(&page_flags, &flags)
        ),
        "figures: A's are the page's means as printed (rounded, no interval: the page prints \
         no trial's own figure), so no row gets a faster or slower verdict"
            .to_string(),
    ]
}
