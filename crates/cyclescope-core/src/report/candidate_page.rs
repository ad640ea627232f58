//! The hash candidate page `<cand>/perf_<ID>.md` (spec §6): basic information, environment,
//! KAT, the §4 performance table, resource use and the raw evidence index. Headings and tables
//! are those of the harness's `report.py`, cell for cell; the sentences between them are
//! cyclescope's own and say who measured what. Never reads files; numbers go through `format`.

use super::dataset::InstanceEvidence;
use super::host_view::HostView;
use super::side_files::{CandidateInfo, LabelNote};
use crate::format;
use crate::sanitize::{markdown, markdown_code};
use crate::vocabulary::JobKey;

const HARNESS: &str = "https://github.com/ngcc-dev/ngcc-harness";

/// One candidate's page. `algorithm` is the name to print when `info` has none.
pub(crate) fn render(
    host: &HostView,
    candidate: &str,
    info: Option<&CandidateInfo>,
    algorithm: &str,
    instances: &[InstanceEvidence],
    kat_issues: &[LabelNote],
) -> String {
    let id = &host.system_id;
    let algorithm = markdown(info.map_or(algorithm, |i| i.algorithm.as_str()));
    let mut l: Vec<String> = Vec::new();
    l.push(format!(
        "# {candidate} {algorithm} — performance on {} (system {id})",
        host.arch_title()
    ));
    l.push(String::new());
    let mut crumb = format!(
        "[Performance {id}](../performance/summary_{id}.md) › `{candidate}` · [method](../performance/method_{id}.md)"
    );
    if let Some(i) = info {
        crumb += &format!(" · [NICCS page]({})", i.url);
    }
    l.push(crumb);
    l.push(String::new());
    let who = if host.harness {
        "the ngcc-harness campaign"
    } else {
        "cyclescope"
    };
    l.push(format!(
        "Sections laid out after items (1)–(7) of §3.5 in the NICCS {} self-assessment guide. The figures were taken by {who} on system {id}; they are not the submitters' own assessment.",
        host.guide()
    ));
    l.push(String::new());
    basic_information(&mut l, &algorithm, instances);
    l.push("## 2. Assessment environment".into());
    l.push(String::new());
    l.push("| item | value |".into());
    l.push("|---|---|".into());
    for (item, value) in host.environment_rows() {
        l.push(format!("| {item} | {value} |"));
    }
    l.push(String::new());
    kat_section(&mut l, host, candidate, instances, kat_issues);
    performance(&mut l, instances);
    resources(&mut l, instances);
    evidence(&mut l, host, instances);
    l.join("\n") + "\n"
}

fn basic_information(l: &mut Vec<String>, algorithm: &str, instances: &[InstanceEvidence]) {
    let mut versions: Vec<&str> = Vec::new();
    for i in instances {
        let v = match i.variant.as_str() {
            "optimized-avx2" => "optimized (AVX2)",
            v if v.starts_with("optimized") => "optimized",
            _ => "reference",
        };
        if !versions.contains(&v) {
            versions.push(v);
        }
    }
    let sets: Vec<String> = instances.iter().map(|i| format!("`{}`", i.label)).collect();
    l.push("## 1. Basic information".into());
    l.push(String::new());
    l.push("- Category: cryptographic hash algorithm; function: hash".into());
    l.push(format!("- Algorithm: {algorithm}"));
    l.push(format!(
        "- Implementation versions measured: {}",
        versions.join(", ")
    ));
    l.push(format!("- Parameter sets: {}", sets.join(", ")));
    l.push(String::new());
}

