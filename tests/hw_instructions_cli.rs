//! `--counter hw-instructions` end to end: the real binary and its real trial workers. Where the
//! PMU's `instructions:u` do not open (a virtual machine without a PMU, as CI's), the run
//! refuses before any job, naming the errno and the valgrind counter that works anywhere, and
//! writes no record; where they open, every record names `perf_event:instructions:u` — never
//! the reference counter in their place.

mod common;

use std::path::Path;

const CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/config.toml");

/// A hardware PMU the kernel registered, as sysfs shows it (x86 `cpu`, `cpu_core`,
/// `cpu_atom`; Arm `armv8_*`): without one, the event cannot open.
fn sysfs_has_hardware_pmu() -> bool {
    std::fs::read_dir("/sys/bus/event_source/devices")
        .map(|dir| {
            dir.filter_map(Result::ok).any(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name == "cpu" || name.starts_with("cpu_") || name.starts_with("armv")
            })
        })
        .unwrap_or(false)
}

fn records_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.parent().is_some_and(|d| d.ends_with("records/iccs")) {
                found.push(p);
            }
        }
    }
    found
}

#[test]
fn hardware_instructions_refuse_by_errno_where_they_do_not_open_and_count_where_they_do() {
    let t = tempfile::tempdir().unwrap();
    let o = common::cyclescope_in(
        t.path(),
        &[
            "run",
            "sm3hash-256",
            "--no-reference-jobs",
            "--counter",
            "hw-instructions",
            "--allow-unfixed-host",
            "--lengths",
            "32",
            "--trials",
            "2",
            "--trial-target",
            "0.01",
            "--config",
            CONFIG,
            "--out",
            "out",
        ],
    );
    let text = common::output_text(&o);
    let refused = text.contains("--counter hw-instructions: the hardware instructions:u event");
    if !sysfs_has_hardware_pmu() {
        assert!(refused, "no PMU here, yet no refusal:\n{text}");
    }
    if refused {
        assert!(!o.status.success(), "{text}");
        assert!(
            text.contains("perf_event_open: E"),
            "no errno named:\n{text}"
        );
        assert!(text.contains("`--counter instructions`"), "{text}");
        assert!(
            records_under(t.path()).is_empty(),
            "a refused run wrote records:\n{text}"
        );
        return;
    }
    assert!(o.status.success(), "{text}");
    let records = records_under(&t.path().join("out"));
    assert!(!records.is_empty(), "{text}");
    for p in records {
        let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        assert_eq!(
            r["cyclescope"]["cycle_source"],
            "perf_event:instructions:u",
            "{}",
            p.display()
        );
    }
}
