//! The environment block on the fixture trees of `tests/fixtures/host/` and `tests/fixtures/pmu/`:
//! against a published record, every key in its order with honest clocks in every tree, the
//! fixed keys that differ between a P-core and an E-core, and the core PMU chosen for the
//! measurement CPU of a hybrid machine. Probes come from each tree's `cyclescope-probes.toml`,
//! so nothing here depends on the machine the tests run on.

mod common;

use std::path::Path;

use common::host_checks::{CASES, environment};
use cyclescope_core::host::{self, HostRoot, fixed_env_diff};
use serde_json::{Map, Value, json};

const HARNESS_KEYS: [&str; 26] = [
    "hostname",
    "architecture",
    "cpu_model",
    "machine",
    "cpu_number",
    "logical_cpus_online",
    "virtualized",
    "memory_total_kib",
    "os",
    "kernel",
    "compiler",
    "cmake",
    "python",
    "perf_event_paranoid",
    "cpufreq_governor",
    "cpufreq_driver",
    "cpufreq_min_khz",
    "cpufreq_max_khz",
    "cpufreq_avg_khz",
    "intel_pstate_no_turbo",
    "cpufreq_boost",
    "smt_control",
    "core_clock_hz",
    "core_clock_min_hz",
    "core_clock_max_hz",
    "core_clock_mhz",
];
const CYCLESCOPE_KEYS: [&str; 6] = [
    "cycle_source",
    "clock_source",
    "reference_clock_hz",
    "ref_to_core_ratio",
    "core_type",
    "core_pmu_type",
];

#[test]
fn environment_of_arm_1_reproduces_the_published_record() {
    // `environment` of performance/data/arm_1/records/iccs/pseudoXOF-1024__hash_1024.json.
    let published = json!({
        "hostname": "vivo", "architecture": "aarch64", "cpu_model": "Qualcomm Oryon",
        "machine": "ASUS Vivobook S 15", "cpu_number": 3, "logical_cpus_online": "0-11",
        "virtualized": false, "memory_total_kib": 31295756, "os": "Ubuntu 26.04.1 LTS",
        "kernel": "7.0.0-34-generic", "compiler": "gcc (Ubuntu 15.2.0-16ubuntu1) 15.2.0",
        "cmake": "cmake version 4.2.3", "python": "3.14.4", "perf_event_paranoid": "2",
        "cpufreq_governor": "performance", "cpufreq_driver": "scmi",
        "cpufreq_min_khz": "2707200", "cpufreq_max_khz": "2707200", "cpufreq_avg_khz": "2703375",
        "intel_pstate_no_turbo": null, "cpufreq_boost": "0", "smt_control": "notsupported",
        "core_clock_hz": 2695228108u64, "core_clock_min_hz": 2686861117u64,
        "core_clock_max_hz": 2696419686u64, "core_clock_mhz": 2700
    });
    let env = environment("arm-oryon-pinned", 3);
    let harness: Map<String, Value> = env
        .iter()
        .take(HARNESS_KEYS.len())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    // Same keys, same order, same values: serialisations are identical.
    assert_eq!(
        serde_json::to_string(&harness).unwrap(),
        serde_json::to_string(&published).unwrap()
    );
    assert_eq!(env["cycle_source"], "perf_event:cpu-cycles:u");
    assert_eq!(env["clock_source"], "perf_event:cpu-cycles:u");
    assert_eq!(env["reference_clock_hz"], 19_200_000);
    assert!(fixed_env_diff(published.as_object().unwrap(), &env).is_empty());
}

#[test]
fn every_environment_has_the_keys_in_order_and_honest_clocks() {
    let want: Vec<&str> = HARNESS_KEYS
        .iter()
        .chain(&CYCLESCOPE_KEYS)
        .copied()
        .collect();
    for case in CASES {
        let env = environment(case.tree, case.cpu);
        let keys: Vec<&str> = env.keys().map(String::as_str).collect();
        assert_eq!(keys, want, "{}", case.tree);
        assert_eq!(env["cpu_number"], case.cpu);
    }
    let vm = environment("vm-no-cpufreq", 1);
    assert_eq!(vm["virtualized"], true);
    assert_eq!(vm["cpu_model"], "AMD EPYC");
    assert_eq!(vm["cycle_source"], "tsc");
    assert_eq!(vm["clock_source"], "tsc");
    assert_eq!(vm["reference_clock_hz"], 2_596_154_457u64);
    for k in [
        "core_clock_hz",
        "core_clock_min_hz",
        "core_clock_max_hz",
        "core_clock_mhz",
        "ref_to_core_ratio",
        "cpufreq_governor",
        "cmake",
    ] {
        assert_eq!(vm[k], Value::Null, "{k}");
    }
    let tuned = environment("tuned-intel", 2);
    assert_eq!(tuned["cpu_model"], "12th Gen Intel(R) Core(TM) i7-12700");
    assert_eq!(tuned["memory_total_kib"], 32_550_912);
    assert_eq!(tuned["os"], "Debian GNU/Linux 13 (trixie)");
    assert_eq!(tuned["intel_pstate_no_turbo"], "1");
    assert_eq!(tuned["core_clock_mhz"], 2100);
    assert_eq!(
        environment("riscv-board", 3)["machine"],
        "StarFive VisionFive 2 v1.3B"
    );
    assert_eq!(environment("riscv-board", 3)["cycle_source"], Value::Null);
}

