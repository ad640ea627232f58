//! The harness's host conditions 1–8 (spec §4; `campaign.py host_problems`): each reads the
//! same files, fails on the same values with the same sentence, and adds what was seen and the
//! fix. Stricter views (a missing PMU, per-policy boost) are marked beyond the harness or only
//! warn. Condition 9, the clock probe, is in `steady`. Nothing here writes to the system.

use crate::counter::CounterError;

use super::check::{CheckResult, HostCheck};
use super::root::{HostRoot, parse_cpu_list};

const CPU: &str = "sys/devices/system/cpu";

fn cpufreq(cpu: usize, file: &str) -> String {
    format!("{CPU}/cpu{cpu}/cpufreq/{file}")
}

/// Harness condition 1: The guide has build configurations for x86_64 and aarch64 only.
pub(crate) fn architecture(machine: &str) -> CheckResult {
    let c = HostCheck::Architecture;
    match machine {
        "x86_64" | "aarch64" => {
            CheckResult::pass(c, format!("{machine} (guide configuration exists)"))
        }
        other => CheckResult::fail(
            c,
            other,
            format!("architecture {other} has no guide configuration"),
            "measure on an x86_64 or aarch64 host: the guide defines build flags for those only",
        ),
    }
}

/// Harness condition 2: `perf_event_paranoid` must allow user cycle counting; beyond the harness, the counter
/// must also open (a virtual machine usually has no PMU).
pub(crate) fn cycle_counter(
    root: &HostRoot,
    perf: &Result<(), CounterError>,
    machine: &str,
) -> CheckResult {
    let c = HostCheck::CycleCounter;
    let fallback = match machine {
        "x86_64" => "TSC reference cycles will be used",
        "aarch64" => "cntvct_el0 reference ticks will be used",
        _ => "no reference counter can stand in",
    };
    let paranoid = root.read("proc/sys/kernel/perf_event_paranoid");
    let shown = paranoid.as_deref().unwrap_or("unreadable");
    if !matches!(paranoid.as_deref(), Some("-1" | "0" | "1" | "2")) {
        return CheckResult::fail(
            c,
            format!("perf_event_paranoid={shown}: user cycle counting is not allowed"),
            "hardware cycle counter unavailable: set kernel.perf_event_paranoid=2",
            "sudo sysctl kernel.perf_event_paranoid=2",
        );
    }
    match perf {
        Ok(()) => CheckResult::pass(
            c,
            format!("perf_event_paranoid={shown}, perf_event_open cpu-cycles:u opens and counts"),
        ),
        Err(CounterError::NoPmu { errno }) => CheckResult::fail_beyond_harness(
            c,
            format!(
                "perf_event_paranoid={shown}, but no hardware cycle counter (perf_event_open: \
                 {errno:?}) — {fallback}"
            ),
            format!("hardware cycle counter unavailable: no PMU (perf_event_open: {errno:?})"),
            format!(
                "the kernel exposes no cycle-counting PMU (usual in a virtual machine): measure \
                 on bare metal, or give the guest a virtual PMU (e.g. QEMU/KVM `-cpu host,pmu=on`); \
                 until then {fallback}, not core cycles"
            ),
        ),
        Err(e) => CheckResult::fail_beyond_harness(
            c,
            format!("perf_event_paranoid={shown}, but {e} — {fallback}"),
            format!("hardware cycle counter unavailable: {e}"),
            "allow perf_event_open for this user (container: --cap-add PERFMON or a seccomp \
             profile that permits it; otherwise sudo sysctl kernel.perf_event_paranoid=2)",
        ),
    }
}

/// Boost files of the cpufreq policies that govern `cpu` (`policy*/related_cpus` contains it),
/// or `cpuN/cpufreq/boost` when no policy folder says.
pub(crate) fn policy_boosts(root: &HostRoot, cpu: usize) -> Vec<(String, String)> {
    let base = format!("{CPU}/cpufreq");
    let mut found: Vec<(String, String)> = root
        .entries(&base)
        .into_iter()
        .filter(|p| p.starts_with("policy"))
        .filter(|p| {
            let rel = format!("{base}/{p}/related_cpus");
            match root.read(&rel).as_deref().and_then(parse_cpu_list) {
                Some(cpus) => cpus.contains(&cpu),
                None => p["policy".len()..].parse() == Ok(cpu),
            }
        })
        .filter_map(|p| {
            let v = root.read(&format!("{base}/{p}/boost"))?;
            Some((format!("cpufreq/{p}/boost"), v))
        })
        .collect();
    if found.is_empty()
        && let Some(v) = root.read(&cpufreq(cpu, "boost"))
    {
        found.push((format!("cpu{cpu}/cpufreq/boost"), v));
    }
    found
}

