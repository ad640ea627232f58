//! A protection the workers run without is said once a run, whatever the number of jobs and
//! lanes that meet it, and kept in every record. `nobody` can make no control group on this
//! machine (CI's too), so its run always lacks one.

mod common;

use std::sync::atomic::AtomicBool;
use std::time::Duration;

#[test]
fn a_missing_protection_is_said_once_a_run_and_kept_in_every_record() {
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    // The run as `nobody` cannot queue in the suite's lock folder (root's): the test holds
    // both CPUs there for it, as any measuring test of the suite would.
    let cpus = cyclescope_core::cpu::allowed();
    let holder = tempfile::tempdir().unwrap();
    let held = cyclescope_core::cpu::lock::lock_all(
        &common::suite_lock_dir(),
        cpus,
        &holder.path().join("gaps"),
        Duration::from_secs(common::SUITE_LOCK_WAIT_S.parse().unwrap()),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    let t = common::open_tempdir();
    let out = t.path().join("run");
    let cpu_list = cpus
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let o = common::cyclescope_as_nobody(t.path())
        .args([
            "run",
            "pseudohash-512",
            "sm3hash-256",
            "--no-reference-jobs",
            "--lengths",
            "64,1024",
            "--trials",
            "2",
            "--trial-target",
            "0.01",
            "--allow-unfixed-host",
            "--cpus",
            &cpu_list,
        ])
        .arg("--out")
        .arg(&out)
        .current_dir(t.path())
        .env_remove("XDG_RUNTIME_DIR")
        .env("HOME", t.path())
        .env("XDG_DATA_HOME", t.path().join("data"))
        .env("XDG_CACHE_HOME", t.path().join("cache"))
        .env(
            cyclescope_core::cpu::lock::LOCK_DIR_ENV,
            t.path().join("locks"),
        )
        .output()
        .unwrap();
    drop(held);
    let said = common::output_text(&o);
    assert!(o.status.success(), "{said}");
    let lines: Vec<&str> = said
        .lines()
        .filter(|l| l.contains("the workers run without a protection: "))
        .collect();
    let group: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains("no control group"))
        .collect();
    assert_eq!(group.len(), 1, "{said}");
    // No gap twice, and each in every record of the run (four jobs).
    let mut unique = lines.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), lines.len(), "{said}");
    let records: Vec<serde_json::Value> = std::fs::read_dir(out.join("records/iccs"))
        .unwrap()
        .flatten()
        .map(|e| serde_json::from_slice(&std::fs::read(e.path()).unwrap()).unwrap())
        .collect();
    assert_eq!(records.len(), 4, "{said}");
    for r in &records {
        let gaps = r["cyclescope"]["protections"]["gaps"].to_string();
        assert!(gaps.contains("no control group"), "{gaps}");
        for line in &lines {
            let gap = line
                .split("the workers run without a protection: ")
                .nth(1)
                .unwrap();
            assert!(gaps.contains(gap.trim()), "{gap}: {gaps}");
        }
    }
}
