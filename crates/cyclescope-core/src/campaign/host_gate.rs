//! The host gate: the checks before measuring (refusing an unfixed host unless allowed, as
//! the harness does), the environment block every record carries, the clock the disturbance
//! test compares against, and the FIXED_ENV comparison that refuses to resume on a changed
//! host. A thin adapter from `host` to what the campaign and its records need; it never
//! measures a candidate.

use std::path::Path;

use serde_json::{Map, Value};

use crate::counter::CycleSource;
use crate::counter::witness::{AperfMperf, WitnessKind};
use crate::measure::clock::{ClockBand, ClockRule, ClockVerification};

/// The host as the run found it: checks, the environment block, the clock for the
/// disturbance test. Checked once per run; records carry this environment.
pub(crate) struct HostGate {
    cpu: usize,
    /// True when cyclescope's own threads could not leave the measurement CPUs.
    engine_shared_cpu: bool,
    report: crate::host::HostReport,
    environment: Map<String, Value>,
    clock_verification: ClockVerification,
    started_utc: String,
    load_average_start: [f64; 3],
    /// When the clock probe and tool versions this gate reused were measured (the host cache).
    reused_from: Option<String>,
}

impl HostGate {
    /// Checks CPU `cpu` of the host below `root` (`/` for this machine), reusing the slow
    /// parts `cache` kept while their inputs are unchanged.
    pub(crate) fn check(
        dir: &Path,
        cpu: usize,
        cache: Option<&crate::host::HostCache>,
    ) -> Result<Self, crate::host::HostError> {
        let root = crate::host::HostRoot::new(dir);
        let checked = crate::host::check_cached(&root, cpu, cache, std::time::SystemTime::now())?;
        let clock_verification = clock_verification(&checked.environment, dir, cpu);
        Ok(Self {
            cpu,
            engine_shared_cpu: false,
            report: checked.report,
            environment: checked.environment,
            clock_verification,
            started_utc: crate::record::utc_now(),
            load_average_start: crate::record::load_average(),
            reused_from: checked.reused,
        })
    }

    /// Checks every measurement CPU of a run, side by side (each clock probe runs on its own
    /// CPU), in the order given.
    pub(crate) fn check_all(
        root: &Path,
        cpus: &[usize],
        engine_shared_cpu: bool,
        cache: Option<&crate::host::HostCache>,
    ) -> Result<Vec<Self>, crate::host::HostError> {
        std::thread::scope(|s| {
            let checks: Vec<_> = cpus
                .iter()
                .map(|&cpu| s.spawn(move || Self::check(root, cpu, cache)))
                .collect();
            checks
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|p| std::panic::resume_unwind(p))
                        .map(|g| Self {
                            engine_shared_cpu,
                            ..g
                        })
                })
                .collect()
        })
    }

    /// The measurement CPU this gate checked.
    pub(crate) fn cpu(&self) -> usize {
        self.cpu
    }

    pub(crate) fn engine_shared_cpu(&self) -> bool {
        self.engine_shared_cpu
    }

    /// When the clock probe and tool versions this gate reused were measured, if it did.
    pub(crate) fn reused_from(&self) -> Option<&str> {
        self.reused_from.as_deref()
    }

    /// The harness's problem sentences (failed checks only).
    pub fn problems(&self) -> Vec<String> {
        self.report.problems()
    }

    pub fn environment(&self) -> Map<String, Value> {
        self.environment.clone()
    }

    /// The harness's `fixed_clock` (cpufreq max, else the probed clock) for the disturbance test.
    /// The reference counter's rate the clock probe measured (Hz), when it ran.
    pub fn reference_clock_hz(&self) -> Option<f64> {
        self.environment
            .get("reference_clock_hz")
            .and_then(serde_json::Value::as_f64)
    }

    pub fn fixed_clock_hz(&self) -> Option<f64> {
        crate::host::fixed_clock_hz(&self.environment)
    }

    /// Whether each trial's clock can be checked here, and with what.
    pub(crate) fn clock_verification(&self) -> &ClockVerification {
        &self.clock_verification
    }

    /// What each trial's clock is checked against: the harness's fixed clock, and — where a
    /// witness exists — the band around it, as wide as the clock probe's own spread if that
    /// exceeds the harness's 5 %.
    pub(crate) fn clock_rule(&self) -> ClockRule {
        let fixed = self.fixed_clock_hz();
        let num = |k: &str| self.environment.get(k).and_then(Value::as_f64);
        let spread = match (
            num("core_clock_min_hz"),
            num("core_clock_max_hz"),
            num("core_clock_hz"),
        ) {
            (Some(lo), Some(hi), Some(mid)) if mid > 0.0 => Some((hi - lo) / mid),
            _ => None,
        };
        let witnessed = matches!(self.clock_verification, ClockVerification::PerTrial { .. });
        ClockRule {
            fixed_clock_hz: fixed,
            band: fixed
                .filter(|_| witnessed)
                .map(|hz| ClockBand::new(hz, spread)),
            reference_hz: self.reference_clock_hz(),
        }
    }

    pub(crate) fn ref_to_core_ratio(&self) -> Option<f64> {
        self.environment
            .get("ref_to_core_ratio")
            .and_then(Value::as_f64)
    }

    pub(crate) fn started_utc(&self) -> String {
        self.started_utc.clone()
    }

    pub(crate) fn load_average_start(&self) -> [f64; 3] {
        self.load_average_start
    }

    /// FIXED_ENV differences between the run's first complete record on this CPU and now.
    pub(crate) fn changed_since_first_record(&self, run_dir: &Path) -> Vec<String> {
        let cpu = self.environment.get("cpu_number").cloned();
        let mut records = crate::record::run_dir::list_records(run_dir);
        records.sort_by(|a, b| a.1.started_utc.cmp(&b.1.started_utc));
        let first = records.iter().find(|(_, r)| {
            r.status.is_complete() && r.environment.get("cpu_number").cloned() == cpu
        });
        match first {
            Some((_, r)) => crate::host::fixed_env_diff(&r.environment, &self.environment)
                .iter()
                .map(ToString::to_string)
                .collect(),
            None => Vec::new(),
        }
    }
}

/// The witness a worker on `cpu` will have: perf core cycles beside the reference counter
/// when the loop counts core cycles (and the probe measured the reference rate), else the
/// CPU's APERF/MPERF through the msr device below `root`, else none — with the reasons.
fn clock_verification(env: &Map<String, Value>, root: &Path, cpu: usize) -> ClockVerification {
    let source = env.get("cycle_source").and_then(Value::as_str);
    let perf = source.and_then(CycleSource::from_name) == Some(CycleSource::PerfUserCycles);
    if perf
        && env
            .get("reference_clock_hz")
            .and_then(Value::as_f64)
            .is_some()
    {
        return ClockVerification::PerTrial {
            witness: WitnessKind::PerfAndReference,
        };
    }
    match AperfMperf::open(root, cpu) {
        Ok(_) => ClockVerification::PerTrial {
            witness: WitnessKind::AperfMperf,
        },
        Err(msr) => ClockVerification::Unavailable {
            reason: format!(
                "no perf_event core-cycle counter (the loop counts {}), and no APERF/MPERF ({msr})",
                source.unwrap_or("nothing")
            ),
        },
    }
}
