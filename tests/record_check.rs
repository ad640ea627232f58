//! One record check for every tool (issue 20, item 6): a record with a malformed
//! `cyclescope.failure`, or whose `mean_cycles` (−5) does not follow from its trials, is
//! found by `validate`, refused by `report` and `merge`, and given no verdict by `compare`
//! (`invalid: …`, and `--fail-above` fails) — each naming the file with the same words.

mod common;

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use common::output_text as text;
use cyclescope_core::record::pyjson::to_py_json;
use cyclescope_core::sanitize::markdown;

fn cyclescope(dir: &Path, args: &[&str]) -> Output {
    common::cyclescope_in(dir, args)
}

fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
}

fn edit(path: &Path, change: impl FnOnce(&mut Value)) {
    let mut r: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    change(&mut r);
    std::fs::write(path, to_py_json(&r).unwrap()).unwrap();
}

/// cyclescope's additions as a run writes them, with `failure` as given.
fn additions(failure: &str) -> Value {
    json!({
        "version": "0.1.0", "mode": "guide", "cycle_source": "tsc",
        "reference_cycles": true, "per_call_source": "tsc", "timer_overhead_ticks": 40.0,
        "per_call": null, "per_call_by_process": [], "trial_spread": null,
        "preempted_ns_by_trial": [], "histogram_v2_base64": null, "elf_load_bytes": null,
        "measurement_cpu": 1, "worker": "cyclescope-worker", "tui_attached": false,
        "host_problems": [], "failure": failure
    })
}

/// validate's finding lines for `record` (the `FAIL ` prefix taken off).
fn findings_of(validate: &Output, record: &str) -> Vec<String> {
    String::from_utf8_lossy(&validate.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("FAIL "))
        .filter(|l| l.starts_with(record))
        .map(str::to_string)
        .collect()
}

const MALFORMED: &str = "records/hash-05/uHash-512__hash_32.json";
const NEGATIVE: &str = "records/hash-05/uHash-512__hash_1024.json";

#[test]
fn validate_report_and_compare_reject_the_same_records_in_the_same_words() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    copy_dir(&common::arm_1(), &a);
    copy_dir(&common::arm_1(), &b);
    edit(&b.join(MALFORMED), |r| {
        r["cyclescope"] = additions("garbage")
    });
    edit(&b.join(NEGATIVE), |r| r["mean_cycles"] = json!(-5.0));
    // A well-formed failure is no finding: the malformed one is what is refused.
    edit(&a.join(MALFORMED), |r| {
        r["cyclescope"] = additions("TIMEOUT: worker killed after 5 s")
    });

    let ok = cyclescope(t.path(), &["validate", "a"]);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok));
    let v = cyclescope(t.path(), &["validate", "b"]);
    assert_eq!(v.status.code(), Some(1), "{}", text(&v));
    let malformed = findings_of(&v, MALFORMED);
    assert_eq!(
        malformed,
        [format!(
            "{MALFORMED}: not a timing record: cyclescope.failure: a failure reads \
             `KIND: detail`, not \"garbage\""
        )],
        "{}",
        text(&v)
    );
    let negative = findings_of(&v, NEGATIVE);
    assert_eq!(negative.len(), 1, "{}", text(&v));
    assert!(
        negative[0].starts_with(&format!("{NEGATIVE}: mean_cycles = Some(-5.0), recomputed")),
        "{}",
        text(&v)
    );
    let both = [&malformed[0], &negative[0]];

    // report refuses the dataset, naming each record with validate's words.
    let r = cyclescope(t.path(), &["report", "b", "--out", "pages"]);
    assert_eq!(r.status.code(), Some(2), "{}", text(&r));
    assert!(text(&r).contains("2 file(s) under records/ cannot be used"));
    for f in both {
        assert!(text(&r).contains(f.as_str()), "{f}: {}", text(&r));
    }
    assert!(!t.path().join("pages").exists());
    let r = cyclescope(t.path(), &["report", "a", "--out", "pages"]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r));

    // compare gives both jobs no verdict, names the record and its finding, and still
    // judges the others.
    let c = cyclescope(t.path(), &["compare", "a", "b"]);
    assert_eq!(c.status.code(), Some(0), "{}", text(&c));
    let out = String::from_utf8_lossy(&c.stdout);
    let row = |label: &str, bytes: u64| {
        out.lines()
            .find(|l| l.starts_with(&format!("| `{label}` | {bytes} B |")))
            .unwrap_or_else(|| panic!("no row {label} @ {bytes}: {out}"))
            .to_string()
    };
    // The table cell is Markdown: the finding as validate words it, escaped for a page.
    let cell = |finding: &str| markdown(&format!("invalid (B): {finding}")).into_owned();
    let m = row("uHash-512", 32);
    assert!(m.ends_with(&format!("| {} |", cell(&malformed[0]))), "{m}");
    // No figure from the invalid record (B's mean and the ratio are blank), and no verdict.
    let n = row("uHash-512", 1024);
    assert_eq!(
        n,
        format!(
            "| `uHash-512` | 1024 B | 671.7 k | – | (ratio –) | – | {} |",
            cell(&negative[0])
        )
    );
    assert!(
        row("uHash-768", 1024).ends_with("| within noise |"),
        "{out}"
    );
    let err = String::from_utf8_lossy(&c.stderr);
    for (rel, f) in [(MALFORMED, &malformed[0]), (NEGATIVE, &negative[0])] {
        let message = &f[rel.len() + 2..];
        let line = format!("INVALID b/{rel}: {message}");
        assert!(err.contains(&line), "{line}: {err}");
    }
    let j = cyclescope(t.path(), &["compare", "a", "b", "--json"]);
    let rows: Value = serde_json::from_slice(&j.stdout).unwrap();
    let invalid: Vec<&Value> = rows
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["verdict"] == "invalid")
        .collect();
    assert_eq!(invalid.len(), 2, "{rows:#}");
    assert_eq!(invalid[0]["why"], format!("B: {}", malformed[0]));

    // The gate fails on an invalid record, whichever run holds it; valid runs pass it.
    for (x, y) in [("a", "b"), ("b", "a")] {
        let g = cyclescope(t.path(), &["compare", x, y, "--fail-above", "2%"]);
        assert_eq!(g.status.code(), Some(1), "{x} {y}: {}", text(&g));
        assert!(
            text(&g).contains("2 job(s) with an invalid record"),
            "{}",
            text(&g)
        );
    }
    let g = cyclescope(t.path(), &["compare", "a", "a", "--fail-above", "2%"]);
    assert_eq!(g.status.code(), Some(0), "{}", text(&g));
}

