//! The `environment` block of every timing record and of `campaign.json`: the harness's keys in
//! the harness's order (sysfs values kept as strings, `null` when absent), then cyclescope's
//! additions (which counter the loop uses, what the clock probe measured). Also the comparison
//! of the fixed keys between a run's records and now, which a resumed run refuses on. It reads;
//! it never decides to refuse.

use serde_json::{Map, Value, json};

use crate::counter::CycleSource;

use super::probes::Probes;
use super::root::HostRoot;

/// Host settings every record of one run must share (the harness's `FIXED_ENV`).
pub const FIXED_ENV: [&str; 10] = [
    "hostname",
    "cpu_model",
    "cpu_number",
    "cpufreq_governor",
    "cpufreq_max_khz",
    "intel_pstate_no_turbo",
    "cpufreq_boost",
    "smt_control",
    "perf_event_paranoid",
    "core_clock_mhz",
];

/// Whether the CPU model must come from `lscpu` (a `/proc/cpuinfo` without `model name`).
pub(crate) fn wants_lscpu(root: &HostRoot) -> bool {
    root.read_raw("proc/cpuinfo")
        .is_none_or(|t| !t.lines().any(|l| l.starts_with("model name")))
}

/// The environment of measurement CPU `cpu`. Reports the clock probe the checks took (else runs
/// one, about a second, pinned to `cpu`) and, live, `gcc`/`cmake`/`python3 --version`.
pub fn environment(root: &HostRoot, cpu: usize, probes: &mut Probes) -> Map<String, Value> {
    let cpufreq = |f: &str| root.read(&format!("sys/devices/system/cpu/cpu{cpu}/cpufreq/{f}"));
    let cpuinfo = root.read_raw("proc/cpuinfo");
    let info_field = |key: &str| {
        cpuinfo.as_deref().and_then(|t| {
            t.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
    };
    let model_name = info_field("model name");
    let tools = probes.tools.versions(model_name.is_none());
    let cpu_model = model_name
        .or(tools.lscpu_model.clone())
        .or_else(|| info_field("Hardware"))
        .or_else(|| info_field("CPU part"))
        .unwrap_or_else(|| "unknown".into());
    let machine = root
        .read("sys/firmware/devicetree/base/model")
        .or_else(|| root.read("sys/class/dmi/id/product_name"))
        .map(|m| m.trim_end_matches(['\0', ' ']).to_string());
    let memory_kib = root.read("proc/meminfo").and_then(|t| {
        t.lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
    });
    let os = root.read("etc/os-release").and_then(|t| {
        t.lines()
            .find_map(|l| l.strip_prefix("PRETTY_NAME="))
            .map(|v| v.trim().trim_matches('"').to_string())
    });
    let probe = probes.clock.latest(cpu).ok();
    let core = probe.as_ref().filter(|p| p.measures_core_clock());
    let reference_source = match probes.machine.as_str() {
        "x86_64" => Some(CycleSource::Tsc),
        "aarch64" => Some(CycleSource::Cntvct),
        _ => None,
    };
    let cycle_source = if probes.perf.is_ok() {
        Some(CycleSource::PerfUserCycles)
    } else {
        reference_source
    };
    let sys = |rel: &str| root.read(&format!("sys/devices/system/cpu/{rel}"));
    // The core type the measurement CPU counts on (its core PMU); null without a PMU.
    let pmu = super::pmu::core_pmu(root, cpu).ok().flatten();
    let entries = [
        ("hostname", json!(probes.hostname)),
        ("architecture", json!(probes.machine)),
        ("cpu_model", json!(cpu_model)),
        ("machine", json!(machine)),
        ("cpu_number", json!(cpu)),
        ("logical_cpus_online", json!(sys("online"))),
        (
            "virtualized",
            json!(cpuinfo.map(|t| t.contains("hypervisor"))),
        ),
        ("memory_total_kib", json!(memory_kib)),
        ("os", json!(os)),
        ("kernel", json!(probes.kernel)),
        ("compiler", json!(tools.compiler)),
        ("cmake", json!(tools.cmake)),
        ("python", json!(tools.python)),
        (
            "perf_event_paranoid",
            json!(root.read("proc/sys/kernel/perf_event_paranoid")),
        ),
        ("cpufreq_governor", json!(cpufreq("scaling_governor"))),
        ("cpufreq_driver", json!(cpufreq("scaling_driver"))),
        ("cpufreq_min_khz", json!(cpufreq("scaling_min_freq"))),
        ("cpufreq_max_khz", json!(cpufreq("scaling_max_freq"))),
        ("cpufreq_avg_khz", json!(cpufreq("cpuinfo_avg_freq"))),
        ("intel_pstate_no_turbo", json!(sys("intel_pstate/no_turbo"))),
        ("cpufreq_boost", json!(sys("cpufreq/boost"))),
        ("smt_control", json!(sys("smt/control"))),
        // The core clock only: a reference counter's rate is not a core clock (the harness
        // writes null when its probe has no cycle counter).
        ("core_clock_hz", json!(core.map(|p| p.clock_hz))),
        ("core_clock_min_hz", json!(core.map(|p| p.clock_min_hz))),
        ("core_clock_max_hz", json!(core.map(|p| p.clock_max_hz))),
        ("core_clock_mhz", json!(core.map(|p| p.mhz_to_50()))),
        // cyclescope's additions.
        ("cycle_source", json!(cycle_source.map(CycleSource::name))),
        (
            "clock_source",
            json!(probe.as_ref().map(|p| p.source.name())),
        ),
        (
            "reference_clock_hz",
            json!(probe.as_ref().and_then(|p| p.reference_hz)),
        ),
        (
            "ref_to_core_ratio",
            json!(probe.as_ref().and_then(|p| p.ref_to_core_ratio)),
        ),
        ("core_type", json!(pmu.as_ref().map(|p| p.core_type()))),
        ("core_pmu_type", json!(pmu.as_ref().map(|p| p.type_id))),
    ];
    entries
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

/// The run's fixed core clock for the disturbance test (the harness's `fixed_clock`): the
/// cpufreq limit where cpufreq exists, else the probed core clock; None when neither is known
/// (then no trial is judged disturbed).
pub fn fixed_clock_hz(env: &Map<String, Value>) -> Option<f64> {
    let khz = env
        .get("cpufreq_max_khz")
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|&k| k > 0.0);
    khz.map(|k| k * 1e3).or_else(|| {
        env.get("core_clock_hz")
            .and_then(Value::as_f64)
            .filter(|&hz| hz > 0.0)
    })
}

/// One fixed key that differs between a run's records and now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvChange {
    pub key: &'static str,
    pub(crate) old: Value,
    /// `null` when the key is missing now.
    pub new: Value,
}

impl std::fmt::Display for EnvChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: run {}, now {}", self.key, self.old, self.new)
    }
}

