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

/// A published x86_1 page in text form (headings and tables only).
fn page(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/seed-pages")
        .join(name)
}

#[test]
fn a_published_page_sets_its_means_and_its_environment_beside_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    write_published(&run, "hash-05", "uHash-512__hash_32.json");
    write_published(&run, "hash-05", "uHash-512__hash_1024.json");
    let out = tmp.path().join("pages");
    let o = report(&run, &page("hash-05_uHash_x86_1.txt"), &out);
    assert!(o.status.success(), "{}", common::output_text(&o));
    let summary = std::fs::read_to_string(out.join("performance/summary_here.md")).unwrap();
    let section = summary
        .split("## Beside the published figures")
        .nth(1)
        .unwrap_or_else(|| panic!("{summary}"));
    for line in [
        "- counter: A the harness's user-mode core cycles (perf_event; a page does not name its counter, the harness's method does) · B tsc: different units, so B / A is not a speed-up",
        "- build flags: A guide · B guide: the same",
        "| instance | message | mean cycles here | mean cycles published | here / published |",
        "| `uHash-512` | 32 B | 61.6 k | 58.0 k | 1.06× |",
        "| `uHash-512` | 1 KiB | 671.7 k | 640.8 k | 1.05× |",
    ] {
        assert!(section.lines().any(|l| l == line), "{line}\n{section}");
    }
    assert!(
        section.lines().any(|l| l
            .starts_with("- clock: A max 2.10 GHz, governor performance, turbo off, SMT off · B ")),
        "{section}"
    );

    // A run of jobs the page does not have.
    let other = tmp.path().join("other");
    write_published(&other, "iccs", "pseudohash-512__hash_32.json");
    let o = report(
        &other,
        &page("hash-05_uHash_x86_1.txt"),
        &tmp.path().join("p2"),
    );
    assert_eq!(o.status.code(), Some(2), "{}", common::output_text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("hash-05_uHash_x86_1.txt: no job in common with "),
        "{}",
        common::output_text(&o)
    );
}