/// A short real run of one bundled instance at two lengths (cyclescope's campaign, records
/// with their additions, KAT log): what `merge` joins.
fn small_run(dir: &Path, run: &Path) {
    let o = cyclescope(
        dir,
        &[
            "run",
            "pseudoXOF-256",
            "--lengths",
            "32,64",
            "--trial-target",
            "0.01",
            "--trials",
            "2",
            "--out",
            run.to_str().unwrap(),
            "--allow-unfixed-host",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn merge_refuses_a_record_the_check_rejects_naming_file_and_finding() {
    let t = tempfile::tempdir().unwrap();
    let run = t.path().join("run");
    small_run(t.path(), &run);
    let rec = |bytes: u64| format!("records/iccs/pseudoXOF-256__hash_{bytes}.json");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let merged = t.path().join("merged");
    let o = cyclescope(t.path(), &["merge", &s(&run), "--out", &s(&merged)]);
    assert!(o.status.success(), "the real run merges: {}", text(&o));

    for (bytes, change) in [
        (
            32,
            (|r: &mut Value| r["cyclescope"]["failure"] = json!("garbage")) as fn(&mut Value),
        ),
        (64, |r: &mut Value| r["mean_cycles"] = json!(-5.0)),
    ] {
        let bad = t.path().join(format!("bad{bytes}"));
        copy_dir(&run, &bad);
        edit(&bad.join(rec(bytes)), change);
        let v = cyclescope(t.path(), &["validate", &s(&bad)]);
        assert_eq!(v.status.code(), Some(1), "{}", text(&v));
        let found = findings_of(&v, &rec(bytes));
        assert_eq!(found.len(), 1, "{}", text(&v));
        let out = t.path().join(format!("out{bytes}"));
        let m = cyclescope(t.path(), &["merge", &s(&bad), "--out", &s(&out)]);
        assert_eq!(m.status.code(), Some(2), "{}", text(&m));
        let said = format!("{}: {}; merge joins only records", bad.display(), found[0]);
        assert!(text(&m).contains(&said), "{said}: {}", text(&m));
        assert!(!out.exists(), "nothing written");
    }
}
