//! `× pseudoXOF` in the workbench belongs to the row's own run: the real binary in tmux,
//! measuring across runs whose baseline figures differ on purpose, the ratios and `(ref)`
//! marks read off the screen and the exported CSV. No timing figure is asserted, only
//! identities (a baseline divided by its own run's figure is exactly 1) and marks.

mod common;

use std::path::{Path, PathBuf};

use common::tmux::Tmux;

/// A submission tree of the test's own whose one instance is labelled `pseudoXOF-256`: the
/// FIXH toy hash of `tests/fixtures/submissions/fixhash`, so a `-O0` rebuild is a slower
/// baseline of the same label.
fn baseline_tree(root: &Path) -> PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/submissions/fixhash/Reference_Implementation/FIXH-256");
    let tree = root.join("xoftree");
    let to = tree.join("Reference_Implementation/pseudoXOF-256");
    std::fs::create_dir_all(&to).expect("tree folder");
    for f in ["CryptHash_AlgorithmInstance.c", "fixh.c", "fixh.h"] {
        std::fs::copy(from.join(f), to.join(f)).expect("copy a source");
    }
    let header = std::fs::read_to_string(from.join("CryptHash_AlgorithmInstance.h"))
        .expect("instance header")
        .replace("\"FIXH-256\"", "\"pseudoXOF-256\"");
    std::fs::write(to.join("CryptHash_AlgorithmInstance.h"), header).expect("write header");
    tree
}

/// The rows of the exported CSV, as (header, lines).
fn exported_csv(runs: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let csv = common::run_folders(runs)
        .iter()
        .flat_map(|d| std::fs::read_dir(d).expect("run folder"))
        .map(|e| e.expect("entry").path())
        // The results' CSV (a tuning history, when exported, is `history-….csv`).
        .find(|p| {
            p.extension().is_some_and(|x| x == "csv")
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("results-"))
        })
        .expect("an exported CSV");
    let mut r = csv::Reader::from_path(&csv).expect("CSV");
    let header = r
        .headers()
        .expect("header")
        .iter()
        .map(str::to_string)
        .collect();
    let lines = r
        .records()
        .map(|l| l.expect("line").iter().map(str::to_string).collect())
        .collect();
    (header, lines)
}

/// Run #1 measures the baseline built with the guide's flags, run #2 the same label rebuilt
/// with -O0: run #1's own row still divides by run #1's figure (exactly 1.00×), on the
/// screen and in the export, instead of by the newest figure of the session.
#[test]
fn an_earlier_runs_ratio_keeps_dividing_by_its_own_runs_baseline() {
    let cwd = tempfile::tempdir().expect("temp dir");
    let tree = baseline_tree(cwd.path());
    std::fs::write(
        cwd.path().join("config.toml"),
        "[settings]\nbaseline = \"mine\"\n",
    )
    .expect("config");
    let bin = env!("CARGO_BIN_EXE_cyclescope");
    let script = format!(
        "XDG_CACHE_HOME={} {bin} --src {} --id mine --no-baselines --trial-target 0.01 --allow-unfixed-host --allow-kat-fail; echo EXIT:$?; sleep 60",
        cwd.path().join("cache").display(),
        tree.display()
    );
    let t = Tmux::start_in("ratios-own-run", 160, 48, cwd.path(), &script);
    t.wait_for("pseudoXOF-256 guide");
    for k in ["2", "3", "4", "5", "6", "7", "8"] {
        t.send(&[k]);
    }
    t.wait_for("len S1 ·2 ·3 ·4 ·5 ·6 ·7 ·8");
    t.wait_for("[x] pseudoXOF-256 guide");
    t.send(&["s"]);
    t.wait_for("jobs of run #1");
    t.wait_for("cyclescope │ finished");
    t.send(&["p"]);
    t.wait_for("profile/flags:");
    t.type_text(" -O0");
    t.send(&["Enter"]);
    t.wait_for("pseudoXOF-256: -O0 on the next s");
    t.send(&["s"]);
    t.wait_for("pseudoXOF-256: rebuilt with -O0");
    t.wait_for("jobs of run #2");
    let s = t.wait_for("cyclescope │ finished");
    let first = s
        .lines()
        .find(|l| l.contains("#1 ") && l.contains("pseudoXOF-256") && l.contains(" 32 B "))
        .unwrap_or_else(|| panic!("run #1's row:\n{s}"));
    assert!(
        first.contains(" 1.00×"),
        "run #1's baseline divides by its own figure:\n{s}"
    );
    t.send(&["e"]);
    t.wait_for("exported ");
    t.send(&["q"]);
    t.wait_for("EXIT:0");
    let (header, lines) = exported_csv(&cwd.path().join("runs"));
    let col = |name: &str| header.iter().position(|h| h == name).expect(name);
    let ratios: Vec<(String, String)> = lines
        .iter()
        .map(|l| (l[col("run")].clone(), l[col("x_pseudoxof")].clone()))
        .collect();
    assert_eq!(
        ratios,
        [("2".into(), "1".into()), ("1".into(), "1".into())],
        "each run's baseline over itself"
    );
}

