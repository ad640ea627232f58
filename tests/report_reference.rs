//! `cyclescope report` against the published arm_1 pages: the hash-05 candidate page
//! byte for byte, the method page (byte for byte given the facts only a full campaign has,
//! and otherwise differing in exactly those lines), the `## ICCS hash helpers` table, pages
//! of a real cyclescope run, and `--check`.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

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

fn arm_1_options() -> ReportOptions {
    ReportOptions {
        system: Some("arm_1".into()),
        side_dir: Some(common::harness_data().join("performance")),
        candidates: Some(common::reference_dir().join("candidates.csv")),
        method_facts: None,
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
fn candidate_page_is_byte_identical_to_the_published_one() {
    let pages = build_pages(&common::arm_1(), &arm_1_options()).unwrap();
    assert_eq!(
        tables(page(&pages, "hash-05/perf_arm_1.md")),
        published("hash-05/perf_arm_1.md")
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

#[test]
fn method_page_is_byte_identical_given_the_full_campaign_facts() {
    let opts = ReportOptions {
        method_facts: Some(full_campaign_facts()),
        ..arm_1_options()
    };
    let pages = build_pages(&common::arm_1(), &opts).unwrap();
    assert_eq!(
        tables(page(&pages, "performance/method_arm_1.md")),
        published("performance/method_arm_1.md")
    );
}

#[test]
fn method_page_from_the_excerpt_differs_only_in_the_facts_it_lacks() {
    let pages = build_pages(&common::arm_1(), &arm_1_options()).unwrap();
    let ours = page(&pages, "performance/method_arm_1.md");
    let theirs = published("performance/method_arm_1.md");
    let differing: Vec<(&str, &str)> = ours
        .lines()
        .zip(theirs.lines())
        .filter(|(a, b)| a != b)
        .collect();
    assert_eq!(ours.lines().count(), theirs.lines().count());
    assert_eq!(differing.len(), 3, "{differing:#?}");
    assert!(differing[0].0.contains("All 120 timing records"));
    assert!(
        differing[1]
            .1
            .contains("tick counter is `cntvct_el0` at 19.2 MHz")
    );
    assert!(
        differing[2]
            .0
            .starts_with("- Timing ran in parallel on cores 2, 3, 7.")
    );
}

fn section(text: &str, heading: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| *l != heading)
        .take_while(|l| *l == heading || !l.starts_with("## "))
        .map(str::to_string)
        .collect()
}

#[test]
fn iccs_helpers_table_reproduces_the_summary_section() {
    let pages = build_pages(&common::arm_1(), &arm_1_options()).unwrap();
    let ours = section(
        page(&pages, "performance/summary_arm_1.md"),
        "## ICCS hash helpers",
    );
    let theirs = section(
        &published("performance/summary_arm_1.md"),
        "## ICCS hash helpers",
    );
    assert_eq!(theirs.len(), 19);
    assert_eq!(ours, theirs);
}

#[test]
fn summary_hash_rows_match_the_published_hash_05_rows() {
    let pages = build_pages(&common::arm_1(), &arm_1_options()).unwrap();
    let summary = page(&pages, "performance/summary_arm_1.md");
    let published = published("performance/summary_arm_1.md");
    let rows: Vec<&str> = summary
        .lines()
        .filter(|l| l.starts_with("| [hash-05]"))
        .collect();
    assert_eq!(rows.len(), 3);
    for row in rows {
        assert!(published.lines().any(|l| l == row), "{row}");
    }
    let head: Vec<&str> = summary.lines().take(13).collect();
    let want: Vec<&str> = published.lines().take(13).collect();
    assert_eq!(head, want);
}

fn cyclescope(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cyclescope"))
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
    let method_path = summary_path_sibling(&iccs_pages, "method_");
    let method = std::fs::read_to_string(method_path).unwrap();
    for needle in ["loop counter", "timer overhead", "schedstat", "Counter: "] {
        assert!(method.contains(needle), "{needle}: {method}");
    }
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
        .next()
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
    assert!(cand.contains("| `X-512` | guide | NOKAT |"), "{cand}");
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
