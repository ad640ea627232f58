//! `compare PAGE RUN`: a published x86_1 performance page (text form; the fixture keeps only
//! the headings and tables the parser reads) as side A. Its §4 rows stand beside the run's
//! jobs of the same instance and length, with what the page and the run say of their counter,
//! clock, processor and build flags; a page's mean has no interval, so no row gets a verdict.

mod common;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use cyclescope_core::record::pyjson::to_py_json;

fn page(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/seed-pages")
        .join(name)
}

/// A run holding the published arm_1 uHash-512 records at 32 B and 1 KiB, as a cyclescope
/// run counting the TSC would have written them.
fn run_of_uhash(run: &Path) {
    let dir = run.join("records/hash-05");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        common::arm_1().join("campaign.json"),
        run.join("campaign.json"),
    )
    .unwrap();
    for name in ["uHash-512__hash_32.json", "uHash-512__hash_1024.json"] {
        let path = common::arm_1().join("records/hash-05").join(name);
        let mut r: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        r["cyclescope"] = json!({
            "version": "0.1.0", "mode": "guide", "cycle_source": "tsc",
            "reference_cycles": true, "per_call_source": "tsc", "timer_overhead_ticks": 40.0,
            "per_call": null, "per_call_by_process": [], "trial_spread": null,
            "preempted_ns_by_trial": [], "histogram_v2_base64": null, "elf_load_bytes": null,
            "measurement_cpu": 1, "worker": "cyclescope-worker", "tui_attached": false,
            "host_problems": [], "failure": null
        });
        std::fs::write(dir.join(name), to_py_json(&r).unwrap()).unwrap();
    }
}

fn compare(args: &[&std::ffi::OsStr]) -> std::process::Output {
    common::cyclescope()
        .arg("compare")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_published_page_is_side_a_with_its_environment_beside_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    run_of_uhash(&run);
    let p = page("hash-05_uHash_x86_1.txt");
    let o = compare(&[p.as_os_str(), run.as_os_str()]);
    assert!(o.status.success(), "{}", common::output_text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("(published page of system x86_1, hash-05: 24 rows of its §4 table)"),
        "{out}"
    );
    for line in [
        "- counter: A the harness's user-mode core cycles (perf_event; a page does not name its counter, the harness's method does) · B tsc: different units, so B / A is not a speed-up",
        "- clock: A max 2.10 GHz, governor performance, turbo off, SMT off · B ",
        "- processor: A 12th Gen Intel(R) Core(TM) i7-12700 (CPU 2, one core) · B ",
        "- build flags: A guide · B guide: the same",
    ] {
        assert!(out.lines().any(|l| l.starts_with(line)), "{line}\n{out}");
    }
    // Only the two jobs both have (the page is published), A's means as the page prints them.
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("| `")).collect();
    assert_eq!(rows.len(), 2, "{out}");
    assert!(
        rows[0].starts_with("| `uHash-512` | 32 B | 58.0 k | "),
        "{out}"
    );
    assert!(
        rows[1].starts_with("| `uHash-512` | 1024 B | 640.8 k | "),
        "{out}"
    );
    for r in &rows {
        assert!(
            r.ends_with(
                "| not comparable: A is a published page: a mean as printed, with no interval to weigh |"
            ),
            "{r}"
        );
    }
    // The export keeps its rows; the checks go to stderr.
    let o = compare(&[p.as_os_str(), run.as_os_str(), "--json".as_ref()]);
    assert!(o.status.success(), "{}", common::output_text(&o));
    let rows: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["a_mean_cycles"], 58000.0);
    assert_eq!(rows[0]["verdict"], "not_comparable");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("build flags: A guide · B guide: the same"),
        "{err}"
    );
    // --all lists the page's other 22 rows as only in A.
    let o = compare(&[
        p.as_os_str(),
        run.as_os_str(),
        "--json".as_ref(),
        "--all".as_ref(),
    ]);
    let rows: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(rows.len(), 24);
}

#[test]
fn a_page_goes_first_and_a_file_that_is_no_page_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    run_of_uhash(&run);
    let p = page("hash-05_uHash_x86_1.txt");
    let o = compare(&[run.as_os_str(), p.as_os_str()]);
    assert_eq!(o.status.code(), Some(2), "{}", common::output_text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("a published page is side A (`compare PAGE RUN`)"),
        "{}",
        common::output_text(&o)
    );
    let not_a_page = tmp.path().join("notes.txt");
    std::fs::write(&not_a_page, "4. Performance\nto do\n").unwrap();
    let o = compare(&[not_a_page.as_os_str(), run.as_os_str()]);
    assert_eq!(o.status.code(), Some(2), "{}", common::output_text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("notes.txt: no `4. Performance` table"),
        "{}",
        common::output_text(&o)
    );
}