/// Run #1 adds `pseudoXOF-256` as a reference job for FIXH-256; run #2 measures
/// `pseudoXOF-256` because the operator selected it: only run #1's row is `(ref)`.
#[test]
fn reference_marks_follow_the_run_that_added_the_job() {
    let cwd = tempfile::tempdir().expect("temp dir");
    let t = common::tuning::fixh256_workbench("ratios-ref", cwd.path(), "--allow-kat-fail");
    t.send(&["s"]);
    t.wait_for("jobs of run #1");
    let s = t.wait_for("cyclescope │ finished");
    assert!(s.contains("pseudoXOF-256 (ref)"), "{s}");
    // The operator selects pseudoXOF-256 too (the filter finds it among the baselines).
    t.send(&["/"]);
    t.type_text("pseudoXOF-256");
    t.send(&["Enter"]);
    t.wait_for("[ ] pseudoXOF-256");
    t.send(&["j", "Space"]);
    t.wait_for("[x] pseudoXOF-256");
    t.send(&["s"]);
    t.wait_for("jobs of run #2");
    let s = t.wait_for("cyclescope │ finished");
    let row = |run: &str| {
        s.lines()
            .find(|l| l.contains(&format!("{run}  pseudoXOF-256")) && l.contains(" 32 B "))
            .unwrap_or_else(|| panic!("run {run}'s pseudoXOF-256 row:\n{s}"))
            .to_string()
    };
    assert!(
        row("#2").contains("pseudoXOF-256 ") && !row("#2").contains("(ref)"),
        "selected by the operator, not a reference job:\n{s}"
    );
    assert!(row("#1").contains("(ref)"), "{s}");
    t.send(&["q"]);
    t.wait_for("EXIT:0");
}

/// Two runs of FIXH-256 at 32 B, then `b` on the newest run's row in Results at 160×48: the
/// `× pseudoXOF` column stays on screen beside the run and Δ columns, and run #1's rows name
/// no "earlier" figure (the pinned run #2 is later, never earlier); run #2's name run #1.
#[test]
fn pinning_the_newest_run_keeps_the_ratio_and_names_no_later_run_earlier() {
    let cwd = tempfile::tempdir().expect("temp dir");
    let t = common::tuning::fixh256_workbench("ratios-pin", cwd.path(), "--allow-kat-fail");
    t.send(&["s"]);
    t.wait_for("jobs of run #1");
    t.wait_for("cyclescope │ finished");
    t.send(&["s"]);
    t.wait_for("jobs of run #2");
    t.wait_for("cyclescope │ finished");
    // Focus Results (Catalog → Host → Histogram → Curve → Results): its footer offers `b`.
    let mut s = t.capture();
    for _ in 0..6 {
        if s.contains("b baseline") {
            break;
        }
        t.send(&["Tab"]);
        std::thread::sleep(std::time::Duration::from_millis(300));
        s = t.capture();
    }
    assert!(s.contains("b baseline"), "Results focused:\n{s}");
    t.send(&["b"]);
    let s = t.wait_for("baseline: run #2");
    let header = s
        .lines()
        .find(|l| l.contains(" instance ") && l.contains(" msg"))
        .unwrap_or_else(|| panic!("the results header:\n{s}"));
    // (The panel may abbreviate the header to `×XOF`, as at every width the demo checks.)
    assert!(
        (header.contains("× pseudoXOF") || header.contains("×XOF")) && header.contains("earlier"),
        "the ratio column stays beside the Δ columns at 160×48: {header}\n{s}"
    );
    // A row's run is the first `#N` on it (the run column); an earlier figure is `#M` after.
    let rows = |run: &str| -> Vec<&str> {
        s.lines()
            .filter(|l| l.contains(" 32 B "))
            .filter(|l| {
                l.find('#')
                    .is_some_and(|at| l[at..].starts_with(&format!("{run} ")))
            })
            .collect()
    };
    let first = rows("#1");
    let second = rows("#2");
    assert!(
        !first.is_empty() && !second.is_empty(),
        "both runs' rows:\n{s}"
    );
    for l in &first {
        assert!(
            !l.contains("#2 "),
            "run #1's row names the later run #2 as earlier:\n{s}"
        );
    }
    assert!(
        second.iter().any(|l| l.matches("#1 ").count() == 1),
        "run #2's rows name run #1 as earlier:\n{s}"
    );
    // The ratio cells are there too: each run's reference row divides by itself. (Only the
    // reference rows are asserted: FIXH-256 runs about as fast as the reference, so its own
    // ratio may round to 1.00× as well on any machine.)
    for rows in [&first, &second] {
        let reference: Vec<_> = rows.iter().filter(|l| l.contains("(ref)")).collect();
        assert!(
            reference.len() == 1 && reference[0].contains(" 1.00× "),
            "each run's reference row reads 1.00×:\n{s}"
        );
    }
    t.send(&["q"]);
    t.wait_for("EXIT:0");
}

