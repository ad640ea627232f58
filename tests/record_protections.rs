//! What every timed record says about its figure and its workers beyond the guide's fields:
//! the figure preemption cannot move (`cyclescope.robust`), and the protections its workers
//! were under as the engine read them from outside (`cyclescope.protections`).

mod common;

use serde_json::Value;

#[test]
fn a_record_carries_its_robust_figure_and_its_workers_protections_seen_from_outside() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let o = common::cyclescope()
        .args([
            "run",
            "pseudoXOF-512",
            "--no-reference-jobs",
            "--lengths",
            "1024",
            "--trials",
            "3",
            "--trial-target",
            "0.02",
            "--allow-unfixed-host",
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::output_text(&o));
    let path = std::fs::read_dir(out.join("records/iccs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .unwrap();
    let r: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let add = &r["cyclescope"];
    let robust = &add["robust"];
    assert_eq!(robust["statistic"], "uninterrupted_call_mean", "{add}");
    assert_eq!(robust["trials"], 3, "{robust}");
    let (lo, mean, hi) = (
        robust["ci95_low"].as_f64().unwrap(),
        robust["mean_cycles"].as_f64().unwrap(),
        robust["ci95_high"].as_f64().unwrap(),
    );
    assert!(lo <= mean && mean <= hi && mean > 0.0, "{robust}");
    let p = &add["protections"];
    assert!(p["seccomp"].as_str().unwrap().starts_with("filter"), "{p}");
    assert_eq!(
        (&p["no_new_privs"], &p["no_capabilities"]),
        (&Value::Bool(true), &Value::Bool(true)),
        "{p}"
    );
    let gaps: Vec<&str> = p["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    // Where the machine has control groups (this one does) the worker is in one; where it has
    // none, the gap says so.
    assert!(
        !p["cgroup"].as_str().unwrap().is_empty()
            || gaps.iter().any(|g| g.contains("no control group")),
        "{p}"
    );
    assert!(
        !gaps
            .iter()
            .any(|g| g.contains("seccomp") || g.contains("capabilities") || g.contains("uid")),
        "{p}"
    );
    // Landlock leaves nothing in /proc: the record names the kernel's ABI and what the
    // ruleset handles at it, from the engine's own knowledge. This kernel has scopes (ABI 6).
    let landlock = &p["landlock"];
    let handled: Vec<&str> = landlock["handled"]
        .as_array()
        .unwrap_or_else(|| panic!("no Landlock in {p}"))
        .iter()
        .filter_map(Value::as_str)
        .collect();
    match landlock["kernel_abi"].as_u64() {
        Some(abi) => {
            assert!(
                handled.contains(&"read_file") && handled.contains(&"write_file"),
                "{p}"
            );
            assert_eq!(landlock["enforced_abi"].as_u64(), Some(abi.min(6)), "{p}");
            if abi >= 6 {
                assert_eq!(
                    landlock["scopes"],
                    serde_json::json!(["abstract_unix_socket", "signal"]),
                    "{p}"
                );
                assert!(!gaps.iter().any(|g| g.contains("Landlock")), "{p}");
            }
        }
        None => assert!(gaps.iter().any(|g| g.starts_with("no Landlock")), "{p}"),
    }
    // Root's workers run as an unprivileged user: every uid (real, effective, saved, file).
    if nix::unistd::geteuid().is_root() {
        let uids: Vec<u64> = p["uids"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(Value::as_u64)
            .collect();
        assert!(uids.len() == 4 && !uids.contains(&0), "{p}");
        // And in network, IPC, UTS and mount namespaces of its own (with a /tmp of its own,
        // though this run's folder lies under /tmp), read from outside.
        let own: Vec<&str> = p["own_namespaces"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        for ns in ["net", "ipc", "uts", "mnt"] {
            assert!(own.contains(&ns), "{ns}: {p}");
        }
        assert!(!gaps.iter().any(|g| g.contains("namespace")), "{p}");
        assert!(!gaps.iter().any(|g| g.contains("/tmp")), "{p}");
    }
}
