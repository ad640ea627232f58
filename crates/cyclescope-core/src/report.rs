//! Report pages in the published layout (spec §6), shared by every frontend: the §4
//! performance table (`| instance | message | mean cycles | cycles/byte | mean time | MB/s |
//! n |`), cell by cell as `report.py` writes it, and — in the submodules — the candidate,
//! method and summary pages of a dataset. Numbers go through `format`. Never measures; reads
//! files only through the dataset, side-file and output paths handed to `page_set`.

pub(crate) mod candidate_page;
pub mod compare;
pub(crate) mod conformance_section;
pub(crate) mod dataset;
pub mod export;
pub mod figures;
pub(crate) mod host_view;
pub mod method_cyclescope;
pub mod method_page;
pub(crate) mod page_set;
pub(crate) mod profile_section;
pub(crate) mod published;
pub mod published_page;
mod ratio_table;
pub mod readback;
pub(crate) mod robust_section;
pub(crate) mod side_files;
pub(crate) mod summary_page;
pub(crate) mod sweep_section;

pub use dataset::{Dataset, ReportError};
pub use page_set::{Page, PageDifference, ReportOptions, build_pages, check_pages, write_pages};
pub use ratio_table::perf_table_with_ratio;

use crate::format;
use crate::measure::doubt::Doubt;
use crate::vocabulary::{JobKey, JobSummary};

/// The §4 header.
pub const PERF_HEADER: [&str; 7] = [
    "instance",
    "message",
    "mean cycles",
    "cycles/byte",
    "mean time",
    "MB/s",
    "n",
];

/// The §4 header of instruction counts (`--counter instructions`): per call and per byte,
/// exact; no time, since valgrind's is not the candidate's.
pub const INSTRUCTION_HEADER: [&str; 7] = [
    "instance",
    "message",
    "instructions/call",
    "instructions/byte",
    "mean time",
    "MB/s",
    "n",
];

/// The header of a table of `counter`'s figures.
pub fn perf_header(counter: crate::counter::Counter) -> [&'static str; 7] {
    match counter {
        crate::counter::Counter::Cycles => PERF_HEADER,
        crate::counter::Counter::Instructions => INSTRUCTION_HEADER,
    }
}

/// Instructions when every summary is an instruction count, else cycles.
pub fn counter_of<'a>(
    summaries: impl IntoIterator<Item = &'a JobSummary>,
) -> crate::counter::Counter {
    let mut all = summaries.into_iter().peekable();
    if all.peek().is_none() {
        return crate::counter::Counter::Cycles;
    }
    if all.all(|s| {
        s.cycle_source
            .is_some_and(|c| c.counter() == crate::counter::Counter::Instructions)
    }) {
        crate::counter::Counter::Instructions
    } else {
        crate::counter::Counter::Cycles
    }
}

/// One §4 row: a finished job's figures, or `failed` with its reason in the last column. The
/// mean carries its 95 % confidence interval when the record has one, and ` ⚠` when the
/// figure is doubtful (`doubt_notes` says why, under the table).
pub fn perf_cells(
    key: &JobKey,
    summary: Option<&JobSummary>,
    failure: Option<&str>,
) -> [String; 7] {
    let mut cells = perf_cells_unmarked(key, summary, failure);
    if summary.is_some_and(|s| s.doubts.iter().any(Doubt::of_figure)) {
        cells[2] += " ⚠";
    }
    cells
}

/// As `perf_cells`, without the ⚠ (for a table with its own mark column).
pub fn perf_cells_unmarked(
    key: &JobKey,
    summary: Option<&JobSummary>,
    failure: Option<&str>,
) -> [String; 7] {
    let label = format!("`{}`", key.label);
    let message = format!("{} B", key.input_bytes);
    match summary {
        Some(s) => {
            let ci = s.ci95_relative.map_or_else(String::new, ci_text);
            let exact = s.cycle_source.is_some_and(|c| c.is_exact());
            let mean = match s.mean_cycles {
                Some(c) if exact => format::int(Some(c)),
                Some(c) if s.measurements < 100 => {
                    format!("{}{ci} (n={})", format::int(Some(c)), s.measurements)
                }
                Some(c) => format!("{}{ci}", format::int(Some(c))),
                None => format!("{}{ci}", format::time(s.mean_seconds)),
            };
            let cpb = s.mean_cycles.map_or(format::MISSING.into(), |c| {
                format::cycles_per_byte(c, key.input_bytes)
            });
            // Under valgrind the time is valgrind's, not the candidate's: no figure.
            let (time, mbs) = if exact {
                (format::MISSING.to_string(), format::MISSING.to_string())
            } else {
                (
                    format::time(s.mean_seconds),
                    format!("{:.1}", s.throughput_mb_per_second),
                )
            };
            [
                label,
                message,
                mean,
                cpb,
                time,
                mbs,
                format!(
                    "{} ({} × {})",
                    s.measurements, s.trials, s.iterations_per_trial
                ),
            ]
        }
        None => [
            label,
            message,
            "failed".into(),
            format::MISSING.into(),
            format::MISSING.into(),
            format::MISSING.into(),
            failure.unwrap_or_default().to_string(),
        ],
    }
}

/// ` ±1.2 %`: the relative 95 % half-width (whole percent from 10 % up).
fn ci_text(relative: f64) -> String {
    let pct = 100.0 * relative;
    if pct >= 10.0 {
        format!(" ±{pct:.0} %")
    } else {
        format!(" ±{pct:.1} %")
    }
}

