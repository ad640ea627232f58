//! The host check's slow parts reused between runs: the clock probe (21 × 50 ms pinned to the
//! measurement CPU) and the tool versions (`gcc`/`cmake`/`python3 --version`, `lscpu`). A
//! result is stored per root and CPU in a small JSON file beside the tuning journal, with a
//! fingerprint of everything it depended on — the cpufreq, turbo/boost and SMT files, the CPU
//! model, the kernel and its boot, the clocksource, the perf counter's outcome, the tools'
//! executables, a fixture's probes file — and is reused only while that fingerprint is unchanged
//! and the result is at most a bounded age old ([`DEFAULT_MAX_AGE`], or
//! `CYCLESCOPE_HOST_CACHE_MAX_AGE_S`).
//! The cheap checks (every file the checks read, the load, busy CPUs, pinning) always run
//! afresh. A probe that found the clock unsteady, or failed, is never kept: the next run probes
//! again. A cache that cannot be read or written costs only time; it never stops a run.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use serde_json::{Map, Value};

use super::probes::{Probes, ToolVersions, Tools};
use super::report::{HostReport, check_host};
use super::root::HostRoot;
use super::{HostError, environment};
use crate::counter::ClockProbe;

/// How old a reused result may be: long enough for an evaluator's tuning loop (rebuild, `s`,
/// look, again), short enough that a firmware clock warming up or a machine filling with
/// other work is probed again.
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(600);

/// Seconds a result may be reused for (0: never), instead of [`DEFAULT_MAX_AGE`].
pub const MAX_AGE_ENV: &str = "CYCLESCOPE_HOST_CACHE_MAX_AGE_S";

/// The environment block's key naming when the reused result was measured (absent when the
/// check measured everything itself).
pub const REUSED_KEY: &str = "host_check_reused_from";

/// Bumped whenever what is stored, or what the fingerprint covers, changes.
const FORMAT: u32 = 1;

/// Where a host's results are kept, and for how long they count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostCache {
    dir: PathBuf,
    max_age: Duration,
}

/// A stored result, as reused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stored {
    format: u32,
    fingerprint: String,
    /// When the probe ran (UTC, ISO 8601), as shown and recorded.
    pub checked_utc: String,
    checked_unix_s: u64,
    clock_probe: ClockProbe,
    tools: ToolVersions,
}

/// One CPU's host check: the checks, the environment block, and whether the slow parts were
/// reused (when they were measured, UTC).
#[derive(Debug, Clone)]
pub struct Checked {
    pub report: HostReport,
    pub environment: Map<String, Value>,
    pub reused: Option<String>,
}

/// Checks CPU `cpu` of the host below `root`: with a cache, the clock probe and the tool
/// versions are reused while their inputs are unchanged and young enough at `now` (and kept for
/// the next run when they were measured). Without one everything is measured. Live, the tools
/// run while the clock probe measures (on another CPU: the caller is off the measurement CPU).
pub fn check_cached(
    root: &HostRoot,
    cpu: usize,
    cache: Option<&HostCache>,
    now: SystemTime,
) -> Result<Checked, HostError> {
    let mut probes = Probes::for_root(root)?;
    let reused = cache.and_then(|c| c.reuse(root, cpu, &mut probes, now));
    let want_lscpu = environment::wants_lscpu(root);
    let tools = probes.tools.clone();
    let (report, versions) = std::thread::scope(|s| {
        let versions = s.spawn(move || tools.versions(want_lscpu));
        let report = check_host(root, cpu, &mut probes);
        (report, versions.join())
    });
    // A panicked tools thread leaves the tools to be asked again, in line.
    if let Ok(v) = versions {
        probes.tools = Tools::Fixed(v);
    }
    let mut environment = environment(root, cpu, &mut probes);
    match (&reused, cache) {
        (Some(s), _) => {
            environment.insert(REUSED_KEY.into(), Value::from(s.checked_utc.clone()));
        }
        (None, Some(c)) => c.store(root, cpu, &probes, now),
        (None, None) => {}
    }
    Ok(Checked {
        report,
        environment,
        reused: reused.map(|s| s.checked_utc),
    })
}

