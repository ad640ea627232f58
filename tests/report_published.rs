//! `report --published`: the published figures beside a run's. A run that shares no job with
//! the published side is refused by name ("no job in common") instead of writing pages with
//! nothing beside them.

mod common;

use std::path::Path;

use serde_json::{Value, json};

use cyclescope_core::record::pyjson::to_py_json;

/// One published arm_1 record of `candidate`, as a cyclescope run counting the TSC wrote it,
/// into the run folder `run` (with the published campaign.json, which marks a dataset).
fn write_published(run: &Path, candidate: &str, name: &str) {
    let path = common::arm_1().join("records").join(candidate).join(name);
    let mut r: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    r["cyclescope"] = json!({
        "version": "0.1.0", "mode": "guide", "cycle_source": "tsc",
        "reference_cycles": true, "per_call_source": "tsc", "timer_overhead_ticks": 40.0,
        "per_call": null, "per_call_by_process": [], "trial_spread": null,
        "preempted_ns_by_trial": [], "histogram_v2_base64": null, "elf_load_bytes": null,
        "measurement_cpu": 1, "worker": "cyclescope-worker", "tui_attached": false,
        "host_problems": [], "failure": null
    });
    let dir = run.join("records").join(candidate);
    std::fs::create_dir_all(&dir).unwrap();
    let campaign = run.join("campaign.json");
    if !campaign.exists() {
        std::fs::copy(common::arm_1().join("campaign.json"), &campaign).unwrap();
    }
    std::fs::write(dir.join(name), to_py_json(&r).unwrap()).unwrap();
}

fn report(run: &Path, published: &Path, out: &Path) -> std::process::Output {
    common::cyclescope()
        .arg("report")
        .arg(run)
        .arg("--published")
        .arg(published)
        .args(["--no-figures", "--system", "here"])
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

#[test]
fn a_run_with_no_job_in_common_with_the_published_side_is_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, published) = (tmp.path().join("run"), tmp.path().join("published"));
    // The run: uHash-512 at 32 B with its baseline; the published side: uHash-768 at 1 KiB
    // with its own. Only the baselines' lengths meet, and they are not hash jobs.
    write_published(&run, "hash-05", "uHash-512__hash_32.json");
    write_published(&run, "iccs", "pseudoXOF-512__hash_32.json");
    write_published(&published, "hash-05", "uHash-768__hash_1024.json");
    write_published(&published, "iccs", "pseudoXOF-768__hash_1024.json");
    let out = tmp.path().join("pages");
    let o = report(&run, &published, &out);
    assert_eq!(o.status.code(), Some(2), "{}", common::output_text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("published: no job in common with ")
            && err.contains("nothing to put beside the published figures"),
        "{err}"
    );
    assert!(!out.exists(), "no pages are written");
    // With a job in common, the section is there.
    let o = report(&run, &common::arm_1(), &out);
    assert!(o.status.success(), "{}", common::output_text(&o));
    let summary = std::fs::read_to_string(out.join("performance/summary_here.md")).unwrap();
    assert!(
        summary.contains("## Beside the published figures"),
        "{summary}"
    );
}
