//! `cyclescope report` against the published arm_1 pages. Every table line (`|` rows) and
//! heading of the regenerated hash-05 page, the method page and the summary's ICCS and hash
//! tables equals the published one byte for byte (the fixtures keep only those lines of the
//! published pages); the sentences are cyclescope's own, so they are checked for the facts
//! they must state — system, counter, plan, KAT status, record count — not for wording.
//! Also: pages of a real cyclescope run, and `--check`.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use cyclescope_core::report::method_page::MethodFacts;
use cyclescope_core::report::{Page, ReportOptions, build_pages};

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

fn assert_states(text: &str, facts: &[&str]) {
    for fact in facts {
        assert!(text.contains(fact), "{fact:?} missing from:\n{text}");
    }
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

fn cyclescope(args: &[&str]) -> std::process::Output {
    common::cyclescope()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .unwrap()
}

fn deps_lib(name: &str) -> String {
    let exe = Path::new(env!("CARGO_BIN_EXE_cyclescope"));
    exe.parent()
        .unwrap()
        .join("deps")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn report_renders_pages_of_a_cyclescope_run_and_checks_them() {
    let tmp = tempfile::tempdir().unwrap();
    let quick = [
        "--lengths",
        "32,1024",
        "--trial-target",
        "0.01",
        "--trials",
        "2",
    ];
    // The ICCS helper alone: no candidate page, a row of the summary's ICCS table.
    let iccs_run = tmp.path().join("iccs-run");
    let iccs_s = iccs_run.to_str().unwrap();
    let mut args = vec!["run", "pseudoXOF-512"];
    args.extend(quick);
    args.extend(["--out", iccs_s, "--allow-unfixed-host"]);
    let o = cyclescope(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let iccs_pages = tmp.path().join("iccs-pages");
    let o = cyclescope(&["report", iccs_s, "--out", iccs_pages.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dirs: Vec<_> = std::fs::read_dir(&iccs_pages)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        dirs,
        ["performance"],
        "the ICCS helpers get no candidate page"
    );
    let summary_path = std::fs::read_dir(iccs_pages.join("performance"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("summary_")
        })
        .unwrap();
    let summary = std::fs::read_to_string(summary_path).unwrap();
    assert!(summary.contains("## ICCS hash helpers"), "{summary}");
    assert!(summary.contains("| `pseudoXOF` | 512 | "), "{summary}");
    // Our pages describe what cyclescope did, not the harness's C builds and relinking.
    assert!(summary.contains("as bundled with cyclescope"), "{summary}");
    assert!(summary.contains("Measured by "), "{summary}");
    // The helpers' figures hang off the summary: cycles/byte and one histogram per job, each
    // a well-formed SVG with its bars and the calls beyond the drawn body counted.
    let figures = iccs_pages.join("performance/figures");
    let mut names: Vec<String> = std::fs::read_dir(&figures)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(names[0].starts_with("cpb_"), "{names:?}");
    for name in &names[1..] {
        assert!(name.starts_with("hist_pseudoXOF-512_"), "{name}");
        assert!(summary.contains(&format!("(figures/{name})")), "{summary}");
        let els = svg_elements(&figures.join(name));
        let caption = &els.iter().find(|(t, _)| t == "text").unwrap().1;
        assert!(
            caption.starts_with("pseudoXOF-512 @ ") && caption.contains(" below, "),
            "{caption}"
        );
        // The bins are the blue rectangles: at most 60, each a whole number of counter steps
        // wide, so how many depends on the spread the machine gave.
        let svg = std::fs::read_to_string(figures.join(name)).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let bars = doc
            .descendants()
            .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some("#0000FF"))
            .count();
        assert!((1..=60).contains(&bars), "{bars} bins:\n{svg}");
    }
    let method_path = summary_path_sibling(&iccs_pages, "method_");
    let method = std::fs::read_to_string(method_path).unwrap();
    // What was measured and how: records, counter, plan, KAT status.
    assert_states(
        &method,
        &[
            "- 2 records (2 complete). Counter: ",
            "loop counter",
            "timer overhead",
            "schedstat",
            "2 trials",
            "KAT status of the timed instances: 1 PASS",
        ],
    );
    for harness_only in ["-Wl,--wrap", "Key exchange", "OpenSSL"] {
        assert!(!method.contains(harness_only), "{harness_only}: {method}");
    }

    // An ad-hoc library without a KAT manifest is a candidate of its own.
    let run = tmp.path().join("run");
    let run_s = run.to_str().unwrap();
    let faulty = deps_lib("libfaulty.so");
    let mut args = vec![
        "run",
        "--lib",
        &faulty,
        "--label",
        "X-512",
        "--digest-bits",
        "512",
    ];
    args.extend(quick);
    args.extend(["--out", run_s, "--allow-unfixed-host", "--allow-kat-fail"]);
    let o = cyclescope(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let pages = tmp.path().join("pages");
    let pages_s = pages.to_str().unwrap();
    let o = cyclescope(&["report", run_s, "--out", pages_s]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The fixture library names its own candidate in ngcc_meta; any non-iccs one gets a page.
    let cand_dir = std::fs::read_dir(&pages)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| !p.ends_with("performance"))
        .expect("a candidate page folder");
    let cand_path = std::fs::read_dir(cand_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "md"))
        .unwrap();
    let summary = std::fs::read_to_string(
        pages.join("performance").join(
            cand_path
                .file_name()
                .unwrap()
                .to_string_lossy()
                .replace("perf_", "summary_"),
        ),
    )
    .unwrap();
    assert!(summary.contains("`X-512` ⚠ KAT NOKAT"), "{summary}");
    let cand = std::fs::read_to_string(&cand_path).unwrap();
    assert!(
        cand.contains("| instance | message | mean cycles | cycles/byte | mean time | MB/s | n |")
    );
    assert!(cand.contains("| `X-512` | 32 B | "), "{cand}");
    assert!(cand.contains("| `X-512` | 1024 B | "), "{cand}");
    // The KAT row names the build (and the compiler the library's KAT log names): an ad-hoc
    // library's is not known.
    assert!(
        cand.lines()
            .any(|l| l.starts_with("| `X-512` | unknown") && l.ends_with("| NOKAT |")),
        "{cand}"
    );
    assert!(
        cand.contains("⚠ Timed without a passing KAT: `X-512` (NOKAT)"),
        "{cand}"
    );

    let o = cyclescope(&["report", run_s, "--out", pages_s, "--check"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let path = cand_path;
    let edited = cand.replacen("## 4. Performance", "## 4. Performance (edited)", 1);
    std::fs::write(&path, edited).unwrap();
    let o = cyclescope(&["report", run_s, "--out", pages_s, "--check"]);
    assert_eq!(o.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let line = cand.lines().position(|l| l == "## 4. Performance").unwrap() + 1;
    assert!(
        stdout.contains(&format!("{} line {line}:", path.display())),
        "{stdout}"
    );
}

/// The page under `<pages>/performance/` whose name starts with `prefix`.
fn summary_path_sibling(pages: &std::path::Path, prefix: &str) -> std::path::PathBuf {
    std::fs::read_dir(pages.join("performance"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix))
        })
        .unwrap()
}

/// The SVG elements of a figure, parsed as XML (a malformed file fails here).
fn svg_elements(path: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc =
        roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.is_element())
        .map(|n| {
            let text = n.text().unwrap_or_default().trim().to_string();
            (n.tag_name().name().to_string(), text)
        })
        .collect()
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