fn kat_section(
    l: &mut Vec<String>,
    host: &HostView,
    candidate: &str,
    instances: &[InstanceEvidence],
    kat_issues: &[LabelNote],
) {
    l.push("## 3. Functional testing (KAT)".into());
    l.push(String::new());
    if host.harness {
        l.push(format!(
            "Before any timing, the KAT output of every library was hashed and compared with the digests the harness lists in `{candidate}/kat.sha256`; the KAT column gives the result."
        ));
    } else {
        l.push("Before any timing, every library ran the official KAT procedure (`KAT_CryptHash`) in a worker process, and its output was compared with the `kat.sha256` manifest wherever one exists; the KAT column gives the result.".into());
    }
    l.push(String::new());
    l.push("| instance | build flags | KAT |".into());
    l.push("|---|---|---|".into());
    let mut footnotes: Vec<String> = Vec::new();
    for i in instances {
        let mut kat = super::conformance_section::kat_cell(i);
        if let Some(note) = kat_issues.iter().find(|n| n.applies(candidate, &i.label)) {
            footnotes.push(note.text.clone());
            kat += &format!(" [^{}]", footnotes.len());
        }
        // A published profile by its name, any other build with its flags (a -O0 page
        // says -O0), and the compiler a cyclescope run knows built it.
        let mut built = super::readback::build_text(&i.flags, &i.build_flags);
        if let Some(cc) = &i.compiler {
            built += &format!(" ({cc})");
        }
        l.push(format!("| `{}` | {} | {kat} |", i.label, markdown(&built)));
    }
    l.push(String::new());
    for (n, text) in footnotes.iter().enumerate() {
        l.push(format!("[^{}]: {text}", n + 1));
        l.push(String::new());
    }
    super::conformance_section::summary(l, instances);
    let unchecked: Vec<String> = instances
        .iter()
        .filter(|i| !i.kat.is_pass())
        .map(|i| {
            format!(
                "`{}` ({})",
                i.label,
                super::conformance_section::kat_cell(i)
            )
        })
        .collect();
    if !unchecked.is_empty() {
        l.push(format!(
            "⚠ Timed without a passing KAT: {}. NOKAT means no manifest entry existed to check the output against, so these figures belong to output nobody verified.",
            unchecked.join(", ")
        ));
        l.push(String::new());
    }
}

fn performance(l: &mut Vec<String>, instances: &[InstanceEvidence]) {
    l.push("## 4. Performance".into());
    l.push(String::new());
    let rows = instances.iter().flat_map(|i| {
        i.records.iter().map(|(_, r)| {
            let key = JobKey {
                candidate: r.candidate.clone(),
                label: r.label.clone(),
                input_bytes: r.input_bytes,
            };
            let summary = r.summary();
            let failure = r.cyclescope.as_ref().and_then(|a| a.failure.clone());
            if r.status.is_complete() {
                super::perf_cells(&key, Some(&summary), None)
            } else {
                let why = failure.map_or_else(|| r.status.to_string(), |f| f.to_string());
                super::perf_cells(&key, None, Some(&why))
            }
        })
    });
    let counter = super::counter_of(
        instances
            .iter()
            .flat_map(|i| i.records.iter())
            .map(|(_, r)| r.summary())
            .collect::<Vec<_>>()
            .iter(),
    );
    l.push(super::perf_table_of(counter, rows).trim_end().to_string());
    l.push(String::new());
    // Why a figure carries ⚠ (cyclescope's doubt rule), one line each.
    let summaries: Vec<(JobKey, crate::vocabulary::JobSummary)> = instances
        .iter()
        .flat_map(|i| i.records.iter().map(|(_, r)| r))
        .filter(|r| r.status.is_complete())
        .map(|r| (r.job_key(), r.summary()))
        .collect();
    let layouts = super::layout_notes(summaries.iter().map(|(k, s)| (k, s)));
    for note in super::doubt_notes(summaries.iter().map(|(k, s)| (k, s)))
        .into_iter()
        .chain(layouts)
    {
        l.push(note);
        l.push(String::new());
    }
    if let Some(t) = super::robust_section::table(summaries.iter().map(|(k, s)| (k, s))) {
        l.push(t.trim_end().to_string());
        l.push(String::new());
    }
}

fn resources(l: &mut Vec<String>, instances: &[InstanceEvidence]) {
    l.push("## 5. Resource consumption".into());
    l.push(String::new());
    l.push("All three memory columns are upper bounds that stand in for the algorithm's memory: the static figure adds up the library's loadable ELF segments, and the RSS figures belong to the whole measuring process, driver and libc included (peak = VmHWM).".into());
    l.push(String::new());
    l.push("| instance | operation | static: ELF image (bytes) | baseline RSS | peak RSS |".into());
    l.push("|---|---|---|---|---|".into());
    for i in instances {
        let elf = i
            .elf_load_bytes
            .map_or(format::MISSING.to_string(), |b| b.to_string());
        for (_, r) in &i.records {
            l.push(format!(
                "| `{}` | hash_{} | {elf} | {} | {} |",
                i.label,
                r.input_bytes,
                format::kib(r.baseline_rss_bytes),
                format::kib(r.peak_rss_bytes)
            ));
        }
    }
    l.push(String::new());
}

