//! What the host checks and the environment block need that is not a file under the root:
//! `uname`, a real `perf_event_open`, whether this process may pin to a CPU, the clock probe
//! and the versions of external tools. `Probes::live` asks the running system (through
//! `counter`, `sysinfo` and a few `--version` commands); a fixture root supplies fixed values
//! instead (`fixture`). Nothing here judges a value.

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::counter::{ClockProbe, ClockProbeConfig, CounterError, PerfCycles, clock_probe};

use super::{HostError, HostRoot, fixture};

/// Everything the checks cannot read from files. Built per host (live or fixture).
#[derive(Debug)]
pub struct Probes {
    /// `uname -m`, the harness's `platform.machine()` (`x86_64`, `aarch64`, …).
    pub(crate) machine: String,
    /// `gethostname()`.
    pub(crate) hostname: Option<String>,
    /// `uname -r`.
    pub(crate) kernel: Option<String>,
    /// The outcome of opening user-mode hardware cycles, as the harness's driver does (and of
    /// checking that they count).
    pub(crate) perf: Result<(), CounterError>,
    pub(crate) cpu_access: CpuAccess,
    pub(crate) clock: ClockProber,
    pub(crate) tools: Tools,
    /// This process, left out of the busy-CPU scan (None for a fixture).
    pub(crate) self_pid: Option<u32>,
    /// The machine-wide CPU-lock folder, whose holders the busy-CPU check names (None for a
    /// fixture).
    pub(crate) cpu_locks: Option<std::path::PathBuf>,
}

impl Probes {
    /// Probes of the running system.
    pub(crate) fn live() -> Self {
        Probes {
            machine: sysinfo::System::cpu_arch(),
            hostname: sysinfo::System::host_name().ok(),
            kernel: sysinfo::System::kernel_version().ok(),
            perf: PerfCycles::open_counting(None).map(drop),
            cpu_access: CpuAccess::Live,
            clock: ClockProber::live(),
            tools: Tools::Live,
            self_pid: Some(std::process::id()),
            cpu_locks: Some(crate::cpu::lock::machine_lock_dir()),
        }
    }

    /// Live probes for `/`; for any other root the fixed values of
    /// `<root>/cyclescope-probes.toml` (a fixture cannot be probed live).
    pub fn for_root(root: &HostRoot) -> Result<Self, HostError> {
        if root.is_system() {
            Ok(Probes::live())
        } else {
            fixture::load_probes(root)
        }
    }
}

/// Whether this process may run on a CPU (the harness runs `taskset -c N true`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CpuAccess {
    /// The CPUs this process was given (`crate::cpu::allowed`), then `sched_setaffinity`
    /// from a scratch thread (the caller's affinity is untouched).
    Live,
    /// A fixture's cpuset.
    Allowed(BTreeSet<usize>),
}

impl CpuAccess {
    pub(crate) fn try_pin(&self, cpu: usize) -> Result<(), String> {
        match self {
            CpuAccess::Live => crate::cpu::check_usable(cpu).and_then(|cpu| {
                std::thread::scope(|s| {
                    s.spawn(|| crate::cpu::pin_current_thread(cpu))
                        .join()
                        .map_err(|_| "the pinning thread panicked".to_string())?
                        .map_err(|e| format!("sched_setaffinity({cpu}): {e}"))
                })
            }),
            CpuAccess::Allowed(set) if set.contains(&cpu) => Ok(()),
            CpuAccess::Allowed(set) => Err(format!(
                "sched_setaffinity({cpu}): EINVAL (the cpuset allows {})",
                super::root::format_cpu_list(set)
            )),
        }
    }
}

impl CpuAccess {
    /// The CPUs this process may use (the allocation), when known.
    pub(crate) fn allowed(&self) -> Option<BTreeSet<usize>> {
        match self {
            CpuAccess::Live => Some(crate::cpu::allowed().iter().copied().collect()),
            CpuAccess::Allowed(set) => Some(set.clone()),
        }
    }
}

