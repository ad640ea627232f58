//! Host checks and the environment block on the fixture trees of `tests/fixtures/host/`:
//! the exact status of every check in every tree, the harness's problem sentences, every check
//! seen both passing and failing (or warning), and environment blocks against a published
//! record. Probes come from each tree's `cyclescope-probes.toml`, so nothing here depends on the
//! machine the tests run on.

use std::path::{Path, PathBuf};

use cyclescope_core::host::{
    self, HostCheck, HostError, HostReport, HostRoot, Probes, Status, check_host, fixed_env_diff,
    refuse_unfixed,
};
use serde_json::{Map, Value, json};

use Status::{Fail as F, Pass as P, Skip as S, Unknown as U, Warn as W};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/host")
}

fn root(tree: &str) -> HostRoot {
    HostRoot::new(fixtures().join(tree))
}

fn report(tree: &str, cpu: usize) -> HostReport {
    let root = root(tree);
    let mut probes = Probes::for_root(&root).expect("fixture probes");
    check_host(&root, cpu, &mut probes)
}

fn environment(tree: &str, cpu: usize) -> Map<String, Value> {
    let root = root(tree);
    let mut probes = Probes::for_root(&root).expect("fixture probes");
    host::environment(&root, cpu, &mut probes)
}

struct Case {
    tree: &'static str,
    cpu: usize,
    /// In `HostCheck::all()` order: architecture, cycle counter, turbo, governor, frequency
    /// pinned, SMT, hybrid core, CPU usable, clock steady | isolation, ASLR, load average,
    /// busy CPU, hypervisor.
    expect: [Status; 14],
    problems: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        tree: "tuned-intel",
        cpu: 2,
        expect: [P, P, P, P, P, P, P, P, S, P, P, P, P, P],
        problems: &[],
    },
    Case {
        tree: "untuned-laptop",
        cpu: 3,
        expect: [P, F, F, F, S, F, S, P, S, W, P, W, W, P],
        problems: &[
            "hardware cycle counter unavailable: set kernel.perf_event_paranoid=2",
            "turbo/boost is enabled",
            "CPU 3 governor is powersave, not performance",
            "CPU 3 shares its core with CPUs 2,3 (SMT on)",
        ],
    },
    Case {
        tree: "hybrid-ecore",
        cpu: 16,
        expect: [P, P, P, P, P, P, F, P, S, W, W, P, P, P],
        problems: &["CPU 16 is not a performance core (cpu_core: 0-15)"],
    },
    Case {
        tree: "amd-boost",
        cpu: 15,
        expect: [P, P, F, P, P, P, S, F, S, P, P, P, P, P],
        problems: &[
            "turbo/boost is enabled",
            "CPU 15 cannot be used by this process (cpuset)",
        ],
    },
    Case {
        tree: "vm-no-cpufreq",
        cpu: 1,
        expect: [P, F, U, S, S, P, S, P, F, W, P, P, P, W],
        problems: &[
            "hardware cycle counter unavailable: no PMU (perf_event_open: ENOENT)",
            "CPU 1: no cpufreq and no cycle counter to measure the clock",
        ],
    },
    Case {
        tree: "arm-oryon-pinned",
        cpu: 3,
        expect: [P, P, P, P, P, P, S, P, S, W, P, P, P, P],
        problems: &[],
    },
    Case {
        tree: "arm-oryon-pinned",
        cpu: 11,
        expect: [P, P, P, P, F, P, S, P, S, W, P, P, P, P],
        problems: &[
            "CPU 11 clock not pinned (scaling_min_freq 710400 != scaling_max_freq 3417600)",
        ],
    },
    Case {
        tree: "arm-firmware-clock",
        cpu: 3,
        expect: [P, P, U, S, S, P, S, P, P, W, P, P, P, P],
        problems: &[],
    },
    Case {
        tree: "arm-firmware-clock",
        cpu: 7,
        expect: [P, P, U, S, S, P, S, P, P, W, P, P, P, P],
        problems: &[],
    },
    Case {
        tree: "arm-firmware-clock",
        cpu: 11,
        expect: [P, P, U, S, S, P, S, P, F, W, P, P, P, P],
        problems: &["CPU 11 clock is not steady without cpufreq control (2.850-3.300 GHz)"],
    },
    Case {
        tree: "riscv-board",
        cpu: 3,
        expect: [F, F, U, S, S, P, S, P, S, W, P, P, P, P],
        problems: &[
            "architecture riscv64 has no guide configuration",
            "hardware cycle counter unavailable: no PMU (perf_event_open: EOPNOTSUPP)",
        ],
    },
];

