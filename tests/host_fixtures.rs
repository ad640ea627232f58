//! Host checks on the fixture trees of `tests/fixtures/host/`: the exact status of every check
//! in every tree (`common::host_checks::CASES`), the harness's problem sentences, and every
//! check seen both passing and failing (or warning). Probes come from each tree's
//! `cyclescope-probes.toml`, so nothing here depends on the machine the tests run on. The
//! environment blocks are `host_environment.rs`.

mod common;

use common::host_checks::{CASES, report};
use cyclescope_core::host::{
    self, HostCheck, HostError, HostReport, HostRoot, Probes, Status, check_host, refuse_unfixed,
};

use Status::{Fail as F, Pass as P, Skip as S, Unknown as U, Warn as W};

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

#[test]
fn a_fixture_root_without_probes_file_is_an_error_that_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let err = Probes::for_root(&HostRoot::new(dir.path())).unwrap_err();
    assert!(err.to_string().contains(host::PROBES_FILE), "{err}");
}