/// The rows of a CSV file, as (header, lines).
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).expect("CSV");
    let header = r
        .headers()
        .expect("header")
        .iter()
        .map(str::to_string)
        .collect();
    let lines = r
        .records()
        .map(|l| l.expect("line").iter().map(str::to_string).collect())
        .collect();
    (header, lines)
}

/// Two workbench starts into one folder (`--run DIR`): first the operator's pseudoXOF-256
/// alone, then FIXH-256 (its reference job is already complete in the folder, so the second
/// start resumes the folder's run and measures FIXH-256 only). The workbench, its export and
/// `report --csv` of the folder divide FIXH-256 by the same baseline record, the folder's run's
/// own: the same rows, the same ratios.
#[test]
fn report_of_a_folder_of_two_workbench_runs_divides_within_each_run() {
    let cwd = tempfile::tempdir().expect("temp dir");
    let run_dir = cwd.path().join("shared");
    let t = common::tuning::fixh256_workbench(
        "ratios-report",
        cwd.path(),
        &format!("--allow-kat-fail --run {}", run_dir.display()),
    );
    // FIXH-256 (under the cursor) off, pseudoXOF-256 on: run #1.
    t.send(&["Space"]);
    t.wait_for("Catalog · 0 selected");
    t.send(&["/"]);
    t.type_text("pseudoXOF-256");
    t.send(&["Enter"]);
    t.wait_for("[ ] pseudoXOF-256");
    t.send(&["j", "Space"]);
    t.wait_for("[x] pseudoXOF-256");
    t.send(&["s"]);
    t.wait_for("jobs of run #1");
    t.wait_for("cyclescope │ finished");
    // Then FIXH-256 too: the second start. Escape clears the filter; `/` only once the full
    // catalog shows again, or a slow workbench reads the two at once as Alt+/ (seen on a
    // loaded CI run: the filter never opened).
    t.send(&["Escape"]);
    t.wait_for("sm3hash-256");
    t.send(&["/"]);
    t.type_text("FIXH-256");
    t.send(&["Enter"]);
    t.wait_for("[ ] FIXH-256 guide");
    t.send(&["j", "j", "Space"]);
    t.wait_for("[x] FIXH-256 guide");
    t.send(&["s"]);
    // The folder's run goes on: its jobs are one run's in the workbench too.
    t.wait_for("2/2 jobs of run #1");
    t.wait_for("cyclescope │ finished");
    t.send(&["e"]);
    t.wait_for("exported ");
    t.send(&["q"]);
    t.wait_for("EXIT:0");
    let exported = std::fs::read_dir(&run_dir)
        .expect("run folder")
        .map(|e| e.expect("entry").path())
        // The results' CSV (a tuning history, when exported, is `history-….csv`).
        .find(|p| {
            p.extension().is_some_and(|x| x == "csv")
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("results-"))
        })
        .expect("the exported CSV");
    let (header, lines) = read_csv(&exported);
    let col = |name: &str| header.iter().position(|h| h == name).expect(name);
    let tui = |run: &str, label: &str| -> String {
        lines
            .iter()
            .find(|l| l[col("run")] == run && l[col("instance")] == label)
            .unwrap_or_else(|| panic!("run {run}'s {label} in the export: {lines:?}"))
            [col("x_pseudoxof")]
        .clone()
    };
    let report_csv = cwd.path().join("records.csv");
    let o = common::cyclescope()
        .args([
            "report",
            run_dir.to_str().expect("path"),
            "--no-figures",
            "--out",
            cwd.path().join("pages").to_str().expect("path"),
            "--csv",
            report_csv.to_str().expect("path"),
        ])
        .output()
        .expect("report");
    assert!(o.status.success(), "{}", common::output_text(&o));
    let (rheader, rlines) = read_csv(&report_csv);
    let rcol = |name: &str| rheader.iter().position(|h| h == name).expect(name);
    let report = |label: &str| -> String {
        rlines
            .iter()
            .find(|l| l[rcol("instance")] == label)
            .unwrap_or_else(|| panic!("{label} in report --csv: {rlines:?}"))[rcol("x_pseudoxof")]
        .clone()
    };
    assert_eq!(tui("1", "pseudoXOF-256"), "1", "{lines:?}");
    // (The same division of the same two figures; the record's JSON keeps each to the bit
    // or nearly, so the quotients are compared to a billionth.)
    let same = |a: &str, b: &str| match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => (x - y).abs() <= 1e-9 * x.abs().max(y.abs()),
        _ => a == b,
    };
    for label in ["pseudoXOF-256", "FIXH-256"] {
        assert!(
            same(&report(label), &tui("1", label)),
            "{label}: the same row, the same ratio: {lines:?} / {rlines:?}"
        );
    }
    assert!(
        !report("FIXH-256").is_empty(),
        "FIXH-256 divides by its run's baseline: {rlines:?}"
    );
}
