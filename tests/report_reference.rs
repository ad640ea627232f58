//! `cyclescope report` against the published arm_1 pages. Every table line (`|` rows) and
//! heading of the regenerated hash-05 page, the method page and the summary's ICCS and hash
//! tables equals the published one byte for byte (the fixtures keep only those lines of the
//! published pages); the sentences are cyclescope's own, so they are checked for the facts
//! they must state — system, counter, plan, KAT status, record count — not for wording.
//! Pages of a real cyclescope run, and `--check`, are `report_run.rs`.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use cyclescope_core::report::method_page::MethodFacts;
use cyclescope_core::report::{Page, ReportOptions, build_pages};

use common::pages::{assert_states, svg_elements};

/// The table and heading lines of a published page (the fixtures keep only those).
fn published(rel: &str) -> String {
    let tables = common::harness_data().join(rel.replace(".md", ".tables.md"));
    std::fs::read_to_string(&tables).unwrap_or_else(|e| panic!("{}: {e}", tables.display()))
}

/// The table and heading lines of one of our pages, to compare with `published`.
fn tables(page: &str) -> String {
    page.lines()
        .filter(|l| l.starts_with('|') || l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The lines that are neither table nor heading: the page's own words.
fn prose(page: &str) -> String {
    page.lines()
        .filter(|l| !l.starts_with('|') && !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
}

fn arm_1_options() -> ReportOptions {
    ReportOptions {
        system: Some("arm_1".into()),
        side_dir: Some(common::harness_data().join("performance")),
        candidates: Some(common::reference_dir().join("candidates.csv")),
        method_facts: None,
        figures: false,
        baseline: None,
        published: None,
    }
}

fn page<'a>(pages: &'a [Page], rel: &str) -> &'a str {
    &pages
        .iter()
        .find(|p| p.path == Path::new(rel))
        .unwrap_or_else(|| panic!("no page {rel}"))
        .text
}

#[test]
fn candidate_page_tables_are_the_published_ones_and_its_words_state_the_facts() {
    let pages = build_pages(&common::arm_1(), &arm_1_options()).unwrap();
    let ours = page(&pages, "hash-05/perf_arm_1.md");
    assert_eq!(tables(ours), published("hash-05/perf_arm_1.md"));
    assert_states(
        &prose(ours),
        &[
            "system arm_1",
            "ngcc-harness campaign",
            "`hash-05/kat.sha256`",
            "NICCS ARM self-assessment guide",
            "- Parameter sets: `uHash-512`, `uHash-768`, `uHash-1024`",
            "`performance/data/arm_1/`",
        ],
    );
    assert!(
        !pages.iter().any(|p| p.path.starts_with("iccs")),
        "the ICCS helpers get no candidate page"
    );
}

#[test]
fn side_files_default_to_the_harness_tree_above_the_dataset() {
    let opts = ReportOptions {
        side_dir: None,
        ..arm_1_options()
    };
    let pages = build_pages(&common::arm_1(), &opts).unwrap();
    assert_eq!(
        tables(page(&pages, "hash-05/perf_arm_1.md")),
        published("hash-05/perf_arm_1.md")
    );
}

/// Facts of the full arm_1 campaign that the excerpt dataset cannot show: 2746 records (the
/// excerpt has 120), the deferred instances on CPU 6, and the profiler's tick counter.
fn full_campaign_facts() -> MethodFacts {
    MethodFacts {
        records: 2746,
        cores: BTreeSet::from([2, 3, 6, 7]),
        shard_cores: BTreeSet::from([2, 3, 7]),
        deferred: vec![
            "sign-30 TRINE-512-Balanced".into(),
            "sign-30 TRINE-512-ShortSig".into(),
            "sign-32 UVW-512".into(),
        ],
        tick: Some(("cntvct_el0".into(), 19.2e6)),
    }
}

/// What every arm_1 method page must say, whichever facts it was given: the system, the
/// counter, the clock control, the builds, the KAT status and the plan of campaign.json.
const METHOD_FACTS: [&str; 14] = [
    "system arm_1",
    "Qualcomm Snapdragon X Elite X1E-78-100",
    "a single Qualcomm Oryon core, CPU 2, fixed 2.71 GHz",
    "`perf_event_open`",
    "`CLOCK_MONOTONIC_RAW`",
    "95 %",
    "`-std=c99 -Wpedantic -Wall -Wextra -O2`",
    "KAT status of the timed instances: 15 PASS.",
    "5 trials",
    "about 0.5 s",
    "at least 100 calls",
    "longer than 5 minutes",
    "more than 60 s",
    "[summary](summary_arm_1.md)",
];

#[test]
fn method_page_headings_are_the_published_ones_and_its_words_state_the_full_campaign() {
    let opts = ReportOptions {
        method_facts: Some(full_campaign_facts()),
        ..arm_1_options()
    };
    let pages = build_pages(&common::arm_1(), &opts).unwrap();
    let ours = page(&pages, "performance/method_arm_1.md");
    assert_eq!(tables(ours), published("performance/method_arm_1.md"));
    let words = prose(ours);
    assert_states(&words, &METHOD_FACTS);
    assert_states(
        &words,
        &[
            "Each of the 2746 timing records",
            "`cntvct_el0`, running at 19.2 MHz",
            "about 52 ns",
            "cores 2, 3, 6, 7 in parallel",
            "Cores 2, 3, 7 shared the instances out",
            "(sign-30 TRINE-512-Balanced, sign-30 TRINE-512-ShortSig, sign-32 UVW-512)",
        ],
    );
}

#[test]
fn method_page_from_the_excerpt_states_what_the_excerpt_holds() {
    let pages = build_pages(&common::arm_1(), &arm_1_options()).unwrap();
    let ours = page(&pages, "performance/method_arm_1.md");
    assert_eq!(tables(ours), published("performance/method_arm_1.md"));
    let words = prose(ours);
    assert_states(&words, &METHOD_FACTS);
    assert_states(
        &words,
        &[
            "Each of the 120 timing records",
            "cores 2, 3, 7 in parallel, the instances shared out among them",
        ],
    );
    // Without profile records there is no tick counter to name, and no deferred instance.
    assert!(!words.contains("tick counter is"), "{words}");
    assert!(!words.contains("another core"), "{words}");
}

/// The lines of `text` from `heading` up to the next `## ` heading.
fn section(text: &str, heading: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| *l != heading)
        .take_while(|l| *l == heading || !l.starts_with("## "))
        .map(str::to_string)
        .collect()
}

