//! The pages of a cyclescope run say what the run measured: the summary names the
//! algorithm (not only the candidate id), a `× pseudoXOF` over a doubtful figure is marked,
//! the histogram figures carry the workbench's percentile and loop-mean markers, a
//! doubtful point is marked in the cycles/byte figure, and a fresh-message probe left
//! inconclusive is noted. The real binary measures the fault-injection library as an ad-hoc candidate
//! (the bundled pseudoXOF-512 beside it as its reference job), then `report` writes pages.

mod common;

use std::path::{Path, PathBuf};

/// A quick run of the fixture library as `X-512` at 32 B into `<tmp>/run`; returns the run.
fn fixture_run(tmp: &Path) -> PathBuf {
    let run = tmp.join("run");
    let faulty = Path::new(env!("CARGO_BIN_EXE_cyclescope"))
        .parent()
        .expect("target folder")
        .join("deps/libfaulty.so");
    let o = common::cyclescope()
        .arg("run")
        .arg("--lib")
        .arg(&faulty)
        .args([
            "--label",
            "X-512",
            "--digest-bits",
            "512",
            "--lengths",
            "32",
        ])
        .args(["--trials", "2", "--trial-target", "0.01"])
        .args(["--allow-unfixed-host", "--allow-kat-fail", "--out"])
        .arg(&run)
        .output()
        .expect("running cyclescope");
    assert!(o.status.success(), "{}", common::output_text(&o));
    run
}

/// `report RUN` into `<tmp>/pages`; returns the summary page's text.
fn summary_page(tmp: &Path, run: &Path) -> String {
    let pages = tmp.join("pages");
    let o = common::cyclescope()
        .arg("report")
        .arg(run)
        .arg("--out")
        .arg(&pages)
        .output()
        .expect("running cyclescope report");
    assert!(o.status.success(), "{}", common::output_text(&o));
    let dir = pages.join("performance");
    let path = std::fs::read_dir(&dir)
        .expect("performance pages")
        .map(|e| e.expect("entry").path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("summary_"))
        })
        .expect("a summary page");
    std::fs::read_to_string(path).expect("summary page")
}

/// The summary's row of candidate `fixture`.
fn fixture_row(summary: &str) -> &str {
    summary
        .lines()
        .find(|l| l.starts_with("| [fixture]("))
        .unwrap_or_else(|| panic!("the fixture's row:\n{summary}"))
}

#[test]
fn the_summary_names_the_algorithm_of_a_run_without_a_candidates_file() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let run = fixture_run(tmp.path());
    let summary = summary_page(tmp.path(), &run);
    let cells: Vec<&str> = fixture_row(&summary).split(" | ").collect();
    // The library's ngcc_meta names its algorithm; the id stays in the first column.
    assert_eq!(cells[1], "fault-injection fixture", "{summary}");
}

#[test]
fn a_ratio_over_a_doubtful_figure_is_marked_on_the_summary() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let run = fixture_run(tmp.path());
    let clean = summary_page(tmp.path(), &run);
    // The baseline's figure made doubtful the way a noisy run leaves it: its trials disagree
    // (a 95 % interval of ±33 %).
    let record = run.join("records/iccs/pseudoXOF-512__hash_32.json");
    let mut r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&record).expect("baseline record")).expect("JSON");
    r["cyclescope"]["trial_spread"]["ci95_relative"] = serde_json::json!(0.33);
    std::fs::write(&record, serde_json::to_vec_pretty(&r).expect("JSON")).expect("write");
    let summary = summary_page(tmp.path(), &run);
    let at_32 = |s: &str| fixture_row(s).split(" | ").nth(3).map(str::to_string);
    let before = at_32(&clean).expect("32 B cell");
    let after = at_32(&summary).expect("32 B cell");
    assert!(
        before.ends_with("×)") || before.ends_with("× ⚠)"),
        "a ratio: {before}"
    );
    assert!(
        after.ends_with("× ⚠)"),
        "marked doubtful: {after}\n{summary}"
    );
}