/// The bounded age `CYCLESCOPE_HOST_CACHE_MAX_AGE_S` sets: unset is the default, 0 turns the
/// reuse off, anything but a whole number of seconds is an error naming the variable.
fn max_age_of(value: Option<String>) -> Result<Duration, String> {
    let Some(v) = value else {
        return Ok(DEFAULT_MAX_AGE);
    };
    v.trim().parse::<u64>().map(Duration::from_secs).map_err(|_| {
        format!(
            "{MAX_AGE_ENV}=\"{}\" is not a whole number of seconds (0 turns the host check's reuse off)",
            crate::sanitize::terminal(&v)
        )
    })
}

impl HostCache {
    /// The cache in `dir` (the tuning journal's folder's `host-cache/`).
    pub fn new(dir: impl Into<PathBuf>, max_age: Duration) -> Self {
        Self {
            dir: dir.into(),
            max_age,
        }
    }

    /// The cache beside the journal file `journal`, its age from `CYCLESCOPE_HOST_CACHE_MAX_AGE_S`
    /// (unset: the default); a value that is not a whole number of seconds is refused by name.
    pub fn beside_journal(journal: &Path) -> Result<Self, String> {
        let dir = journal
            .parent()
            .unwrap_or_else(|| Path::new("."))
            .join("host-cache");
        Ok(Self::new(dir, max_age_of(std::env::var(MAX_AGE_ENV).ok())?))
    }

    /// The result stored for `cpu` under `root`, when its inputs are unchanged and it is at
    /// most the bounded age at `now`; `probes` then replay it (no probe, no tool runs).
    pub(crate) fn reuse(
        &self,
        root: &HostRoot,
        cpu: usize,
        probes: &mut Probes,
        now: SystemTime,
    ) -> Option<Stored> {
        if self.max_age.is_zero() {
            return None;
        }
        let text = std::fs::read_to_string(self.file(root, cpu)).ok()?;
        let stored: Stored = serde_json::from_str(&text).ok()?;
        let age = unix_s(now).checked_sub(stored.checked_unix_s)?;
        let fresh = age <= self.max_age.as_secs();
        let same = stored.format == FORMAT && stored.fingerprint == fingerprint(root, cpu, probes);
        if !(fresh && same) {
            return None;
        }
        probes.clock.replay(stored.clock_probe.clone());
        probes.tools = Tools::Fixed(stored.tools.clone());
        Some(stored)
    }

    /// Keeps what `probes` measured for the next runs: only a probe that succeeded and found
    /// the clock steady (or could only measure a reference counter, which no retry changes).
    /// An unsteady or failed probe removes the earlier result instead.
    pub(crate) fn store(&self, root: &HostRoot, cpu: usize, probes: &Probes, now: SystemTime) {
        let path = self.file(root, cpu);
        let keep = match (probes.clock.last_ok(), &probes.tools) {
            (Some(p), Tools::Fixed(tools)) if p.is_steady() || !p.measures_core_clock() => {
                Some((p.clone(), tools.clone()))
            }
            _ => None,
        };
        let Some((clock_probe, tools)) = keep else {
            let _ = std::fs::remove_file(&path);
            return;
        };
        let stored = Stored {
            format: FORMAT,
            fingerprint: fingerprint(root, cpu, probes),
            checked_utc: utc(now),
            checked_unix_s: unix_s(now),
            clock_probe,
            tools,
        };
        let Ok(text) = serde_json::to_string_pretty(&stored) else {
            return;
        };
        // `.tmp` + rename: a reader never sees half a file; two writers leave one whole one.
        // Only into a folder of this user's, and through a fresh file (never a planted link):
        // the cache is a convenience, so a folder that is not ours just goes unwritten.
        if crate::owned::own_cache_folder(&self.dir).is_ok() {
            let _ = crate::record::pyjson::write_atomic(&path, text.as_bytes());
        }
    }

