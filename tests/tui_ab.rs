//! The workbench's interleaved A/B (`=`) is a result of its run: the real binary in tmux on
//! the fixture submission, FIXH-256 against the bundled pseudoXOF-256 at 32 B. Its B/A gets a
//! row in Results, is kept in the run folder (`ab_result.json`) and printed on leaving. No
//! timing figure is asserted, only where the result appears.

mod common;

#[test]
fn an_ab_result_is_a_row_in_results_a_file_in_the_run_and_in_the_printout() {
    let cwd = tempfile::tempdir().expect("temp dir");
    let t = common::tuning::fixh256_workbench("ab-result", cwd.path(), "--allow-kat-fail");
    t.send(&["/"]);
    t.type_text("pseudoXOF-256");
    t.send(&["Enter"]);
    t.wait_for("[ ] pseudoXOF-256");
    t.send(&["j", "Space"]);
    t.wait_for("Catalog · 2 selected");
    t.send(&["="]);
    t.wait_for("A/B 32 B: ");
    let s = t.wait_for("cyclescope │ finished");
    let row = s
        .lines()
        .find(|l| l.contains("│= ") && l.contains(" 32 B ") && l.contains("÷ FIXH-256"))
        .unwrap_or_else(|| panic!("the A/B row in Results:\n{s}"));
    assert!(row.contains("B/A "), "{row}");
    // The export's CSV has the result as rows of its own: B over A, its interval and pairs.
    t.send(&["e"]);
    t.wait_for("exported ");
    let csv_path = common::run_folders(&cwd.path().join("runs"))
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
    let mut csv = csv::Reader::from_path(&csv_path).expect("CSV");
    let header: Vec<String> = csv
        .headers()
        .expect("header")
        .iter()
        .map(str::to_string)
        .collect();
    let col = |name: &str| header.iter().position(|h| h == name).expect(name);
    let ab_rows: Vec<Vec<String>> = csv
        .records()
        .map(|l| l.expect("line").iter().map(str::to_string).collect())
        .filter(|l: &Vec<String>| l[col("mark")] == "=")
        .collect();
    assert_eq!(ab_rows.len(), 1, "one A/B row per length: {ab_rows:?}");
    let ab = &ab_rows[0];
    assert_eq!(ab[col("message_bytes")], "32", "{ab:?}");
    assert_eq!(ab[col("ab_divided_by")], "fixhash/FIXH-256", "{ab:?}");
    let ratio: f64 = ab[col("ab_ratio")].parse().expect("B/A in the CSV");
    let low: f64 = ab[col("ab_ci95_low")].parse().expect("its interval");
    let high: f64 = ab[col("ab_ci95_high")].parse().expect("its interval");
    assert!(low <= ratio && ratio <= high, "{ab:?}");
    assert!(!ab[col("ab_verdict")].is_empty(), "{ab:?}");
    t.send(&["q"]);
    let out = t.wait_for("EXIT:0");
    assert!(
        out.contains("A/B: A = "),
        "the printout has the A/B table:\n{out}"
    );
    assert!(
        out.contains(
            "| message | A mean cycles | B mean cycles | B / A | 95 % CI | pairs | verdict |"
        ),
        "{out}"
    );
    let kept: Vec<_> = common::run_folders(&cwd.path().join("runs"))
        .into_iter()
        .filter(|d| d.join("ab_result.json").is_file())
        .collect();
    assert_eq!(kept.len(), 1, "the run folder keeps the result");
    let stored: serde_json::Value = serde_json::from_slice(
        &std::fs::read(kept[0].join("ab_result.json")).expect("ab_result.json"),
    )
    .expect("JSON");
    assert_eq!(stored["lengths"][0]["input_bytes"], 32, "{stored}");
}