/// Harness condition 3: Turbo off: `intel_pstate/no_turbo` not "0" and `cpufreq/boost` not "1" (missing files
/// pass in the harness). Per-policy boost and amd_pstate are shown; per-policy boost on warns.
pub(crate) fn turbo(root: &HostRoot, cpu: usize) -> CheckResult {
    let c = HostCheck::Turbo;
    let no_turbo = root.read(&format!("{CPU}/intel_pstate/no_turbo"));
    let boost = root.read(&format!("{CPU}/cpufreq/boost"));
    let amd = root.read(&format!("{CPU}/amd_pstate/status"));
    let policies = policy_boosts(root, cpu);
    let mut seen = Vec::new();
    if let Some(v) = &no_turbo {
        seen.push(format!("intel_pstate/no_turbo={v}"));
    }
    if let Some(v) = &boost {
        seen.push(format!("cpufreq/boost={v}"));
    }
    seen.extend(policies.iter().map(|(p, v)| format!("{p}={v}")));
    let switches = seen.len();
    if let Some(s) = &amd {
        seen.push(format!("amd_pstate {s}"));
    }
    let value = seen.join(", ");
    let mut fixes = Vec::new();
    if no_turbo.as_deref() == Some("0") {
        fixes.push(format!("echo 1 | sudo tee /{CPU}/intel_pstate/no_turbo"));
    }
    if boost.as_deref() == Some("1") {
        fixes.push(format!("echo 0 | sudo tee /{CPU}/cpufreq/boost"));
    }
    if !fixes.is_empty() {
        return CheckResult::fail(c, value, "turbo/boost is enabled", fixes.join("; "));
    }
    let boosted: Vec<&(String, String)> = policies.iter().filter(|(_, v)| v == "1").collect();
    if !boosted.is_empty() {
        let fix: Vec<String> = boosted
            .iter()
            .map(|(p, _)| format!("echo 0 | sudo tee /{CPU}/{p}"))
            .collect();
        return CheckResult::warn(
            c,
            format!(
                "{value} — boost is on for CPU {cpu}'s policy (the harness checks only the global switches)"
            ),
            fix.join("; "),
        );
    }
    if switches == 0 {
        let amd_note = amd.map(|s| format!("; amd_pstate {s}")).unwrap_or_default();
        return CheckResult::unknown(
            c,
            format!(
                "no turbo/boost switch exposed (no intel_pstate/no_turbo, cpufreq/boost or \
                 per-policy boost{amd_note})"
            ),
            "nothing to set here: firmware or the hypervisor decides; on bare metal turn turbo \
             off in the firmware setup or load a cpufreq driver that exposes the switch",
        );
    }
    CheckResult::pass(c, value)
}

/// Harness condition 4: The governor of CPU N, where cpufreq exists, must be `performance`.
pub(crate) fn governor(root: &HostRoot, cpu: usize) -> CheckResult {
    let c = HostCheck::Governor;
    let driver = root
        .read(&cpufreq(cpu, "scaling_driver"))
        .map(|d| format!(" (driver {d})"))
        .unwrap_or_default();
    match root.read(&cpufreq(cpu, "scaling_governor")) {
        None => CheckResult::skip(
            c,
            format!("no cpufreq for CPU {cpu}: the clock is set by firmware or a hypervisor"),
        ),
        Some(g) if g == "performance" => CheckResult::pass(c, format!("performance{driver}")),
        Some(g) => CheckResult::fail(
            c,
            format!("{g}{driver}"),
            format!("CPU {cpu} governor is {g}, not performance"),
            format!("sudo cpupower -c {cpu} frequency-set -g performance"),
        ),
    }
}