/// The SVG files `report` drew for candidate `fixture`, by name.
fn figures(tmp: &Path) -> Vec<(String, String)> {
    let dir = tmp.join("pages/fixture/figures");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("figures folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "svg"))
        .map(|p| {
            let name = p.file_name().expect("name").to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).expect("svg"))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn the_histogram_figure_carries_the_percentile_and_loop_mean_markers() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let run = fixture_run(tmp.path());
    summary_page(tmp.path(), &run);
    let figs = figures(tmp.path());
    let (name, hist) = figs
        .iter()
        .find(|(_, svg)| svg.contains("per-call"))
        .unwrap_or_else(|| {
            panic!(
                "a histogram figure among {:?}",
                figs.iter().map(|f| &f.0).collect::<Vec<_>>()
            )
        });
    assert!(hist.contains("◆ loop mean"), "{name} lacks the loop mean");
    // Quantiles on one value share a label (`▲ p50 p90`): each is named in one.
    let labels: Vec<&str> = hist.lines().filter(|l| l.contains('▲')).collect();
    for q in ["p50", "p90", "p99"] {
        assert!(
            labels.iter().any(|l| l.contains(q)),
            "{name} lacks {q} in {labels:?}"
        );
    }
}

#[test]
fn a_doubtful_point_is_marked_in_the_cycles_per_byte_figure() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let run = fixture_run(tmp.path());
    let record = run.join("records/fixture/X-512__hash_32.json");
    let mut r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&record).expect("record")).expect("JSON");
    r["cyclescope"]["trial_spread"]["ci95_relative"] = serde_json::json!(0.33);
    std::fs::write(&record, serde_json::to_vec_pretty(&r).expect("JSON")).expect("write");
    summary_page(tmp.path(), &run);
    let figs = figures(tmp.path());
    let (name, curve) = figs
        .iter()
        .find(|(_, svg)| svg.contains("cycles per byte"))
        .unwrap_or_else(|| {
            panic!(
                "a cycles/byte figure among {:?}",
                figs.iter().map(|f| &f.0).collect::<Vec<_>>()
            )
        });
    assert!(
        curve.contains("doubtful figure"),
        "{name} marks the doubtful point"
    );
}

/// Every file `report` wrote under `<tmp>/pages`, as text, by path.
fn page_texts(tmp: &Path) -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
        for e in std::fs::read_dir(dir).expect("pages folder") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                walk(&p, out);
            } else if let Ok(text) = std::fs::read_to_string(&p) {
                out.push((p, text));
            }
        }
    }
    let mut out = Vec::new();
    walk(&tmp.join("pages"), &mut out);
    out
}

/// A record whose fresh-message probe ran out of turns beside twins all slower than the
/// guide's trials (the host slowed every one) carries the doubt on the pages, as every
/// doubt about a figure does: its cell is marked and the note says why.
#[test]
fn a_probe_left_inconclusive_is_a_doubt_on_the_pages() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let run = fixture_run(tmp.path());
    let record = run.join("records/fixture/X-512__hash_32.json");
    let mut r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&record).expect("record")).expect("JSON");
    r["cyclescope"]["fresh_probe"] = serde_json::json!({
        "cpu_ns_per_call": 300.0,
        "calls": 16384,
        "guide_fastest_ns_per_call": 165.5,
        "ratio": 1.81,
        "factor": 2.0,
        "twin_ns_per_call": 231.7,
    });
    std::fs::write(&record, serde_json::to_vec_pretty(&r).expect("JSON")).expect("write");
    summary_page(tmp.path(), &run);
    let pages = page_texts(tmp.path());
    let note = "⚠ `X-512` 32 B: fresh-message probe inconclusive: every twin ran slower than \
                the guide's trials (the fastest 232 ns a call, the guide's 166 ns)";
    assert!(
        pages.iter().any(|(_, text)| text.contains(note)),
        "no page notes it among {:?}",
        pages.iter().map(|p| &p.0).collect::<Vec<_>>()
    );
}
