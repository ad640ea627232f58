//! An ad-hoc `--lib` library was not built by cyclescope, which cannot know how it was
//! compiled: its record, the run's table and the report page say `unknown` (with the flags
//! the library's own `ngcc_meta` claims, as its claim), or what `--flags-note` says, never the
//! guide's profile. The real binary on a C library built here with `cc -O1`.

mod common;

use std::path::Path;
use std::process::Output;

/// A quick run of a fresh library (its `ngcc_meta` says `-O1`) with `extra` arguments.
fn adhoc_run(dir: &Path, extra: &[&str]) -> (Output, serde_json::Value) {
    let source = common::cc::candidate_source("hash-91", "FLAGS-256", 256, "", "");
    let lib = common::cc::build_library(dir, "FLAGS-256", &source);
    let mut args = common::quick_run(lib.to_str().unwrap(), "run", true);
    args.extend_from_slice(extra);
    let o = common::cyclescope_in(dir, &args);
    assert!(o.status.success(), "{}", common::output_text(&o));
    let path = dir.join("run/records/hash-91/FLAGS-256__hash_32.json");
    let record = serde_json::from_slice(&std::fs::read(&path).expect("record")).expect("JSON");
    (o, record)
}

fn built_with(o: &Output) -> String {
    let out = String::from_utf8_lossy(&o.stdout);
    out.lines()
        .find(|l| l.starts_with("built with: "))
        .unwrap_or_else(|| panic!("no `built with` line:\n{out}"))
        .to_string()
}

/// The candidate page's row of `label` in its table of builds and KAT results.
fn page_row(dir: &Path, label: &str) -> String {
    let o = common::cyclescope_in(dir, &["report", "run", "--out", "pages", "--no-figures"]);
    assert!(o.status.success(), "{}", common::output_text(&o));
    let page = dir.join("pages/hash-91");
    let md = std::fs::read_dir(&page)
        .unwrap_or_else(|e| panic!("{}: {e}", page.display()))
        .map(|e| e.expect("entry").path())
        .find(|p| p.extension().is_some_and(|x| x == "md"))
        .expect("a candidate page");
    let text = std::fs::read_to_string(md).expect("page");
    text.lines()
        .skip_while(|l| !l.starts_with("| instance | build flags | KAT |"))
        .find(|l| l.starts_with(&format!("| `{label}` | ")))
        .unwrap_or_else(|| panic!("no build row of {label}:\n{text}"))
        .to_string()
}

#[test]
fn an_adhoc_library_is_said_built_with_unknown_flags_and_its_own_claim() {
    let tmp = tempfile::tempdir().unwrap();
    let (o, record) = adhoc_run(tmp.path(), &[]);
    // The schema's field kept, its value what is known.
    assert_eq!(record["flags"], "unknown", "{record}");
    assert_eq!(record["build_flags"], "-O1", "{record}");
    let line = built_with(&o);
    assert!(
        line.contains("`FLAGS-256` unknown (the library says -O1)"),
        "{line}"
    );
    let row = page_row(tmp.path(), "FLAGS-256");
    assert!(row.contains("unknown (the library says -O1)"), "{row}");
    assert!(!row.contains("guide"), "{row}");
}

#[test]
fn flags_note_says_how_the_library_was_built() {
    let tmp = tempfile::tempdir().unwrap();
    // A note may start with a flag, as flags do.
    let (o, record) = adhoc_run(tmp.path(), &["--flags-note", "-O3 by hand (gcc 13)"]);
    assert_eq!(record["flags"], "-O3 by hand (gcc 13)", "{record}");
    let line = built_with(&o);
    assert!(line.contains("`FLAGS-256` -O3 by hand (gcc 13)"), "{line}");
    assert!(!line.contains("unknown"), "{line}");
    let row = page_row(tmp.path(), "FLAGS-256");
    // (A Markdown cell backslash-escapes some characters; the text read back drops them.)
    assert!(
        row.replace('\\', "").contains("-O3 by hand (gcc 13)"),
        "{row}"
    );
}

#[test]
fn a_flags_note_that_is_not_one_line_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let o = common::cyclescope_in(
        tmp.path(),
        &[
            "run",
            "--lib",
            "libX-256.so",
            "--flags-note",
            "-O3\n\x1b[2J",
        ],
    );
    let text = common::output_text(&o);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("control character"),
        "{text}"
    );
}
