//! Probes for a fixture root: `<root>/cyclescope-probes.toml` holds what a sysfs/procfs tree
//! cannot (uname, the outcome of `perf_event_open`, the cpuset, clock-probe results, tool
//! versions), so checks on a fixture are deterministic and never touch this machine's counters.
//! The format is documented in `docs/check-json.md`. Parsing only; no judging.

use std::collections::BTreeSet;

use nix::errno::Errno;
use serde::Deserialize;

use super::probes::{ClockProber, CpuAccess, FixedClock, Probes, ToolVersions, Tools};
use super::root::parse_cpu_list;
use super::{HostError, HostRoot};
use crate::counter::{ClockProbe, CounterError, CycleSource};

/// The probes file name under a fixture root.
pub const PROBES_FILE: &str = "cyclescope-probes.toml";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProbesFile {
    machine: String,
    hostname: Option<String>,
    kernel: Option<String>,
    /// `"ok"` or the errno name a real open returns (`"ENOENT"`, `"EACCES"`, …).
    perf_event_open: String,
    /// The cpuset this process may pin to (default: the root's online CPUs).
    allowed_cpus: Option<String>,
    #[serde(default)]
    tools: ToolVersions,
    #[serde(default)]
    clock_probe: Vec<ClockEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClockEntry {
    cpu: Option<usize>,
    /// A failed probe, with its message; the other fields are then ignored.
    error: Option<String>,
    source: Option<String>,
    clock_hz: Option<u64>,
    clock_min_hz: Option<u64>,
    clock_max_hz: Option<u64>,
    clock_iqr_hz: Option<u64>,
    windows: Option<usize>,
    reference_hz: Option<u64>,
    ref_to_core_ratio: Option<f64>,
}

/// Reads `<root>/cyclescope-probes.toml`.
pub(crate) fn load_probes(root: &HostRoot) -> Result<Probes, HostError> {
    let path = root.join(PROBES_FILE);
    let text = std::fs::read_to_string(&path).map_err(|source| HostError::ProbesFile {
        path: path.clone(),
        source,
    })?;
    let bad = |message: String| HostError::ProbesParse {
        path: path.clone(),
        message,
    };
    let file: ProbesFile = toml::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let perf = match file.perf_event_open.as_str() {
        "ok" => Ok(()),
        name => Err(CounterError::from_open_errno(errno_named(name).ok_or_else(|| {
            bad(format!(
                "perf_event_open = {name:?}: expected \"ok\" or an errno name such as \"ENOENT\""
            ))
        })?)),
    };
    let allowed = match &file.allowed_cpus {
        Some(list) => parse_cpu_list(list)
            .ok_or_else(|| bad(format!("allowed_cpus = {list:?} is not a CPU list")))?,
        None => root
            .online_cpus()
            .unwrap_or_else(|| (0..1024).collect::<BTreeSet<_>>()),
    };
    let clocks = file
        .clock_probe
        .into_iter()
        .enumerate()
        .map(|(i, e)| clock_entry(e).map_err(|m| bad(format!("clock_probe[{i}]: {m}"))))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Probes {
        machine: file.machine,
        hostname: file.hostname,
        kernel: file.kernel,
        perf,
        cpu_access: CpuAccess::Allowed(allowed),
        clock: ClockProber::fixed(clocks),
        tools: Tools::Fixed(file.tools),
        self_pid: None,
        cpu_locks: None,
    })
}

fn clock_entry(e: ClockEntry) -> Result<FixedClock, String> {
    if let Some(message) = e.error {
        return Ok(FixedClock {
            cpu: e.cpu,
            result: Err(message),
        });
    }
    let name = e.source.ok_or("needs `source` (or `error`)")?;
    let source = CycleSource::from_name(&name).ok_or_else(|| {
        format!(
            "source = {name:?}: expected \"perf_event:cpu-cycles:u\", \"tsc\" or \"cntvct_el0\""
        )
    })?;
    let hz = e.clock_hz.ok_or("needs `clock_hz`")?;
    Ok(FixedClock {
        cpu: e.cpu,
        result: Ok(ClockProbe {
            source,
            clock_hz: hz,
            clock_min_hz: e.clock_min_hz.unwrap_or(hz),
            clock_max_hz: e.clock_max_hz.unwrap_or(hz),
            clock_iqr_hz: e.clock_iqr_hz.unwrap_or(0),
            windows: e.windows.unwrap_or(21),
            reference_hz: e
                .reference_hz
                .or((!source.counts_core_cycles()).then_some(hz)),
            ref_to_core_ratio: e.ref_to_core_ratio,
        }),
    })
}

/// `"ENOENT"` → `Errno::ENOENT` (any name nix knows).
fn errno_named(name: &str) -> Option<Errno> {
    (1..4096)
        .map(Errno::from_raw)
        .find(|e| *e != Errno::UnknownErrno && format!("{e:?}") == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_names_resolve() {
        assert_eq!(errno_named("ENOENT"), Some(Errno::ENOENT));
        assert_eq!(errno_named("EOPNOTSUPP"), Some(Errno::EOPNOTSUPP));
        assert_eq!(errno_named("EACCES"), Some(Errno::EACCES));
        assert_eq!(errno_named("nonsense"), None);
    }

    #[test]
    fn a_minimal_file_loads_and_a_bad_one_says_where() {
        let dir = tempfile::tempdir().unwrap();
        let root = HostRoot::new(dir.path());
        assert!(matches!(
            load_probes(&root),
            Err(HostError::ProbesFile { .. })
        ));
        std::fs::write(
            dir.path().join(PROBES_FILE),
            "machine = \"x86_64\"\nperf_event_open = \"ENOENT\"\n\
             [[clock_probe]]\nsource = \"tsc\"\nclock_hz = 2100000000\n",
        )
        .unwrap();
        let mut p = load_probes(&root).unwrap();
        assert!(matches!(p.perf, Err(CounterError::NoPmu { .. })));
        let c = p.clock.probe(7).unwrap();
        assert_eq!(
            (c.source, c.reference_hz),
            (CycleSource::Tsc, Some(2_100_000_000))
        );
        std::fs::write(
            dir.path().join(PROBES_FILE),
            "machine = \"x86_64\"\nperf_event_open = \"ok\"\n[[clock_probe]]\nsource = \"x\"\n",
        )
        .unwrap();
        let e = load_probes(&root).unwrap_err().to_string();
        assert!(e.contains("clock_probe[0]"), "{e}");
    }
}
