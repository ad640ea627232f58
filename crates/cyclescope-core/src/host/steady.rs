//! The harness's host condition 9: without cpufreq the clock is set by firmware and cannot be
//! pinned, so it must be shown steady — by the clock probe on core cycles, up to three probes a
//! pause apart (a busy moment elsewhere can spoil one), IQR at most 0.5 % of the median. A
//! probe that could only measure a reference counter cannot show that, and fails as the
//! harness's "no cycle counter" case. It runs only when nothing else failed, as in the harness.

use super::check::{CheckResult, HostCheck};
use super::probes::ClockProber;
use super::root::HostRoot;

/// Probes taken at most before "not steady" is the verdict.
pub(crate) const PROBE_ATTEMPTS: usize = 3;

/// `earlier` are the results of conditions 1–8 for the same CPU.
pub(crate) fn clock_steady(
    root: &HostRoot,
    cpu: usize,
    earlier: &[CheckResult],
    prober: &mut ClockProber,
) -> CheckResult {
    let c = HostCheck::ClockSteady;
    if let Some(g) = root.read(&format!(
        "sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor"
    )) {
        return CheckResult::skip(c, format!("cpufreq controls the clock (governor {g})"));
    }
    let usable = earlier
        .iter()
        .any(|r| r.check == HostCheck::CpuUsable && !r.is_harness_problem());
    if !usable {
        return CheckResult::skip(c, format!("not probed: CPU {cpu} cannot be used"));
    }
    if earlier.iter().any(CheckResult::is_harness_problem) {
        return CheckResult::skip(
            c,
            "not probed: the other problems come first (as in the harness)",
        );
    }
    let no_counter = format!("CPU {cpu}: no cpufreq and no cycle counter to measure the clock");
    let no_counter_hint = "a firmware-set clock can only be shown steady with a core-cycle \
                           counter: measure on a host with a PMU, or with cpufreq control";
    let mut spreads = Vec::new();
    let mut attempt = 0;
    loop {
        attempt += 1;
        let probe = match prober.probe(cpu) {
            Ok(p) => p,
            Err(e) => {
                return CheckResult::fail(
                    c,
                    format!("clock probe failed: {e}"),
                    no_counter,
                    no_counter_hint,
                );
            }
        };
        let ghz = |hz: u64| hz as f64 / 1e9;
        if !probe.measures_core_clock() {
            return CheckResult::fail(
                c,
                format!(
                    "no core-cycle counter: the probe could only measure the {} rate, {:.3} GHz \
                     (reference cycles, not the core clock)",
                    probe.source,
                    ghz(probe.clock_hz)
                ),
                no_counter,
                no_counter_hint,
            );
        }
        let iqr_pct = 100.0 * probe.clock_iqr_hz as f64 / probe.clock_hz.max(1) as f64;
        if probe.is_steady() {
            let after = if attempt > 1 {
                format!(", probe {attempt} of {PROBE_ATTEMPTS}")
            } else {
                String::new()
            };
            return CheckResult::pass(
                c,
                format!(
                    "{:.3} GHz median over {} windows, IQR {iqr_pct:.2} % ({:.3}-{:.3} GHz){after}",
                    ghz(probe.clock_hz),
                    probe.windows,
                    ghz(probe.clock_min_hz),
                    ghz(probe.clock_max_hz),
                ),
            );
        }
        spreads.push(format!("{iqr_pct:.2} %"));
        if attempt >= PROBE_ATTEMPTS {
            return CheckResult::fail(
                c,
                format!(
                    "IQR {} of the median in {PROBE_ATTEMPTS} probes (limit 0.5 %); last median \
                     {:.3} GHz",
                    spreads.join(", "),
                    ghz(probe.clock_hz)
                ),
                format!(
                    "CPU {cpu} clock is not steady without cpufreq control ({:.3}-{:.3} GHz)",
                    ghz(probe.clock_min_hz),
                    ghz(probe.clock_max_hz)
                ),
                "pin the clock with a cpufreq driver (e.g. load scmi-cpufreq and set \
                 scaling_min_freq = scaling_max_freq), or keep the machine idle and cool",
            );
        }
        std::thread::sleep(prober.retry_pause());
    }
}