    /// One file per root and CPU: `cpu<N>-<12 hex digits of the root's path>.json`.
    fn file(&self, root: &HostRoot, cpu: usize) -> PathBuf {
        let abs = std::path::absolute(root.dir()).unwrap_or_else(|_| root.dir().to_path_buf());
        let digest = Sha256::digest(abs.as_os_str().as_encoded_bytes());
        let tag: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("cpu{cpu}-{tag}.json"))
    }
}

/// The files under the root the probe's outcome and the tool versions depend on, for `cpu`.
fn inputs(cpu: usize) -> Vec<String> {
    let c = format!("sys/devices/system/cpu/cpu{cpu}");
    let mut files: Vec<String> = [
        "scaling_governor",
        "scaling_driver",
        "scaling_min_freq",
        "scaling_max_freq",
    ]
    .iter()
    .map(|f| format!("{c}/cpufreq/{f}"))
    .collect();
    files.extend(
        [
            "sys/devices/system/cpu/intel_pstate/no_turbo",
            "sys/devices/system/cpu/cpufreq/boost",
            "sys/devices/system/cpu/smt/control",
            "sys/devices/system/cpu/smt/active",
            "sys/devices/system/cpu/online",
            "sys/devices/system/clocksource/clocksource0/current_clocksource",
            "proc/sys/kernel/perf_event_paranoid",
            "proc/sys/kernel/random/boot_id",
            "proc/sys/kernel/osrelease",
            super::fixture::PROBES_FILE,
        ]
        .map(str::to_string),
    );
    files.push(format!("{c}/topology/thread_siblings_list"));
    files
}

/// sha256 over every input: the files (absent ones as such), `/proc/cpuinfo` without its
/// moving `cpu MHz` lines, what the probes say of the machine and its counter, and the tools'
/// executables on `PATH`.
fn fingerprint(root: &HostRoot, cpu: usize, probes: &Probes) -> String {
    let mut h = Sha256::new();
    let mut put = |k: &str, v: &str| {
        h.update(k.as_bytes());
        h.update([0]);
        h.update(v.as_bytes());
        h.update([0xff]);
    };
    put("format", &FORMAT.to_string());
    put("cpu", &cpu.to_string());
    for f in inputs(cpu) {
        put(&f, root.read_raw(&f).as_deref().unwrap_or("\u{0}absent"));
    }
    let cpuinfo: String = root
        .read_raw("proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.starts_with("cpu MHz"))
        .collect::<Vec<_>>()
        .join("\n");
    put("proc/cpuinfo", &cpuinfo);
    put("machine", &probes.machine);
    put("kernel", probes.kernel.as_deref().unwrap_or(""));
    put("hostname", probes.hostname.as_deref().unwrap_or(""));
    put(
        "perf",
        &format!("{:?}", probes.perf.as_ref().map_err(|e| e.to_string())),
    );
    put("clock prober", &probes.clock.describe());
    if root.is_system() {
        put("PATH", &std::env::var("PATH").unwrap_or_default());
        for tool in ["gcc", "cmake", "python3", "lscpu"] {
            put(tool, &executable_identity(tool));
        }
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Where `tool` resolves on `PATH`, and the size and time of what it is (after links), so a
/// replaced compiler is run again.
fn executable_identity(tool: &str) -> String {
    use std::os::unix::fs::MetadataExt;
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
        .map_or_else(
            || "absent".into(),
            |p| {
                let real = p.canonicalize().unwrap_or(p);
                match std::fs::metadata(&real) {
                    Ok(m) => format!("{} {} {}", real.display(), m.len(), m.mtime()),
                    Err(_) => real.display().to_string(),
                }
            },
        )
}

fn unix_s(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

fn utc(t: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(t)
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

#[cfg(test)]
mod tests;
