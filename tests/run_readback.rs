//! `run`'s printed table is the whole run's and says how it was made: the build of each
//! instance (a `-O0` build reads `-O0`, on the report page too), the notes the workbench
//! prints (trial target, host problems measured despite), every job of a resumed run, and
//! what a run that did not finish is missing. The real binary on the fixture submission and
//! the fault-injection library; no timing figure is asserted.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

const QUICK: [&str; 6] = [
    "--trials",
    "2",
    "--trial-target",
    "0.01",
    "--allow-unfixed-host",
    "--allow-kat-fail",
];

fn cyclescope(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = common::cyclescope();
    cmd.current_dir(cwd).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("running cyclescope")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn faulty() -> String {
    Path::new(env!("CARGO_BIN_EXE_cyclescope"))
        .parent()
        .expect("target folder")
        .join("deps/libfaulty.so")
        .display()
        .to_string()
}

/// The rows of the printed §4 table.
fn rows(out: &str) -> Vec<&str> {
    out.lines().filter(|l| l.starts_with("| `")).collect()
}

#[test]
fn a_cflags_build_says_its_flags_in_the_table_and_on_the_page() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/submissions/fixhash");
    let run = tmp.path().join("run");
    let cache = tmp.path().join("cache");
    let mut args = vec![
        "run",
        "FIXH-256",
        "--src",
        src.to_str().expect("path"),
        "--cflags",
        "-O0",
        "--no-baselines",
        "--lengths",
        "32",
        "--out",
        run.to_str().expect("path"),
    ];
    args.extend(QUICK);
    let o = cyclescope(
        tmp.path(),
        &args,
        &[("XDG_CACHE_HOME", cache.to_str().expect("path"))],
    );
    assert!(o.status.success(), "{}", common::output_text(&o));
    let out = stdout(&o);
    let built = out
        .lines()
        .find(|l| l.starts_with("built with: "))
        .unwrap_or_else(|| panic!("the build is named:\n{out}"));
    assert!(built.contains("`FIXH-256` cflags: -O0"), "{built}");
    // The compiler the KAT log of the build names is said with it.
    let log = std::fs::read_to_string(run.join("kat/fixhash/FIXH-256.log")).expect("KAT log");
    let cc = log
        .lines()
        .find_map(|l| l.strip_prefix("compiler    = "))
        .expect("the log names the compiler");
    assert!(built.contains(&format!("({cc})")), "{built}");
    let pages = tmp.path().join("pages");
    let o = cyclescope(
        tmp.path(),
        &[
            "report",
            run.to_str().expect("path"),
            "--out",
            pages.to_str().expect("path"),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", common::output_text(&o));
    let page = std::fs::read_dir(&pages)
        .expect("pages")
        .map(|e| e.expect("entry").path())
        .filter(|p| !p.ends_with("performance"))
        .flat_map(|d| std::fs::read_dir(d).expect("candidate folder"))
        .map(|e| e.expect("entry").path())
        .find(|p| p.extension().is_some_and(|x| x == "md"))
        .expect("a candidate page");
    let text = std::fs::read_to_string(page).expect("page");
    let kat_row = text
        .lines()
        .find(|l| l.starts_with("| `FIXH-256` | cflags"))
        .unwrap_or_else(|| panic!("the KAT table's row:\n{text}"));
    assert!(kat_row.contains("-O0"), "{kat_row}");
    // The compiler of the build the row measured, as its KAT log names it.
    // (A Markdown cell backslash-escapes some characters; the text read back drops them.)
    assert!(
        kat_row.replace('\\', "").contains(&format!("({cc})")),
        "the KAT table names the compiler:\n{kat_row}"
    );
}

/// A quick run of the fixture library as `X-512` at 32 B and 1 KiB (the bundled
/// pseudoXOF-512 beside it as its reference job) into `run`.
fn fixture_run(cwd: &Path, run: &Path, env: &[(&str, &str)]) -> Output {
    let faulty = faulty();
    let mut args = vec![
        "run",
        "--lib",
        &faulty,
        "--label",
        "X-512",
        "--digest-bits",
        "512",
        "--lengths",
        "32,1024",
        "--out",
        run.to_str().expect("path"),
    ];
    args.extend(QUICK);
    cyclescope(cwd, &args, env)
}

#[test]
fn the_table_carries_the_notes_the_workbench_prints() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let run = tmp.path().join("run");
    let o = fixture_run(tmp.path(), &run, &[]);
    assert!(o.status.success(), "{}", common::output_text(&o));
    let out = stdout(&o);
    assert!(
        out.contains("\ntrial target 0.01 s per trial (the guide's: 1 s)\n"),
        "{out}"
    );
    let campaign: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("campaign.json")).expect("campaign"))
            .expect("JSON");
    let problems = campaign["host_problems"]
        .as_array()
        .or_else(|| campaign["cyclescope"]["host_problems"].as_array())
        .map_or(0, Vec::len);
    assert_eq!(
        out.contains("\nmeasured despite host problems: "),
        problems > 0,
        "the host problems the run accepted ({problems}) are named:\n{out}"
    );
}

#[test]
fn a_resumed_run_prints_the_whole_runs_table() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let run = tmp.path().join("run");
    let o = fixture_run(tmp.path(), &run, &[]);
    assert!(o.status.success(), "{}", common::output_text(&o));
    assert_eq!(rows(&stdout(&o)).len(), 4, "{}", stdout(&o));
    // One job lost (as if the run had been killed before it): resume measures it alone.
    let lost: PathBuf = run.join("records/fixture/X-512__hash_1024.json");
    std::fs::remove_file(&lost).expect("remove a record");
    let o = cyclescope(
        tmp.path(),
        &["run", "--resume", run.to_str().expect("path")],
        &[],
    );
    assert!(o.status.success(), "{}", common::output_text(&o));
    let out = stdout(&o);
    let table = rows(&out);
    assert_eq!(table.len(), 4, "every job of the run:\n{out}");
    assert!(
        // Timed without a manifest entry: the table says so beside the figure.
        table
            .iter()
            .any(|r| r.starts_with("| `X-512` NOKAT | 32 B |")),
        "{out}"
    );
    assert!(!out.contains("incomplete"), "{out}");
}

#[test]
fn a_run_with_a_job_not_measured_says_what_is_missing() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let run = tmp.path().join("run");
    // The library fails every call at 1 KiB: that job fails, the others finish.
    let o = fixture_run(tmp.path(), &run, &[("FAULTY_MODE", "error@1024")]);
    let out = stdout(&o);
    assert_eq!(rows(&out).len(), 3, "{out}");
    assert!(
        out.contains("\nincomplete 3/4 — not measured: `X-512` 1024 B\n"),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn the_kat_verdict_lines_end_with_their_verdict() {
    // The reference job's pseudoXOF-512 passes its KAT with no detail: the verdict ends the
    // line (it read `PASS `), as every verdict line's last word ends it.
    let tmp = tempfile::tempdir().expect("temp dir");
    let run = tmp.path().join("run");
    let o = fixture_run(tmp.path(), &run, &[]);
    assert!(o.status.success(), "{}", common::output_text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let verdicts: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("KAT ") && l.contains(": "))
        .collect();
    assert!(verdicts.contains(&"KAT pseudoXOF-512: PASS"), "{err}");
    for line in verdicts {
        assert_eq!(line, line.trim_end(), "{err}");
    }
}