/// The [`FIXED_ENV`] keys whose values differ; keys absent in `old` (records that predate
/// them) are skipped, as in the harness.
pub fn fixed_env_diff(old: &Map<String, Value>, new: &Map<String, Value>) -> Vec<EnvChange> {
    FIXED_ENV
        .iter()
        .filter_map(|&key| {
            let o = old.get(key)?;
            let n = new.get(key).cloned().unwrap_or(Value::Null);
            (*o != n).then(|| EnvChange {
                key,
                old: o.clone(),
                new: n,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn fixed_clock_prefers_cpufreq_then_the_probe() {
        let both = map(json!({"cpufreq_max_khz": "2707200", "core_clock_hz": 2695228108u64}));
        assert_eq!(fixed_clock_hz(&both), Some(2_707_200_000.0));
        let probe = map(json!({"cpufreq_max_khz": null, "core_clock_hz": 3_400_000_000u64}));
        assert_eq!(fixed_clock_hz(&probe), Some(3.4e9));
        assert_eq!(fixed_clock_hz(&map(json!({"core_clock_hz": null}))), None);
    }

    #[test]
    fn fixed_keys_compare_and_absent_old_keys_are_skipped() {
        let old = map(
            json!({"hostname": "vivo", "cpu_number": 3, "perf_event_paranoid": "2",
                             "kernel": "7.0.0-34-generic"}),
        );
        let new = map(
            json!({"hostname": "vivo", "cpu_number": 3, "perf_event_paranoid": "4",
                             "kernel": "7.1", "core_clock_mhz": 2700}),
        );
        let d = fixed_env_diff(&old, &new);
        assert_eq!(d.len(), 1);
        assert_eq!(
            d[0].to_string(),
            "perf_event_paranoid: run \"2\", now \"4\""
        );
        let gone = fixed_env_diff(&old, &map(json!({"hostname": "vivo", "cpu_number": 3})));
        assert_eq!(gone[0].new, Value::Null);
    }
}
