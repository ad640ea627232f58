//! `compare RUN DATASET` across hosts: a run measured here (this host's counter, its baseline
//! pseudoXOF-512 beside the job) against the published arm_1 dataset (another host, another counter)
//! compares the `× pseudoXOF` ratios, counter-free, and says so, instead of refusing every job
//! as "different cycle counters". Whatever the verdict (the hosts differ), a job both have with
//! its baseline is never "not comparable". The report pages of the run, given the published
//! dataset, show the published `× pseudoXOF` beside ours.

mod common;

use serde_json::Value;

#[test]
fn a_run_compares_with_a_published_dataset_on_its_pseudoxof_ratios_counter_free() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let o = common::cyclescope()
        .args([
            "run",
            "pseudohash-512",
            "pseudoXOF-512",
            "--lengths",
            "32,1024",
            "--trials",
            "3",
            "--trial-target",
            "0.02",
            "--allow-unfixed-host",
        ])
        .arg("--out")
        .arg(&run)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::output_text(&o));

    let o = common::cyclescope()
        .arg("compare")
        .arg(&run)
        .arg(common::arm_1())
        .arg("--json")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::output_text(&o));
    let rows: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
    let both: Vec<&Value> = rows
        .iter()
        .filter(|r| r["instance"] == "pseudohash-512")
        .filter(|r| !r["a_mean_cycles"].is_null() && !r["b_mean_cycles"].is_null())
        .collect();
    assert_eq!(both.len(), 2, "{both:?}");
    for r in &both {
        assert_ne!(r["verdict"], "not_comparable", "{r}");
        // A doubtful side (⚠ on a loaded host) is named instead of judged; a judged one is on
        // the ratios, counter-free.
        if r["verdict"] != "doubtful" {
            assert_eq!(r["judged"]["on"], "ratio_to_pseudoxof_counter_free", "{r}");
        }
    }

    let o = common::cyclescope()
        .arg("compare")
        .arg(&run)
        .arg(common::arm_1())
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&o.stdout);
    if rows.iter().any(|r| !r["judged"].is_null()) {
        assert!(md.contains("× pseudoXOF, counter-free"), "{md}");
        assert!(
            md.contains("counter-free: the two runs were counted by different cycle counters"),
            "{md}"
        );
    }

    let pages = tmp.path().join("pages");
    let o = common::cyclescope()
        .arg("report")
        .arg(&run)
        .arg("--published")
        .arg(common::arm_1())
        .args(["--no-figures", "--system", "here"])
        .arg("--out")
        .arg(&pages)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::output_text(&o));
    let summary = std::fs::read_to_string(pages.join("performance/summary_here.md")).unwrap();
    let published_ratio = |bytes: u64| {
        let mean = |name: String| -> f64 {
            let path = common::arm_1().join("records/iccs").join(name);
            let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
            v["mean_cycles"].as_f64().unwrap()
        };
        mean(format!("pseudohash-512__hash_{bytes}.json"))
            / mean(format!("pseudoXOF-512__hash_{bytes}.json"))
    };
    assert!(
        summary.contains("## Beside the published figures"),
        "{summary}"
    );
    for (bytes, size) in [(32, "32 B"), (1024, "1 KiB")] {
        let row = summary
            .lines()
            .find(|l| l.starts_with(&format!("| `pseudohash-512` | {size} | ")))
            .unwrap_or_else(|| panic!("no {size} row:\n{summary}"));
        let published_cell = row.rsplit('|').nth(1).unwrap().trim();
        assert!(
            published_cell.starts_with(&format!("{:.2}×", published_ratio(bytes))),
            "{row}"
        );
    }
}
