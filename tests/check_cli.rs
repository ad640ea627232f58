//! End-to-end tests of `cyclescope check`: the real binary on fixture roots (exact output and
//! exit codes) and on this machine (honest rows, whatever the machine is). The JSON schema is
//! the one documented in docs/check-json.md.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use cyclescope_core::counter::{CounterError, PerfCycles};
use serde_json::Value;

const IDS: [&str; 15] = [
    "architecture",
    "cycle_counter",
    "turbo",
    "governor",
    "frequency_pinned",
    "smt",
    "hybrid_core",
    "cpu_usable",
    "clock_steady",
    "isolation",
    "aslr",
    "load_average",
    "busy_cpu",
    "hypervisor",
    "allocation",
];

fn fixture(tree: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/host")
        .join(tree)
}

fn check(args: &[&str]) -> Output {
    common::cyclescope()
        .arg("check")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cyclescope")
}

/// `check` with a config file holding only `settings` (so the repository's config.toml, which
/// may name a CPU, does not decide the default).
fn check_with_settings(settings: &str, args: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, format!("[settings]\n{settings}")).unwrap();
    let mut all = vec!["--config", config.to_str().unwrap()];
    all.extend_from_slice(args);
    check(&all)
}

/// Validates the documented schema and returns the document.
fn parse(out: &Output) -> Value {
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)));
    let keys: Vec<&str> = doc
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        // The sandbox report (documented) is there exactly when the real host is checked.
        .filter(|&k| k != "sandbox")
        .collect();
    assert_eq!(
        doc.get("sandbox").is_some(),
        doc["root"] == "/",
        "sandbox only for the real host"
    );
    assert!(
        keys == ["schema", "cpu", "root", "ready", "problems", "checks"]
            || keys
                == [
                    "schema",
                    "cpu",
                    "root",
                    "ready",
                    "problems",
                    "checks",
                    "environment"
                ],
        "{keys:?}"
    );
    assert_eq!(doc["schema"], "cyclescope-check/1");
    assert!(doc["cpu"].is_u64() && doc["root"].is_string() && doc["ready"].is_boolean());
    let checks = doc["checks"].as_array().unwrap();
    let ids: Vec<&str> = checks
        .iter()
        .map(|c| c["check"].as_str().unwrap())
        .collect();
    assert_eq!(ids, IDS);
    let mut failed_problems = Vec::new();
    for c in checks {
        let keys: Vec<&str> = c.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "check",
                "title",
                "status",
                "value",
                "problem",
                "beyond_harness",
                "hint"
            ]
        );
        let status = c["status"].as_str().unwrap();
        assert!(
            ["pass", "warn", "fail", "unknown", "skip"].contains(&status),
            "{status}"
        );
        assert!(
            c["title"].is_string() && c["value"].is_string() && c["beyond_harness"].is_boolean()
        );
        assert_eq!(c["problem"].is_string(), status == "fail", "{c}");
        assert_eq!(
            c["hint"].is_string(),
            !matches!(status, "pass" | "skip"),
            "{c}"
        );
        if status == "fail" {
            failed_problems.push(c["problem"].clone());
        }
    }
    assert_eq!(doc["problems"].as_array().unwrap(), &failed_problems);
    assert_eq!(doc["ready"], failed_problems.is_empty());
    let ready_exit = if failed_problems.is_empty() { 0 } else { 1 };
    assert_eq!(out.status.code(), Some(ready_exit));
    doc
}

fn status<'a>(doc: &'a Value, id: &str) -> &'a str {
    doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == id)
        .unwrap()["status"]
        .as_str()
        .unwrap()
}

#[test]
fn tuned_fixture_json_is_ready() {
    let root = fixture("tuned-intel");
    let out = check(&["--root", root.to_str().unwrap(), "--cpu", "2", "--json"]);
    let doc = parse(&out);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(doc["cpu"], 2);
    assert_eq!(doc["ready"], true);
    let statuses: Vec<&str> = IDS.iter().map(|id| status(&doc, id)).collect();
    let mut want = ["pass"; 15];
    want[8] = "skip"; // clock_steady: cpufreq controls the clock
    assert_eq!(statuses, want);
}