/// The lines that explain each ⚠ of a §4 table, one per doubt about a figure:
/// `⚠ `label` 1024 B: <reason>`.
pub fn doubt_notes<'a>(
    rows: impl IntoIterator<Item = (&'a JobKey, &'a JobSummary)>,
) -> Vec<String> {
    rows.into_iter()
        .flat_map(|(k, s)| {
            s.doubts
                .iter()
                .filter(|d| d.of_figure())
                .map(move |d| format!("⚠ `{}` {} B: {}", k.label, k.input_bytes, d.text()))
        })
        .collect()
}

/// One line per job timed at other buffer layouts (`run --layouts`): the lowest, median and
/// highest figure across them beside the guide's, in the loop counter's units.
pub fn layout_notes<'a>(
    rows: impl IntoIterator<Item = (&'a JobKey, &'a JobSummary)>,
) -> Vec<String> {
    rows.into_iter()
        .filter_map(|(k, s)| {
            let l = s.layouts.as_ref()?;
            let doubt = if l.disturbed_trials > 0 {
                format!(
                    " ⚠ {} of {} layout trials disturbed (preempted or on a slow clock): measure \
                     again on a quiet CPU",
                    l.disturbed_trials, l.trials
                )
            } else {
                String::new()
            };
            Some(format!(
                "layouts `{}` {} B: {} / {} / {} cycles/call, lowest / median / highest of {} \
                 message and digest offsets (the guide's layout: {}){doubt}",
                k.label,
                k.input_bytes,
                format::int(Some(l.min)),
                format::int(Some(l.median)),
                format::int(Some(l.max)),
                l.offsets.len(),
                format::int(s.mean_cycles),
            ))
        })
        .collect()
}

/// The KAT verdict beside the instance of a row timed without a passing KAT (`` `X` NOKAT ``,
/// `` `X` FAIL ``), for the tables `run` and the workbench print: a figure of unverified
/// output never reads like a verified one.
pub fn mark_kat(cells: &mut [String; 7], summary: Option<&JobSummary>) {
    if let Some(s) = summary.filter(|s| !s.kat.is_pass()) {
        cells[0] += &format!(" {}", s.kat);
    }
}

/// One line per row timed without a passing KAT, under the table.
pub fn kat_notes<'a>(rows: impl IntoIterator<Item = (&'a JobKey, &'a JobSummary)>) -> Vec<String> {
    rows.into_iter()
        .filter(|(_, s)| !s.kat.is_pass())
        .map(|(k, s)| {
            format!(
                "KAT {} `{}` {} B: timed without a passing KAT (--allow-kat-fail): the figure is of unverified output",
                s.kat, k.label, k.input_bytes
            )
        })
        .collect()
}

/// The §4 table in Markdown (header, rule, one line per row); empty without rows.
pub fn perf_table<'a>(rows: impl IntoIterator<Item = [String; 7]> + 'a) -> String {
    perf_table_of(crate::counter::Counter::Cycles, rows)
}

/// [`perf_table`] with the header of `counter`'s figures (instructions/call and /byte for an
/// instruction count).
pub fn perf_table_of<'a>(
    counter: crate::counter::Counter,
    rows: impl IntoIterator<Item = [String; 7]> + 'a,
) -> String {
    let header = perf_header(counter);
    let mut out = String::new();
    for (i, cells) in rows.into_iter().enumerate() {
        if i == 0 {
            out = format!(
                "| {} |\n|{}\n",
                header.join(" | "),
                "---|".repeat(header.len())
            );
        }
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

/// What measured the figures, from a record's environment and counter: e.g. "cycles: tsc
/// (reference cycles, 2.596 GHz), CPU 1 (AMD EPYC), virtualized". Every table of measured
/// figures carries this line.
pub fn measured_by(
    env: &serde_json::Map<String, serde_json::Value>,
    cycle_source: &str,
    reference_cycles: bool,
) -> String {
    let get_f = |k: &str| env.get(k).and_then(serde_json::Value::as_f64);
    let counted =
        crate::counter::CycleSource::from_name(cycle_source).is_some_and(|c| c.is_exact());
    let what = if counted { "instructions" } else { "cycles" };
    let kind = if counted {
        format!(
            "the candidate's instructions, counted exactly under valgrind; cycle estimate {}",
            crate::counter::callgrind::ESTIMATE_FORMULA
        )
    } else if reference_cycles {
        match get_f("reference_clock_hz") {
            Some(hz) => format!("reference cycles at {:.3} GHz", hz / 1e9),
            None => "reference cycles".to_string(),
        }
    } else {
        match get_f("core_clock_hz") {
            Some(hz) => format!("core cycles, clock {:.3} GHz", hz / 1e9),
            None => "core cycles".to_string(),
        }
    };
    let cpu = env.get("cpu_number").and_then(serde_json::Value::as_u64);
    let model = env
        .get("cpu_model")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("unknown CPU");
    let model = crate::sanitize::markdown(model);
    let mut text = format!("{what}: {cycle_source} ({kind})");
    if let Some(cpu) = cpu {
        text += &format!(", CPU {cpu} ({model})");
    }
    // The core type (its PMU), so a hybrid CPU's P- and E-core figures are never mistaken.
    if let Some(core_type) = core_type(env) {
        text += &format!(" on {}", crate::sanitize::markdown(core_type));
    }
    if env.get("virtualized").and_then(serde_json::Value::as_bool) == Some(true) {
        text += ", virtualized";
    }
    text
}

/// The core type a record's figures were counted on (`host::pmu`), when the host had a PMU.
pub fn core_type(env: &serde_json::Map<String, serde_json::Value>) -> Option<&str> {
    env.get("core_type").and_then(serde_json::Value::as_str)
}

#[cfg(test)]
mod tests;