/// A fixed clock-probe outcome; `cpu: None` applies to every CPU.
#[derive(Debug, Clone, PartialEq)]
pub struct FixedClock {
    pub(crate) cpu: Option<usize>,
    pub result: Result<ClockProbe, String>,
}

/// Runs the clock probe, or replays fixed outcomes, and remembers the last one that succeeded
/// (the environment block reports the probe the checks just took, and the host cache keeps it).
#[derive(Debug)]
pub struct ClockProber {
    kind: ProberKind,
    last_ok: Option<(usize, ClockProbe)>,
}

#[derive(Debug)]
enum ProberKind {
    Live {
        config: ClockProbeConfig,
        /// Pause between probes when one is not steady (the harness sleeps 5 s).
        retry_pause: Duration,
    },
    /// Outcomes per CPU in order (successive probes of one CPU take successive entries; the
    /// last one repeats). Never pauses.
    Fixed {
        results: Vec<FixedClock>,
        used: BTreeMap<usize, usize>,
    },
    /// A result stored by the host cache, reused while its inputs are unchanged.
    Reused(ClockProbe),
}

impl ClockProber {
    /// The harness's probe: 21 × 50 ms windows, 5 s between repeated probes.
    pub(crate) fn live() -> Self {
        Self::of(ProberKind::Live {
            config: ClockProbeConfig::default(),
            retry_pause: Duration::from_secs(5),
        })
    }

    pub(crate) fn fixed(results: Vec<FixedClock>) -> Self {
        Self::of(ProberKind::Fixed {
            results,
            used: BTreeMap::new(),
        })
    }

    fn of(kind: ProberKind) -> Self {
        Self {
            kind,
            last_ok: None,
        }
    }

    /// From now on every probe answers `probe` (a result the host cache kept).
    pub(crate) fn replay(&mut self, probe: ClockProbe) {
        self.kind = ProberKind::Reused(probe);
    }

    /// Probes `cpu` (pinned there while probing).
    pub(crate) fn probe(&mut self, cpu: usize) -> Result<ClockProbe, String> {
        let r = match &mut self.kind {
            ProberKind::Live { config, .. } => clock_probe(&ClockProbeConfig {
                cpu: Some(cpu),
                ..*config
            })
            .map_err(|e| e.to_string()),
            ProberKind::Fixed { results, used } => {
                let mine: Vec<&FixedClock> = results
                    .iter()
                    .filter(|r| r.cpu.is_none_or(|c| c == cpu))
                    .collect();
                let n = used.entry(cpu).or_insert(0);
                let pick = mine.get((*n).min(mine.len().saturating_sub(1)));
                *n += 1;
                match pick {
                    Some(r) => r.result.clone(),
                    None => Err(format!("the fixture has no clock_probe for CPU {cpu}")),
                }
            }
            ProberKind::Reused(p) => Ok(p.clone()),
        };
        if let Ok(p) = &r {
            self.last_ok = Some((cpu, p.clone()));
        }
        r
    }

    /// The probe of `cpu` the checks took already, else a new one: one probe per check, not
    /// one for the steadiness check and another for the environment block.
    pub(crate) fn latest(&mut self, cpu: usize) -> Result<ClockProbe, String> {
        match &self.last_ok {
            Some((c, p)) if *c == cpu => Ok(p.clone()),
            _ => self.probe(cpu),
        }
    }

    /// The last probe that succeeded.
    pub(crate) fn last_ok(&self) -> Option<&ClockProbe> {
        self.last_ok.as_ref().map(|(_, p)| p)
    }

    /// What kind of prober this is, for the host cache's fingerprint.
    pub(crate) fn describe(&self) -> String {
        match &self.kind {
            ProberKind::Live { config, .. } => format!("live {config:?}"),
            ProberKind::Fixed { .. } => "fixed".into(),
            ProberKind::Reused(_) => "reused".into(),
        }
    }

    pub(crate) fn retry_pause(&self) -> Duration {
        match &self.kind {
            ProberKind::Live { retry_pause, .. } => *retry_pause,
            ProberKind::Fixed { .. } | ProberKind::Reused(_) => Duration::ZERO,
        }
    }
}