#[test]
fn iccs_helpers_table_is_the_published_one() {
    let pages = build_pages(&common::arm_1(), &arm_1_options()).unwrap();
    let summary = page(&pages, "performance/summary_arm_1.md");
    let ours = section(&tables(summary), "## ICCS hash helpers");
    let theirs = section(
        &published("performance/summary_arm_1.md"),
        "## ICCS hash helpers",
    );
    // Heading, header, rule, sm3hash, 3 × pseudohash, 8 × pseudoXOF.
    assert_eq!(theirs.len(), 15);
    assert_eq!(ours, theirs);
    let words = section(summary, "## ICCS hash helpers").join("\n");
    assert_states(
        &prose(&words),
        &["`api/auxfunc.c`", "reference flags", "S1–S8"],
    );
}

#[test]
fn summary_hash_table_lines_are_the_published_ones() {
    let pages = build_pages(&common::arm_1(), &arm_1_options()).unwrap();
    let summary = page(&pages, "performance/summary_arm_1.md");
    let published = published("performance/summary_arm_1.md");
    let ours = section(&tables(summary), "## Hash functions");
    let theirs = section(&published, "## Hash functions");
    // The excerpt holds hash-05 only: heading, header and rule as published, then exactly the
    // published hash-05 rows in their order.
    let hash_05: Vec<String> = theirs
        .iter()
        .filter(|l| l.starts_with("| [hash-05]"))
        .cloned()
        .collect();
    assert_eq!(hash_05.len(), 3);
    assert_eq!(ours[..3], theirs[..3]);
    assert_eq!(ours[3..], hash_05[..]);
    // Every heading we write is a published one, in the published order.
    let headings = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.starts_with('#'))
            .map(str::to_string)
            .collect()
    };
    let (ours, theirs) = (headings(summary), headings(&published));
    assert_eq!(
        ours,
        [
            "# Performance — AArch64, system arm_1",
            "## ICCS hash helpers",
            "## Hash functions"
        ]
    );
    let mut rest = theirs.iter();
    assert!(ours.iter().all(|h| rest.any(|t| t == h)), "{theirs:?}");
    assert_states(
        &prose(summary),
        &[
            "system arm_1",
            "one Qualcomm Oryon core, fixed 2.71 GHz",
            "[method and limitations](method_arm_1.md)",
            "`pseudoXOF`",
            "The ratios divide by the `pseudoXOF` records of candidate `iccs`",
        ],
    );
}

#[test]
fn figures_are_drawn_next_to_the_pages_and_linked_below_their_tables() {
    let opts = ReportOptions {
        figures: true,
        ..arm_1_options()
    };
    let pages = build_pages(&common::arm_1(), &opts).unwrap();
    // The tables stay the published ones: the links are prose lines.
    let ours = page(&pages, "hash-05/perf_arm_1.md");
    assert_eq!(tables(ours), published("hash-05/perf_arm_1.md"));
    assert!(
        ours.contains("- [cycles per byte against message length](figures/cpb_arm_1.svg)"),
        "{ours}"
    );
    let tmp = tempfile::tempdir().unwrap();
    cyclescope_core::report::write_pages(tmp.path(), &pages).unwrap();
    let els = svg_elements(&tmp.path().join("hash-05/figures/cpb_arm_1.svg"));
    let texts: Vec<&str> = els.iter().map(|(_, t)| t.as_str()).collect();
    // Three uHash widths and the three pseudoXOF of the same widths, each a named line.
    for name in [
        "uHash-512",
        "uHash-768",
        "uHash-1024",
        "pseudoXOF-512 (baseline)",
        "pseudoXOF-768 (baseline)",
        "pseudoXOF-1024 (baseline)",
    ] {
        assert!(texts.contains(&name), "{name} not in {texts:?}");
    }
    let lines = els.iter().filter(|(t, _)| t == "polyline").count();
    assert!(lines >= 6, "{lines} polylines");
    // Both axes are named and labelled with the pages' number formats.
    assert!(texts.contains(&"message length (bytes)") && texts.contains(&"cycles per byte"));
    assert!(
        texts.iter().any(|t| *t == "1 KiB" || *t == "64 KiB"),
        "{texts:?}"
    );
    // Harness records carry no per-call histogram: no histogram figure is invented.
    assert!(
        !pages
            .iter()
            .any(|p| p.path.to_string_lossy().contains("hist_"))
    );
}
