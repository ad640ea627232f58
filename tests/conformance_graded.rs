//! The two grades of the conformance checks, end to end through the real binary, on a library
//! that is right at its own width and ends its process with SIGFPE at a digest width of 0 bits
//! (`tests/fixtures/conform/zero_bits_fpe.c`, as two candidates the official evaluation
//! measured do): the KAT verdict stays the harness's PASS (exit 0) with the finding beside it
//! — on the KAT line, in `kat --json`, in the run's records, on a cached reuse and on the
//! pages — every blocking check still reports its own pass, and `run` measures it. The
//! fixtures that fail a blocking check stay NONCONFORM (`tests/conformance.rs`).

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use common::conform::harness_tree;

const NAME: &str = "zero_bits_fpe";

/// cyclescope in `dir`, its tuning journal (and so its KAT cache) under `dir/data`.
fn run_in(dir: &Path, args: &[&str]) -> Output {
    common::cyclescope()
        .args(args)
        .current_dir(dir)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .output()
        .expect("running cyclescope")
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

/// Asserts the crash at 0 bits is the one finding in `checks` (`{check, outcome, …}`
/// objects), and every blocking check passed (the two that need an oracle or `--full` skip).
fn only_the_crash_is_found(checks: &[Value], detail_of: impl Fn(&Value) -> String, ctx: &str) {
    assert_eq!(checks.len(), 11, "{ctx}");
    for c in checks {
        let word = c["outcome"].as_str().unwrap();
        match c["check"].as_str().unwrap() {
            "digest_length" => {
                assert_eq!(word, "finding", "{c}\n{ctx}");
                let detail = detail_of(c);
                assert!(
                    detail.contains("SIGFPE") && detail.contains("a digest width of 0 bits"),
                    "{detail}"
                );
            }
            "differential" | "long_message" => assert_eq!(word, "skipped", "{c}\n{ctx}"),
            _ => assert_eq!(word, "pass", "{c}\n{ctx}"),
        }
    }
}

#[test]
fn a_crash_at_a_zero_bit_digest_width_is_a_finding_and_the_library_is_measured() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let tree = harness_tree(dir, NAME);
    let scan = tree.to_str().unwrap();

    // `kat`: the harness's verdict, the finding beside it on the same line; exit 0.
    let o = run_in(dir, &["kat", "--out", "k1", "--scan", scan]);
    let text = common::output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    let line = String::from_utf8_lossy(&o.stdout)
        .lines()
        .find(|l| l.starts_with("RESULT "))
        .unwrap_or_else(|| panic!("no RESULT line:\n{text}"))
        .to_string();
    assert!(
        line.starts_with("RESULT hash-90 FIXH-256 PASS (finding, not blocking: digest_length: ")
            && line.contains("signal=SIGFPE")
            && line.contains("a digest width of 0 bits"),
        "{line}"
    );
    // The log keeps the harness's line byte for byte, and the outcome before it.
    let log = walk(&dir.join("k1/kat"))
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "log"))
        .unwrap_or_else(|| panic!("no KAT log:\n{text}"));
    let log = std::fs::read_to_string(log).unwrap();
    assert!(
        log.ends_with("\nRESULT hash-90 FIXH-256 PASS \n"),
        "the log's RESULT line is the harness's:\n{log}"
    );
    assert!(
        log.contains("conform  digest_length finding the worker ended (signal=SIGFPE)"),
        "{log}"
    );

    // `kat --json`: PASS, the finding in the checks and in `findings`.
    let o = run_in(dir, &["kat", "--json", "--out", "k2", "--scan", scan]);
    let text = common::output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    let objects: Vec<Value> = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("kat --json printed no JSON list ({e}):\n{text}"));
    let [obj] = objects.as_slice() else {
        panic!("one instance expected:\n{text}");
    };
    assert_eq!(obj["status"], "PASS", "{text}");
    only_the_crash_is_found(
        obj["conformance"].as_array().unwrap(),
        |c| c["detail"].as_str().unwrap().to_string(),
        &text,
    );
    assert_eq!(obj["findings"][0]["check"], "digest_length", "{obj}");

    // `run`: measured, the finding on its KAT line and in the record.
    let record_of = |out: &str| -> (String, Value) {
        let o = run_in(dir, &common::quick_scan_run(scan, out));
        let text = common::output_text(&o);
        assert_eq!(o.status.code(), Some(0), "{text}");
        assert!(text.contains(&format!("done {NAME} @ 32 B")), "{text}");
        let record = walk(&dir.join(out).join("records"))
            .into_iter()
            .find(|p| p.to_string_lossy().contains(NAME))
            .unwrap_or_else(|| panic!("no record of the fixture:\n{text}"));
        let rec: Value = serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
        (text, rec)
    };
    let (text, rec) = record_of("r1");
    let kat_line = |text: &str| -> String {
        text.lines()
            .find(|l| l.starts_with(&format!("KAT {NAME}: ")))
            .unwrap_or_else(|| panic!("no KAT line:\n{text}"))
            .to_string()
    };
    let first = kat_line(&text);
    assert!(
        first.starts_with(&format!(
            "KAT {NAME}: PASS (finding, not blocking: digest_length: "
        )) && first.contains("SIGFPE"),
        "{first}"
    );
    let checked = |rec: &Value, ctx: &str| {
        assert_eq!(rec["kat"], "PASS", "{ctx}");
        assert_eq!(rec["kat_not_passed"], false, "{ctx}");
        only_the_crash_is_found(
            rec["cyclescope"]["conformance"]["checks"]
                .as_array()
                .unwrap_or_else(|| panic!("no checks in the record:\n{rec}")),
            |c| c["evidence"]["what"].as_str().unwrap().to_string(),
            ctx,
        );
    };
    checked(&rec, &text);

    // Again with the same journal: the pass is reused, its finding with it.
    let (text, rec) = record_of("r2");
    let second = kat_line(&text);
    assert!(
        second.starts_with(&format!("KAT {NAME}: PASS cached from run "))
            && second.contains("(finding, not blocking: digest_length: "),
        "{second}"
    );
    checked(&rec, &text);

    // The pages: the harness's PASS in the KAT column, the finding in §3's summary.
    let o = run_in(dir, &["report", "r2", "--out", "pages", "--no-figures"]);
    assert!(o.status.success(), "{}", common::output_text(&o));
    let page = walk(&dir.join("pages"))
        .into_iter()
        .find(|p| {
            p.to_string_lossy().contains("hash-90") && p.extension().is_some_and(|e| e == "md")
        })
        .unwrap_or_else(|| panic!("no candidate page"));
    let page = std::fs::read_to_string(page).unwrap();
    assert!(
        page.contains(&format!(
            "- `{NAME}`: 8 pass, 1 finding (digest_length), 2 skipped"
        )) && page.contains("digest_length found (not blocking): the worker ended"),
        "§3 names the finding:\n{page}"
    );
    assert!(!page.contains("NONCONFORM"), "{page}");
}