/// Versions of the tools the harness records (`null` when a tool is absent).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ToolVersions {
    /// First line of `gcc --version`.
    pub(crate) compiler: Option<String>,
    /// First line of `cmake --version`.
    pub(crate) cmake: Option<String>,
    /// The number of `python3 --version`.
    pub(crate) python: Option<String>,
    /// `lscpu`'s "Vendor ID" and "Model name" (the CPU model where `/proc/cpuinfo` has none,
    /// as on AArch64).
    pub(crate) lscpu_model: Option<String>,
}

#[derive(Debug, Clone)]
pub enum Tools {
    /// Run the commands when asked.
    Live,
    Fixed(ToolVersions),
}

impl Tools {
    /// The versions; `lscpu` runs only when `want_lscpu`. Live, the commands run side by side
    /// (a `python3` behind a version manager's shim alone takes a few hundred ms).
    pub(crate) fn versions(&self, want_lscpu: bool) -> ToolVersions {
        match self {
            Tools::Fixed(v) => v.clone(),
            Tools::Live => std::thread::scope(|s| {
                let compiler = s.spawn(|| first_line("gcc", &["--version"]));
                let cmake = s.spawn(|| first_line("cmake", &["--version"]));
                let python = s.spawn(|| {
                    first_line("python3", &["--version"])
                        .and_then(|l| l.split_whitespace().nth(1).map(str::to_string))
                });
                let lscpu_model = want_lscpu.then(|| s.spawn(lscpu_model));
                let join =
                    |h: std::thread::ScopedJoinHandle<'_, Option<String>>| h.join().ok().flatten();
                ToolVersions {
                    compiler: join(compiler),
                    cmake: join(cmake),
                    python: join(python),
                    lscpu_model: lscpu_model.and_then(join),
                }
            }),
        }
    }
}

fn output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program)
        .args(args)
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn first_line(program: &str, args: &[&str]) -> Option<String> {
    output(program, args)?
        .lines()
        .next()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
}

fn lscpu_model() -> Option<String> {
    let text = output("lscpu", &[])?;
    let field = |key: &str| {
        text.lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim() == key)
            .map(|(_, v)| v.trim().to_string())
    };
    let parts: Vec<String> = ["Vendor ID", "Model name"]
        .into_iter()
        .filter_map(field)
        .collect();
    (!parts.is_empty()).then(|| parts.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counter::CycleSource;

    fn probe(hz: u64) -> ClockProbe {
        ClockProbe {
            source: CycleSource::PerfUserCycles,
            clock_hz: hz,
            clock_min_hz: hz,
            clock_max_hz: hz,
            clock_iqr_hz: 0,
            windows: 21,
            reference_hz: None,
            ref_to_core_ratio: None,
        }
    }

    #[test]
    fn fixed_prober_replays_per_cpu_and_repeats_the_last() {
        let mut p = ClockProber::fixed(vec![
            FixedClock {
                cpu: Some(3),
                result: Ok(probe(1)),
            },
            FixedClock {
                cpu: None,
                result: Ok(probe(2)),
            },
            FixedClock {
                cpu: Some(3),
                result: Ok(probe(3)),
            },
        ]);
        let hz = |r: Result<ClockProbe, String>| r.unwrap().clock_hz;
        assert_eq!(hz(p.probe(3)), 1);
        assert_eq!(hz(p.probe(3)), 2);
        assert_eq!(hz(p.probe(3)), 3);
        assert_eq!(hz(p.probe(3)), 3);
        assert_eq!(hz(p.probe(5)), 2);
        assert!(ClockProber::fixed(vec![]).probe(0).is_err());
        assert_eq!(p.retry_pause(), Duration::ZERO);
    }

    #[test]
    fn allowed_cpus_say_why_not() {
        let a = CpuAccess::Allowed([0, 1, 2].into_iter().collect());
        assert!(a.try_pin(2).is_ok());
        assert!(a.try_pin(3).unwrap_err().contains("0-2"));
    }
}