#[test]
fn tuned_fixture_text_says_host_ready() {
    let root = fixture("tuned-intel");
    let out = check(&["--root", root.to_str().unwrap(), "--cpu", "2"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.ends_with("\nhost ready\n"), "{text}");
    assert!(!text.contains("HOST:"));
}

#[test]
fn untuned_fixture_lists_the_harness_problems_and_exits_1() {
    let root = fixture("untuned-laptop");
    let out = check_with_settings("", &["--root", root.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{text}");
    let host: Vec<&str> = text.lines().filter(|l| l.starts_with("HOST: ")).collect();
    assert_eq!(
        host,
        [
            "HOST: hardware cycle counter unavailable: set kernel.perf_event_paranoid=2",
            "HOST: turbo/boost is enabled",
            "HOST: CPU 3 governor is powersave, not performance",
            "HOST: CPU 3 shares its core with CPUs 2,3 (SMT on)",
        ],
        "the default CPU is the highest online one (3)"
    );
    assert!(text.ends_with("\n4 problem(s)\n"));
    assert!(text.contains("↳ fix: sudo cpupower -c 3 frequency-set -g performance"));
}

#[test]
fn the_config_cpu_wins_over_the_default_and_the_option_over_both() {
    let root = fixture("untuned-laptop");
    let root = root.to_str().unwrap();
    let doc = parse(&check_with_settings(
        "cpu = 2\n",
        &["--root", root, "--json"],
    ));
    assert_eq!(doc["cpu"], 2);
    let doc = parse(&check_with_settings(
        "cpu = 2\n",
        &["--root", root, "--json", "--cpu", "3"],
    ));
    assert_eq!(doc["cpu"], 3);
}

#[test]
fn environment_is_printed_with_env() {
    let root = fixture("vm-no-cpufreq");
    let out = check(&["--root", root.to_str().unwrap(), "--json", "--env"]);
    let doc = parse(&out);
    let env = &doc["environment"];
    assert_eq!(env["hostname"], "sandbox");
    assert_eq!(env["cycle_source"], "tsc");
    assert_eq!(env["core_clock_hz"], Value::Null);
}

#[test]
fn a_root_without_probes_file_exits_2_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let out = check(&["--root", dir.path().to_str().unwrap(), "--cpu", "0"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cyclescope-probes.toml"), "{err}");
}

/// On the machine running the tests: rows must tell the truth about it. Written against what
/// the test can observe itself (perf_event_open, /proc/cpuinfo, cpufreq files), so it holds on
/// any Linux host; the stricter assertions apply when there is no PMU (a VM like the project's
/// build machine).
#[test]
fn this_host_is_described_honestly() {
    let out = check(&["--json", "--env"]);
    let doc = parse(&out);
    let cpu = doc["cpu"].as_u64().unwrap();
    assert_eq!(doc["root"], "/");
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let online = cyclescope_core::host::parse_cpu_list(&online).unwrap();
    assert!(online.contains(&(cpu as usize)));

    let guide_arch = matches!(std::env::consts::ARCH, "x86_64" | "aarch64");
    assert_eq!(
        status(&doc, "architecture"),
        if guide_arch { "pass" } else { "fail" }
    );

    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap();
    let virtual_machine = cpuinfo.contains("hypervisor");
    assert_eq!(
        status(&doc, "hypervisor"),
        if virtual_machine { "warn" } else { "pass" }
    );
    assert_eq!(doc["environment"]["virtualized"], virtual_machine);

    let has_cpufreq = Path::new(&format!(
        "/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor"
    ))
    .exists();
    if !has_cpufreq {
        assert_eq!(status(&doc, "governor"), "skip");
        assert_eq!(doc["environment"]["cpufreq_governor"], Value::Null);
    }

    let env = &doc["environment"];
    match PerfCycles::open(None) {
        Err(CounterError::NoPmu { .. }) => {
            // No PMU: the counter row must fail and say so, records must not claim core cycles,
            // and the host is not ready.
            assert_eq!(status(&doc, "cycle_counter"), "fail");
            let row = &doc["checks"][1];
            assert!(
                row["value"]
                    .as_str()
                    .unwrap()
                    .contains("no hardware cycle counter")
            );
            assert_eq!(out.status.code(), Some(1));
            assert_ne!(env["cycle_source"], "perf_event:cpu-cycles:u");
            assert_eq!(env["core_clock_hz"], Value::Null);
            assert_eq!(env["core_clock_mhz"], Value::Null);
            assert_eq!(env["ref_to_core_ratio"], Value::Null);
            if !has_cpufreq {
                assert_eq!(status(&doc, "clock_steady"), "fail");
            }
        }
        Err(_) => assert_eq!(status(&doc, "cycle_counter"), "fail"),
        Ok(_) => {
            assert_eq!(env["cycle_source"], "perf_event:cpu-cycles:u");
            let paranoid =
                std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").unwrap_or_default();
            let allowed = ["-1", "0", "1", "2"].contains(&paranoid.trim());
            assert_eq!(
                status(&doc, "cycle_counter"),
                if allowed { "pass" } else { "fail" }
            );
        }
    }
}
