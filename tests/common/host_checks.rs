//! The host checks and the environment block on the fixture trees of `tests/fixtures/host/`,
//! each with its own probes (`cyclescope-probes.toml`), for `host_fixtures.rs` and
//! `host_environment.rs`; and every tree's expected status of every check (`CASES`).

use std::path::{Path, PathBuf};

use cyclescope_core::host::{self, HostReport, HostRoot, Probes, Status, check_host};
use serde_json::{Map, Value};

use Status::{Fail as F, Pass as P, Skip as S, Unknown as U, Warn as W};

/// The fixture trees' folder.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/host")
}

/// The fixture tree `tree` as a host root.
pub fn root(tree: &str) -> HostRoot {
    HostRoot::new(fixtures().join(tree))
}

/// The host checks of `tree` for CPU `cpu`, with the tree's probes.
pub fn report(tree: &str, cpu: usize) -> HostReport {
    let root = root(tree);
    let mut probes = Probes::for_root(&root).expect("fixture probes");
    check_host(&root, cpu, &mut probes)
}

/// The environment block of `tree` for CPU `cpu`, with the tree's probes.
pub fn environment(tree: &str, cpu: usize) -> Map<String, Value> {
    let root = root(tree);
    let mut probes = Probes::for_root(&root).expect("fixture probes");
    host::environment(&root, cpu, &mut probes)
}

/// A fixture tree, the CPU it is checked for, and what its checks must say.
pub struct Case {
    pub tree: &'static str,
    pub cpu: usize,
    /// In `HostCheck::all()` order: architecture, cycle counter, turbo, governor, frequency
    /// pinned, SMT, hybrid core, CPU usable, clock steady | isolation, ASLR, load average,
    /// busy CPU, hypervisor.
    pub expect: [Status; 14],
    pub problems: &'static [&'static str],
}

pub const CASES: &[Case] = &[
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
