//! What is written of a nonconforming library, end to end through the real binary: timed
//! anyway (`--allow-kat-fail`), its record, the results table and the pages say so; and
//! `build` records a Reference/Optimized pair that disagrees as NONCONFORM in `build.json`.
//! The checks themselves, fixture by fixture, are `tests/conformance.rs`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use common::conform::{fixtures, harness_tree};

fn run_in(dir: &Path, args: &[&str]) -> Output {
    common::cyclescope()
        .args(args)
        .current_dir(dir)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .output()
        .expect("running cyclescope")
}

#[test]
fn a_nonconforming_library_timed_anyway_says_so_in_its_record_table_and_page() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = harness_tree(tmp.path(), "unaligned");
    let runs = tmp.path().join("runs");
    let o = run_in(
        tmp.path(),
        &[
            "run",
            "--scan",
            tree.to_str().unwrap(),
            "--no-baselines",
            "--lengths",
            "32",
            "--trials",
            "2",
            "--trial-target",
            "0.01",
            "--allow-unfixed-host",
            "--allow-kat-fail",
            "--out",
            runs.to_str().unwrap(),
        ],
    );
    let text = common::output_text(&o);
    assert!(
        text.contains("done unaligned @ 32 B"),
        "timed with consent:\n{text}"
    );
    assert!(
        text.contains(
            "⚠ `unaligned`: KAT NONCONFORM (alignment): the figure is of unverified output"
        ),
        "the printed table's notes name the check:\n{text}"
    );
    let record = walk(&runs.join("records"))
        .into_iter()
        .find(|p| p.to_string_lossy().contains("unaligned"))
        .unwrap_or_else(|| panic!("no record of the fixture:\n{text}"));
    let rec: Value = serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
    assert_eq!(rec["kat"], "NONCONFORM");
    assert_eq!(rec["kat_not_passed"], true);
    let checks = rec["cyclescope"]["conformance"]["checks"]
        .as_array()
        .unwrap();
    let alignment = checks.iter().find(|c| c["check"] == "alignment").unwrap();
    assert_eq!(alignment["outcome"], "fail", "{alignment}");
    assert!(
        alignment["evidence"]["what"]
            .as_str()
            .unwrap()
            .contains("offset"),
        "{alignment}"
    );

    let pages = tmp.path().join("pages");
    let o = run_in(
        tmp.path(),
        &[
            "report",
            runs.to_str().unwrap(),
            "--out",
            pages.to_str().unwrap(),
            "--no-figures",
        ],
    );
    assert!(o.status.success(), "{}", common::output_text(&o));
    let page = walk(&pages)
        .into_iter()
        .find(|p| {
            p.to_string_lossy().contains("hash-90") && p.extension().is_some_and(|e| e == "md")
        })
        .unwrap_or_else(|| panic!("no candidate page in {}", pages.display()));
    let page = std::fs::read_to_string(page).unwrap();
    assert!(
        page.contains("| `unaligned` | ") && page.contains("| NONCONFORM (alignment) |"),
        "§3's KAT column names the check:\n{page}"
    );
    assert!(
        page.contains("- `unaligned`: ") && page.contains("alignment failed: "),
        "§3 summarises the checks:\n{page}"
    );
    assert!(
        page.contains("Timed without a passing KAT: `unaligned` (NONCONFORM (alignment))"),
        "the warning under the table names the check:\n{page}"
    );
}

/// Every file below `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn build_records_a_pair_that_disagrees_as_nonconform_in_build_json() {
    let tmp = tempfile::tempdir().unwrap();
    let src = fixtures().join("diverge");
    let tree = tmp.path().join("tree");
    let o = run_in(
        tmp.path(),
        &[
            "build",
            src.to_str().unwrap(),
            "--out",
            tree.to_str().unwrap(),
        ],
    );
    let text = common::output_text(&o);
    let doc = common::build::build_json(&tree);
    let kats: Vec<&Value> = doc["instances"]
        .as_object()
        .unwrap_or_else(|| panic!("no instances in build.json:\n{text}"))
        .values()
        .map(|i| &i["kat"])
        .collect();
    assert_eq!(kats.len(), 2, "{text}");
    assert!(kats.iter().all(|k| *k == "NONCONFORM"), "{kats:?}\n{text}");
    assert!(
        text.contains("differential"),
        "build names the check:\n{text}"
    );
}