#[test]
fn fixed_keys_differ_between_a_p_core_and_an_e_core() {
    let p_core = environment("tuned-intel", 2);
    let e_core = environment("hybrid-ecore", 16);
    let keys: Vec<&str> = fixed_env_diff(&p_core, &e_core)
        .iter()
        .map(|d| d.key)
        .collect();
    assert_eq!(keys, ["cpu_number", "cpufreq_max_khz", "core_clock_mhz"]);
}

fn pmu_tree(name: &str) -> HostRoot {
    HostRoot::new(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/pmu")
            .join(name),
    )
}

/// (CPU, core type, extended type the cycles event carries).
type PmuChoice = (usize, &'static str, Option<u32>);

/// The PMU chosen for each CPU of each fixture tree.
#[test]
fn the_hybrid_fixtures_select_the_core_pmu_of_the_measurement_cpu() {
    let cases: [(&str, &[PmuChoice]); 3] = [
        (
            "i7-12700",
            &[
                (0, "cpu_core", Some(4)),
                (15, "cpu_core", Some(4)),
                (16, "cpu_atom", Some(10)),
                (19, "cpu_atom", Some(10)),
            ],
        ),
        (
            "rk3588",
            &[
                (0, "armv8_cortex_a55", Some(8)),
                (3, "armv8_cortex_a55", Some(8)),
                (4, "armv8_cortex_a76", Some(9)),
                (7, "armv8_cortex_a76", Some(9)),
            ],
        ),
        // One core PMU: the plain generic event, no extended type.
        (
            "acpi-arm",
            &[(0, "armv8_pmuv3_0", None), (11, "armv8_pmuv3_0", None)],
        ),
    ];
    for (tree, cpus) in cases {
        let root = pmu_tree(tree);
        // The uncore PMUs (cstate, DSU, SPE, i915, …) are never core PMUs.
        let names: Vec<String> = host::core_pmus(&root)
            .unwrap()
            .into_iter()
            .map(|p| p.name)
            .collect();
        assert_eq!(
            names.len(),
            if tree == "acpi-arm" { 1 } else { 2 },
            "{tree}: {names:?}"
        );
        for &(cpu, core_type, extended) in cpus {
            let pmu = host::core_pmu(&root, cpu).unwrap().expect("a core PMU");
            assert_eq!(
                (pmu.core_type(), pmu.extended_type()),
                (core_type, extended),
                "{tree} CPU {cpu}"
            );
        }
    }
    let err = host::core_pmu(&pmu_tree("rk3588"), 8).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("CPU 8 is on none of the core PMUs"),
        "{err}"
    );
}

#[test]
fn lanes_of_one_core_type_pass_and_mixed_ones_are_refused() {
    let intel = pmu_tree("i7-12700");
    assert_eq!(host::check_one_core_type(&intel, &[3, 5, 7]), Ok(()));
    assert_eq!(host::check_one_core_type(&intel, &[17, 19]), Ok(()));
    let err = host::check_one_core_type(&intel, &[14, 16]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "these CPUs are of different core types, whose cycles are not comparable: CPU 14 on \
         cpu_core, CPU 16 on cpu_atom; pick CPUs of one type (one PMU) for the lanes"
    );
    let arm = pmu_tree("rk3588");
    assert!(host::check_one_core_type(&arm, &[1, 6]).is_err());
    assert_eq!(host::check_one_core_type(&arm, &[5, 6, 7]), Ok(()));
}

#[test]
fn every_record_names_the_core_type_it_counted_on() {
    assert_eq!(environment("hybrid-ecore", 16)["core_type"], "cpu_atom");
    assert_eq!(environment("hybrid-ecore", 16)["core_pmu_type"], 10);
    assert_eq!(environment("tuned-intel", 2)["core_type"], "cpu_core");
    assert_eq!(environment("vm-no-cpufreq", 1)["core_type"], Value::Null);
}
