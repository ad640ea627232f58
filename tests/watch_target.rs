//! `watch` pointed at the wrong thing, through the real binary: a regular file or a folder
//! that holds neither a run nor runs is refused at once, with what it is and what to give
//! instead (it used to wait a minute, then suggest `run … --out` that very file); a path not
//! there yet is still waited for, a run may be about to create it. And `watch --lanes` on a
//! finished run gives no share of one core over a span too short for one.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Output, Stdio};

fn watch(dir: &Path, args: &[&str]) -> Output {
    let mut all = vec!["watch"];
    all.extend_from_slice(args);
    common::cyclescope_in(dir, &all)
}

#[test]
fn a_regular_file_is_refused_at_once_and_named_a_file() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("mysha.sha256"), "not a run\n").unwrap();
    for args in [&["mysha.sha256"][..], &["--lanes", "mysha.sha256"]] {
        let o = watch(tmp.path(), args);
        let text = common::output_text(&o);
        assert!(!o.status.success(), "{text}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(
                "mysha.sha256 is a file, not a run directory: give the folder a run writes"
            ),
            "{text}"
        );
        // Refused before any wait, and never told to write a run into the file.
        assert!(!err.contains("waiting"), "{text}");
        assert!(!err.contains("--out mysha.sha256"), "{text}");
    }
}

#[test]
fn a_folder_of_other_files_is_refused_at_once_naming_them() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("mysha");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(project.join("src/mysha.c"), "int x;\n").unwrap();
    std::fs::write(project.join("Makefile"), "all:\n").unwrap();
    std::fs::write(project.join("kat.sha256"), "").unwrap();
    for args in [&["mysha"][..], &["--lanes", "mysha"]] {
        let o = watch(tmp.path(), args);
        let text = common::output_text(&o);
        assert!(!o.status.success(), "{text}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("mysha holds neither a run (no campaign.json or journal) nor runs")
                && err.contains("(`Makefile`, `kat.sha256`, `src`)"),
            "{text}"
        );
        assert!(!err.contains("waiting"), "{text}");
    }
}

#[test]
fn a_path_not_there_yet_is_still_waited_for() {
    let tmp = tempfile::tempdir().unwrap();
    let mut child = common::cyclescope()
        .args(["watch", "soon"])
        .current_dir(tmp.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting cyclescope watch");
    let mut first = String::new();
    let read = BufReader::new(child.stderr.take().expect("stderr")).read_line(&mut first);
    // It waits (up to a minute) rather than refusing: no need to wait that out here.
    let _ = child.kill();
    let _ = child.wait();
    read.expect("reading stderr");
    assert!(
        first.starts_with("waiting up to 60 s for the run in soon to start"),
        "{first}"
    );
}

#[test]
fn lanes_of_a_finished_run_give_no_share_of_a_core_over_a_span_too_short() {
    let tmp = tempfile::tempdir().unwrap();
    let source = common::cc::candidate_source("hash-93", "LANES-256", 256, "", "");
    let lib = common::cc::build_library(tmp.path(), "LANES-256", &source);
    let args = common::quick_run(lib.to_str().unwrap(), "run", true);
    let o = common::cyclescope_in(tmp.path(), &args);
    assert!(o.status.success(), "{}", common::output_text(&o));
    let o = watch(tmp.path(), &["--lanes", "run"]);
    let text = common::output_text(&o);
    assert!(o.status.success(), "{text}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("watcher: "))
        .unwrap_or_else(|| panic!("no watcher line:\n{text}"));
    // The run has ended: the watcher reads it and stops, usually well within a second. A share
    // is given only over a span of a second or more (it read `over 0.0 s (148.50 % …)`).
    let span = line
        .split(" of CPU time over ")
        .nth(1)
        .and_then(|rest| rest.split(" (").next())
        .unwrap_or_else(|| panic!("{line}"));
    if line.contains("% of one core") {
        let seconds = span
            .strip_suffix(" s")
            .and_then(|n| n.parse::<f64>().ok())
            .unwrap_or(0.0);
        assert!(seconds >= 1.0, "a share over {span}: {line}");
    } else {
        assert!(
            line.ends_with("(too short a span for a share of one core) (getrusage)"),
            "{line}"
        );
    }
}