fn evidence(l: &mut Vec<String>, host: &HostView, instances: &[InstanceEvidence]) {
    l.push("## 7. Raw evidence index".into());
    l.push(String::new());
    if host.harness {
        l.push(format!(
            "The files lie under `performance/data/{}/` of the [harness]({HARNESS}). A timing record holds the commands that produced it, the host environment and every trial.",
            host.system_id
        ));
    } else {
        l.push("The files lie in the cyclescope run directory. A timing record holds the commands that produced it, the host environment and every trial.".into());
    }
    l.push(String::new());
    l.push("| instance | item | file |".into());
    l.push("|---|---|---|".into());
    for i in instances {
        if let Some(log) = &i.kat_log {
            let sha: String = i
                .kat_log_sha256
                .as_deref()
                .unwrap_or(format::MISSING)
                .chars()
                .take(16)
                .collect();
            l.push(format!(
                "| `{}` | KAT log (sha256 {}) | {} |",
                i.label,
                markdown_code(&format!("{sha}…")),
                markdown_code(log)
            ));
        }
        let mut ops: Vec<(String, String)> = i
            .records
            .iter()
            .map(|(p, r)| {
                (
                    format!("hash_{}", r.input_bytes),
                    p.to_string_lossy().into_owned(),
                )
            })
            .collect();
        ops.sort();
        for (op, path) in ops {
            l.push(format!(
                "| `{}` | timing {op} | {} |",
                i.label,
                markdown_code(&path)
            ));
        }
    }
    l.push(String::new());
    if host.harness {
        l.push(format!("Produced by the harness's `performance/campaign.py`, its C driver `performance/ngcc_perf.c` and its profiler `performance/hashprof/` ([repository]({HARNESS}))."));
    } else {
        l.push(format!(
            "Measured with cyclescope {}.",
            env!("CARGO_PKG_VERSION")
        ));
    }
    l.push(String::new());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A published record, and the same record with its first kept trial run at half the
    /// fixed clock (a disturbed trial the retries did not get rid of).
    fn evidence(disturb: bool) -> InstanceEvidence {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/reference/harness-data/performance/data/arm_1");
        let (path, mut rec) = crate::record::run_dir::list_records(&dir)
            .into_iter()
            .next()
            .expect("a published record");
        if disturb {
            let clock = crate::host::fixed_clock_hz(&rec.environment).expect("a fixed clock");
            let t = &mut rec.trials[0];
            t.cycles = (0.5 * clock * t.seconds) as u64;
        }
        InstanceEvidence {
            candidate: rec.candidate.clone(),
            label: rec.label.clone(),
            variant: "reference".into(),
            flags: "guide".into(),
            build_flags: String::new(),
            compiler: None,
            kat: rec.kat.clone(),
            digest_bits: None,
            elf_load_bytes: None,
            kat_log: None,
            kat_log_sha256: None,
            records: vec![(path, rec)],
        }
    }

    #[test]
    fn a_doubtful_figure_is_marked_in_the_table_and_explained_under_it() {
        let mut clean = Vec::new();
        performance(&mut clean, &[evidence(false)]);
        assert!(!clean.iter().any(|l| l.contains('⚠')), "{clean:#?}");
        let mut marked = Vec::new();
        performance(&mut marked, &[evidence(true)]);
        let text = marked.join("\n");
        let marked: Vec<&str> = text.lines().collect();
        let row = marked
            .iter()
            .find(|l| l.starts_with("| `"))
            .expect("a table row");
        assert!(
            row.split(" | ").nth(2).is_some_and(|c| c.ends_with(" ⚠")),
            "{row}"
        );
        let note = marked
            .iter()
            .find(|l| l.starts_with("⚠ `"))
            .unwrap_or_else(|| panic!("no note: {marked:#?}"));
        assert!(
            note.contains("1 kept trial(s) disturbed after 3 attempts (clock"),
            "{note}"
        );
    }
}