/// Harness condition 5: On aarch64 with a governor the clock is fixed by `scaling_min_freq == scaling_max_freq`
/// (there is no turbo switch to rely on). On x86-64 the governor and turbo checks cover it.
pub(crate) fn frequency_pinned(root: &HostRoot, cpu: usize, machine: &str) -> CheckResult {
    let c = HostCheck::FrequencyPinned;
    let gov = root
        .read(&cpufreq(cpu, "scaling_governor"))
        .filter(|g| !g.is_empty());
    let lo = root.read(&cpufreq(cpu, "scaling_min_freq"));
    let hi = root.read(&cpufreq(cpu, "scaling_max_freq"));
    let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "None".into());
    let Some(gov) = gov else {
        return CheckResult::skip(c, format!("no cpufreq for CPU {cpu}"));
    };
    if machine == "aarch64" {
        return if lo == hi {
            CheckResult::pass(
                c,
                format!("scaling_min_freq = scaling_max_freq = {} kHz", show(&hi)),
            )
        } else {
            CheckResult::fail(
                c,
                format!(
                    "scaling_min_freq {} kHz, scaling_max_freq {} kHz",
                    show(&lo),
                    show(&hi)
                ),
                format!(
                    "CPU {cpu} clock not pinned (scaling_min_freq {} != scaling_max_freq {})",
                    show(&lo),
                    show(&hi)
                ),
                format!(
                    "echo {} | sudo tee /{CPU}/cpu{cpu}/cpufreq/scaling_min_freq (or pin both \
                     to a lower frequency the firmware sustains under load)",
                    show(&hi)
                ),
            )
        };
    }
    if gov == "performance" {
        CheckResult::pass(
            c,
            format!(
                "{machine}: governor performance runs at scaling_max_freq {} kHz (min {} kHz; \
                 min = max is required on aarch64 only)",
                show(&hi),
                show(&lo)
            ),
        )
    } else {
        CheckResult::skip(
            c,
            format!("{machine}: see the governor check (governor {gov})"),
        )
    }
}

/// Harness condition 6: CPU N must not share its core (`thread_siblings_list` must be N itself).
pub(crate) fn smt(root: &HostRoot, cpu: usize) -> CheckResult {
    let c = HostCheck::Smt;
    let control = root
        .read(&format!("{CPU}/smt/control"))
        .map(|s| format!(", smt/control {s}"))
        .unwrap_or_default();
    match root.read(&format!("{CPU}/cpu{cpu}/topology/thread_siblings_list")) {
        Some(s) if !s.is_empty() && s != cpu.to_string() => CheckResult::fail(
            c,
            format!("thread_siblings_list {s}{control}"),
            format!("CPU {cpu} shares its core with CPUs {s} (SMT on)"),
            format!("echo off | sudo tee /{CPU}/smt/control"),
        ),
        Some(s) if !s.is_empty() => {
            CheckResult::pass(c, format!("no sibling (thread_siblings_list {s}{control})"))
        }
        _ => CheckResult::unknown(
            c,
            format!("no topology for CPU {cpu}{control}"),
            format!("check that CPU {cpu} exists and is online"),
        ),
    }
}

/// Harness condition 7: On an Intel hybrid CPU (`/sys/devices/cpu_core/cpus` exists), N must be a P-core.
pub(crate) fn hybrid_core(root: &HostRoot, cpu: usize) -> CheckResult {
    let c = HostCheck::HybridCore;
    let Some(core) = root
        .read("sys/devices/cpu_core/cpus")
        .filter(|s| !s.is_empty())
    else {
        return CheckResult::skip(c, "not a hybrid CPU (no /sys/devices/cpu_core)");
    };
    let Some(p_cores) = parse_cpu_list(&core) else {
        return CheckResult::unknown(
            c,
            format!("cannot parse /sys/devices/cpu_core/cpus {core:?}"),
            "report this file's contents",
        );
    };
    if p_cores.contains(&cpu) {
        return CheckResult::pass(c, format!("performance core (cpu_core: {core})"));
    }
    let atom = root
        .read("sys/devices/cpu_atom/cpus")
        .map(|a| format!(", cpu_atom: {a}"))
        .unwrap_or_default();
    let online = root.online_cpus().unwrap_or_default();
    let best = p_cores
        .iter()
        .rev()
        .find(|p| online.contains(p))
        .or(p_cores.last());
    CheckResult::fail(
        c,
        format!("efficiency core (cpu_core: {core}{atom})"),
        format!("CPU {cpu} is not a performance core (cpu_core: {core})"),
        match best {
            Some(p) => format!("measure on a performance core, e.g. --cpu {p}"),
            None => "measure on a performance core".to_string(),
        },
    )
}

/// Harness condition 8: This process must be able to run on CPU N (`taskset -c N true`).
pub(crate) fn cpu_usable(cpu: usize, pinned: Result<(), String>) -> CheckResult {
    let c = HostCheck::CpuUsable;
    match pinned {
        Ok(()) => CheckResult::pass(c, format!("this process can pin to CPU {cpu}")),
        Err(e) => CheckResult::fail(
            c,
            e,
            format!("CPU {cpu} cannot be used by this process (cpuset)"),
            format!(
                "run from a shell allowed on CPU {cpu} (see `taskset -pc $$` and \
                 /sys/fs/cgroup/cpuset.cpus.effective) or choose another --cpu"
            ),
        ),
    }
}
