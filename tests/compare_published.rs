//! `cyclescope compare` beside the published arm_1 dataset itself: a dataset with no record
//! is refused, only the jobs in common are listed (unless `--all`), nothing in common is
//! refused by name, and a ratio divided by a doubtful helper names the helper, not the clean
//! row. The run folders are written from the published records (`common::published`).

mod common;

use std::path::Path;

use serde_json::{Value, json};

use common::published::{compare, counted_by, published, published_of, write, write_of};

#[test]
fn compare_refuses_a_dataset_without_records() {
    let tmp = tempfile::tempdir().unwrap();
    // A dataset folder (its campaign.json and an empty records/) that holds no record.
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(empty.join("records")).unwrap();
    std::fs::copy(
        common::arm_1().join("campaign.json"),
        empty.join("campaign.json"),
    )
    .unwrap();
    for (a, b) in [
        (common::arm_1(), empty.clone()),
        (empty.clone(), common::arm_1()),
    ] {
        let o = compare(&[a.as_os_str(), b.as_os_str()]);
        assert!(!o.status.success(), "{o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(
                "empty: no record under records/ (an empty run or dataset): nothing to compare"
            ),
            "{err}"
        );
        assert!(!String::from_utf8_lossy(&o.stdout).contains("only in"));
    }
}

/// B: the published pseudoXOF-256 and sm3hash-256 at 32 B as a cyclescope run counting the
/// TSC would have written them, sm3hash-256's figure marked ⚠ by a wide interval.
fn run_with_a_doubtful_helper(b: &Path) {
    let pxof = counted_by(published_of("iccs", "pseudoXOF-256__hash_32.json"), "tsc");
    let mut sm3 = counted_by(published_of("iccs", "sm3hash-256__hash_32.json"), "tsc");
    sm3["cyclescope"]["trial_spread"] = json!({
        "trial_mean_cycles_sd": 100.0, "ci95_half_width_cycles": 120.0, "ci95_relative": 0.3
    });
    write_of(b, "iccs", "pseudoXOF-256__hash_32.json", &pxof);
    write_of(b, "iccs", "sm3hash-256__hash_32.json", &sm3);
}

#[test]
fn a_ratio_divided_by_a_doubtful_helper_names_the_helper_not_the_clean_row() {
    // The row: pseudoXOF-256 at 32 B is clean on both sides; across the two counters
    // it is divided by sm3hash-256 (no other pseudoXOF width on both sides), doubtful in B.
    let tmp = tempfile::tempdir().unwrap();
    let b = tmp.path().join("b");
    run_with_a_doubtful_helper(&b);
    let o = compare(&[
        common::arm_1().as_os_str(),
        b.as_os_str(),
        "--json".as_ref(),
    ]);
    assert!(o.status.success(), "{}", common::output_text(&o));
    let rows: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
    let row = rows
        .iter()
        .find(|r| r["instance"] == "pseudoXOF-256" && r["message_bytes"] == 32)
        .unwrap();
    assert_eq!(row["verdict"], "doubtful", "{row}");
    assert_eq!(row["doubtful_divisor"], "sm3hash-256", "{row}");
    let why = row["why"].as_str().unwrap();
    assert!(
        why.starts_with("B: its × pseudoXOF divides by sm3hash-256 at 32 B, whose figure is doubtful (95 % CI ±30 %"),
        "{why}"
    );
    let own = rows
        .iter()
        .find(|r| r["instance"] == "sm3hash-256")
        .unwrap();
    assert_eq!(own["verdict"], "doubtful");
    assert_eq!(
        own["doubtful_divisor"],
        Value::Null,
        "its own figure: {own}"
    );

    let o = compare(&[common::arm_1().as_os_str(), b.as_os_str()]);
    assert!(o.status.success(), "{}", common::output_text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out
        .lines()
        .find(|l| l.starts_with("| `pseudoXOF-256` | 32 B |"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.contains("| ⚠ × pseudoXOF: divisor `sm3hash-256` doubtful |"),
        "the ratio cell names the helper: {line}"
    );
}

#[test]
fn beside_a_published_dataset_only_the_jobs_in_common_are_listed_unless_all() {
    let tmp = tempfile::tempdir().unwrap();
    let b = tmp.path().join("b");
    run_with_a_doubtful_helper(&b);
    let rows_of = |o: &std::process::Output| -> Vec<Value> {
        assert!(o.status.success(), "{}", common::output_text(o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let o = compare(&[
        common::arm_1().as_os_str(),
        b.as_os_str(),
        "--json".as_ref(),
    ]);
    let rows = rows_of(&o);
    assert_eq!(rows.len(), 2, "the two jobs B has: {rows:?}");
    assert!(rows.iter().all(|r| r["verdict"] != "only_in_a"), "{rows:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("job(s) only in A or only in B left out (only the jobs both sides have, the default beside a published dataset): `--all` lists them"),
        "{err}"
    );
    // --all lists every published job, most of them only in A.
    let all = rows_of(&compare(&[
        common::arm_1().as_os_str(),
        b.as_os_str(),
        "--json".as_ref(),
        "--all".as_ref(),
    ]));
    assert!(all.len() > 100, "{}", all.len());
    assert!(all.iter().any(|r| r["verdict"] == "only_in_a"));
    // Between two runs, --common asks for the same.
    let (x, y) = (tmp.path().join("x"), tmp.path().join("y"));
    for name in ["uHash-512__hash_32.json", "uHash-512__hash_1024.json"] {
        write(&x, name, &counted_by(published(name), "tsc"));
    }
    write(
        &y,
        "uHash-512__hash_32.json",
        &counted_by(published("uHash-512__hash_32.json"), "tsc"),
    );
    let rows = rows_of(&compare(&[
        x.as_os_str(),
        y.as_os_str(),
        "--json".as_ref(),
        "--common".as_ref(),
    ]));
    assert_eq!(rows.len(), 1, "{rows:?}");
}

#[test]
fn nothing_in_common_with_a_published_dataset_is_refused_by_name() {
    // A: a published dataset of one job (the published campaign.json and one of its records);
    // B: a run of another job.
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    write(
        &a,
        "uHash-512__hash_32.json",
        &published("uHash-512__hash_32.json"),
    );
    write(
        &b,
        "uHash-768__hash_1024.json",
        &counted_by(published("uHash-768__hash_1024.json"), "tsc"),
    );
    let o = compare(&[a.as_os_str(), b.as_os_str()]);
    assert_eq!(o.status.code(), Some(2), "{}", common::output_text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(": no job in common"), "{err}");
    assert!(err.contains("`--all` lists each side's jobs"), "{err}");
    assert!(String::from_utf8_lossy(&o.stdout).is_empty());
    // --all shows the two one-sided rows instead.
    let o = compare(&[a.as_os_str(), b.as_os_str(), "--all".as_ref()]);
    assert!(o.status.success(), "{}", common::output_text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("only in A") && out.contains("only in B"),
        "{out}"
    );
}