#[test]
fn every_check_of_every_tree_has_its_exact_status() {
    let mut wrong = Vec::new();
    for case in CASES {
        let r = report(case.tree, case.cpu);
        assert_eq!(r.checks.len(), HostCheck::all().count());
        for (got, (&want, check)) in r
            .checks
            .iter()
            .zip(case.expect.iter().zip(HostCheck::all()))
        {
            assert_eq!(got.check, check);
            if got.status != want {
                wrong.push(format!(
                    "{} CPU {}: {} is {:?}, expected {:?} ({})",
                    case.tree,
                    case.cpu,
                    check.id(),
                    got.status,
                    want,
                    got.value
                ));
            }
        }
        assert_eq!(
            r.problems(),
            case.problems,
            "{} CPU {}",
            case.tree,
            case.cpu
        );
        assert_eq!(r.is_ready(), case.problems.is_empty());
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

#[test]
fn every_check_is_seen_both_passing_and_failing() {
    let reports: Vec<HostReport> = CASES.iter().map(|c| report(c.tree, c.cpu)).collect();
    for check in HostCheck::all() {
        let seen: Vec<Status> = reports
            .iter()
            .filter_map(|r| r.result(check))
            .map(|c| c.status)
            .collect();
        let bad = if check.is_harness_condition() { F } else { W };
        assert!(seen.contains(&P), "{} never passes", check.id());
        assert!(seen.contains(&bad), "{} never reaches {bad:?}", check.id());
    }
}

#[test]
fn results_carry_values_hints_and_harness_origin() {
    for case in CASES {
        for c in report(case.tree, case.cpu).checks {
            assert!(
                !c.value.is_empty(),
                "{} {}: empty value",
                case.tree,
                c.check.id()
            );
            match c.status {
                F => assert!(c.problem.is_some() && c.hint.is_some()),
                W | U => assert!(c.problem.is_none() && c.hint.is_some()),
                P | S => assert!(c.problem.is_none() && c.hint.is_none()),
            }
            assert!(!c.beyond_harness || c.check == HostCheck::CycleCounter);
        }
    }
    let vm = report("vm-no-cpufreq", 1);
    let counter = vm.result(HostCheck::CycleCounter).unwrap();
    assert!(counter.beyond_harness);
    assert_eq!(
        counter.value,
        "perf_event_paranoid=2, but no hardware cycle counter (perf_event_open: ENOENT) — TSC \
         reference cycles will be used"
    );
    let clock = vm.result(HostCheck::ClockSteady).unwrap();
    assert!(!clock.beyond_harness);
    assert!(
        clock.value.contains("tsc rate, 2.596 GHz"),
        "{}",
        clock.value
    );
    let laptop = report("untuned-laptop", 3);
    let hint = |r: &HostReport, c| r.result(c).unwrap().hint.clone().unwrap();
    assert_eq!(
        hint(&laptop, HostCheck::Governor),
        "sudo cpupower -c 3 frequency-set -g performance"
    );
    assert_eq!(
        hint(&laptop, HostCheck::Turbo),
        "echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/no_turbo"
    );
    assert_eq!(
        hint(&laptop, HostCheck::CycleCounter),
        "sudo sysctl kernel.perf_event_paranoid=2"
    );
    assert_eq!(
        hint(&laptop, HostCheck::Smt),
        "echo off | sudo tee /sys/devices/system/cpu/smt/control"
    );
    let isolation = hint(&laptop, HostCheck::Isolation);
    assert!(
        isolation.starts_with("shield it now with `sudo cyclescope tune --cpu 3 --apply`")
            && isolation.contains("boot with isolcpus=3 nohz_full=3 rcu_nocbs=3"),
        "{isolation}"
    );
    assert!(hint(&report("hybrid-ecore", 16), HostCheck::HybridCore).contains("--cpu 14"));
    let busy = laptop.result(HostCheck::BusyCpu).unwrap();
    assert!(
        busy.value.contains("20931 (Isolated Web Co)"),
        "{}",
        busy.value
    );
    let amd = report("amd-boost", 15);
    let turbo = amd.result(HostCheck::Turbo).unwrap();
    assert!(
        turbo.value.contains("cpufreq/policy15/boost=1")
            && turbo.value.contains("amd_pstate active")
    );
    let retried = report("arm-firmware-clock", 7);
    assert!(
        retried
            .result(HostCheck::ClockSteady)
            .unwrap()
            .value
            .ends_with("probe 2 of 3")
    );
}

#[test]
fn per_policy_boost_alone_warns_beyond_the_harness() {
    let dir = tempfile::tempdir().unwrap();
    let put = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    put(
        host::PROBES_FILE,
        "machine = \"x86_64\"\nperf_event_open = \"ok\"\n",
    );
    put("sys/devices/system/cpu/amd_pstate/status", "active\n");
    put("sys/devices/system/cpu/cpufreq/policy2/boost", "1\n");
    put("sys/devices/system/cpu/cpufreq/policy2/related_cpus", "2\n");
    put("sys/devices/system/cpu/cpufreq/policy3/boost", "1\n");
    put("sys/devices/system/cpu/cpufreq/policy3/related_cpus", "3\n");
    let root = HostRoot::new(dir.path());
    let mut probes = Probes::for_root(&root).unwrap();
    let r = check_host(&root, 2, &mut probes);
    let turbo = r.result(HostCheck::Turbo).unwrap();
    assert_eq!(turbo.status, W, "{}", turbo.value);
    assert_eq!(
        turbo.hint.as_deref(),
        Some("echo 0 | sudo tee /sys/devices/system/cpu/cpufreq/policy2/boost")
    );
    assert!(!r.problems().iter().any(|p| p.contains("turbo")));
}

#[test]
fn refusal_names_the_problems_unless_allowed() {
    assert_eq!(
        refuse_unfixed(&report("tuned-intel", 2), false).unwrap(),
        Vec::<String>::new()
    );
    let laptop = report("untuned-laptop", 3);
    let err = refuse_unfixed(&laptop, false).unwrap_err();
    assert!(matches!(&err, HostError::Unfixed { cpu: 3, problems } if problems.len() == 4));
    let text = err.to_string();
    assert!(text.starts_with(
        "refusing to measure on an unfixed host (use --allow-unfixed-host for tests)"
    ));
    assert!(text.contains("CPU 3 governor is powersave, not performance"));
    assert_eq!(refuse_unfixed(&laptop, true).unwrap(), laptop.problems());
}

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

#[test]
fn a_fixture_root_without_probes_file_is_an_error_that_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let err = Probes::for_root(&HostRoot::new(dir.path())).unwrap_err();
    assert!(err.to_string().contains(host::PROBES_FILE), "{err}");
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
