//! The A/B of two builds of one instance (`B`) end to end: the real binary in tmux on the
//! fixture submission's sources, FIXH-256 at 32 B measured with the guide's flags, rebuilt
//! with `-O0` and measured, then `B`: the guide build (A, `FIXH-256.prev`) against the `-O0`
//! build (B), interleaved. Its B/A is a row in Results as soon as it ends, its result is kept
//! in the run folder, and both sides enter the tuning journal, A with the first build's
//! library. No timing figure is asserted, only where the result appears.

mod common;

use std::path::Path;

use serde_json::Value;

fn history(cwd: &Path, label: &str) -> Vec<Value> {
    let o = common::cyclescope()
        .env("XDG_DATA_HOME", cwd.join("data"))
        .args(["history", label, "--length", "32", "--json"])
        .current_dir(cwd)
        .output()
        .expect("running cyclescope history");
    let text = common::output_text(&o);
    assert!(o.status.success(), "{text}");
    serde_json::from_slice::<Value>(&o.stdout)
        .expect(&text)
        .as_array()
        .cloned()
        .expect("an array")
}

#[test]
fn b_after_a_rebuild_interleaves_the_two_builds_into_results_the_run_and_the_journal() {
    let cwd = tempfile::tempdir().expect("temp dir");
    let t = common::tuning::fixh256_workbench("ab-builds", cwd.path(), "");
    // Before any rebuild there is nothing to compare with, and the log says how to get there.
    t.send(&["B"]);
    t.wait_for("FIXH-256 has no earlier build in this session");
    t.send(&["s"]);
    t.wait_for("jobs of run #1");
    t.wait_for("cyclescope │ finished");
    t.send(&["p"]);
    t.wait_for("profile/flags:");
    t.type_text(" -O0");
    t.send(&["Enter"]);
    t.wait_for("FIXH-256 guide → -O0");
    t.send(&["s"]);
    t.wait_for("FIXH-256: rebuilt with -O0");
    t.wait_for("jobs of run #2");
    t.wait_for("cyclescope │ finished");
    t.send(&["B"]);
    // The log's lines about the A/B can scroll away while it runs, so the wait is on what
    // stays: the `=` row in Results (at once, without reloading the run) under a finished
    // title.
    let ab_row =
        |l: &str| l.contains("│= ") && l.contains(" 32 B ") && l.contains("÷ FIXH-256.prev");
    let s = t.wait("the A/B row in Results under a finished title", |s| {
        s.contains("cyclescope │ finished") && s.lines().any(ab_row)
    });
    let row = s
        .lines()
        .find(|l| ab_row(l))
        .unwrap_or_else(|| panic!("the A/B row in Results:\n{s}"));
    assert!(row.contains("FIXH-256 ") && row.contains("B/A "), "{row}");
    // The run folder keeps the result: A the earlier build, B the new one.
    let kept: Vec<_> = common::run_folders(&cwd.path().join("runs"))
        .into_iter()
        .filter(|d| d.join("ab_result.json").is_file())
        .collect();
    assert_eq!(kept.len(), 1, "one run keeps an A/B result");
    let stored: Value = serde_json::from_slice(
        &std::fs::read(kept[0].join("ab_result.json")).expect("ab_result.json"),
    )
    .expect("JSON");
    assert_eq!(stored["a"]["label"], "FIXH-256.prev", "{stored}");
    assert_eq!(stored["b"]["label"], "FIXH-256", "{stored}");
    assert_eq!(stored["lengths"][0]["input_bytes"], 32, "{stored}");
    assert!(
        stored["lengths"][0]["ratio"]["ratio"].is_number(),
        "{stored}"
    );
    // The export has it as a row of its own, divided by the earlier build.
    t.send(&["e"]);
    t.wait_for("exported ");
    let csv_path = std::fs::read_dir(&kept[0])
        .expect("run folder")
        .map(|e| e.expect("entry").path())
        .find(|p| {
            p.extension().is_some_and(|x| x == "csv")
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("results-"))
        })
        .expect("an exported CSV in the A/B's run folder");
    let mut csv = csv::Reader::from_path(&csv_path).expect("CSV");
    let header: Vec<String> = csv
        .headers()
        .expect("header")
        .iter()
        .map(str::to_string)
        .collect();
    let col = |name: &str| header.iter().position(|h| h == name).expect(name);
    let ab: Vec<Vec<String>> = csv
        .records()
        .map(|l| l.expect("line").iter().map(str::to_string).collect())
        .filter(|l: &Vec<String>| l[col("mark")] == "=")
        .collect();
    assert_eq!(ab.len(), 1, "{ab:?}");
    assert_eq!(
        ab[0][col("ab_divided_by")],
        "fixhash/FIXH-256.prev",
        "{ab:?}"
    );
    assert!(ab[0][col("ab_ratio")].parse::<f64>().is_ok(), "{ab:?}");
    t.send(&["q"]);
    t.wait_for("EXIT:0");
    // The journal: B's figure is the -O0 build's latest, A's is measured with the library of
    // the first (guide) build, both from the interleaved comparison.
    let now = history(cwd.path(), "FIXH-256");
    let first = now.first().expect("the guide build");
    let latest = now.last().expect("the -O0 build");
    assert_eq!(latest["origin"], "compare-live", "{now:?}");
    assert_ne!(latest["library_sha256"], first["library_sha256"], "{now:?}");
    let earlier = history(cwd.path(), "FIXH-256.prev");
    assert_eq!(earlier.len(), 1, "{earlier:?}");
    assert_eq!(earlier[0]["origin"], "compare-live", "{earlier:?}");
    assert_eq!(
        earlier[0]["library_sha256"], first["library_sha256"],
        "A is the guide build: {earlier:?}"
    );
}
