//! The folder that stands for `/` when reading sysfs and procfs (a fixture tree in tests,
//! `--root DIR` on the command line), and the small text formats found there: CPU lists
//! (`0-3,8`) and hexadecimal CPU masks (`ff,ffffffff`). Reading only: nothing here writes to
//! the system or runs a command.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Every sysfs/procfs read of `host` goes through this root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRoot {
    dir: PathBuf,
}

impl Default for HostRoot {
    fn default() -> Self {
        HostRoot::system()
    }
}

impl HostRoot {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        HostRoot { dir: dir.into() }
    }

    /// The running system's own `/`.
    pub(crate) fn system() -> Self {
        HostRoot::new("/")
    }

    /// True for `/` itself: only then are live probes (perf_event_open, the clock) meaningful.
    pub fn is_system(&self) -> bool {
        self.dir == Path::new("/")
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `rel` (e.g. `"proc/cpuinfo"`, a leading `/` is ignored) under the root.
    pub fn join(&self, rel: &str) -> PathBuf {
        self.dir.join(rel.trim_start_matches('/'))
    }

    /// The file's text with surrounding whitespace removed (as the harness's `sysfs()` does),
    /// or None when it cannot be read.
    pub(crate) fn read(&self, rel: &str) -> Option<String> {
        self.read_raw(rel).map(|s| s.trim().to_string())
    }

    /// The file's text as is (invalid UTF-8 replaced), or None when it cannot be read.
    pub(crate) fn read_raw(&self, rel: &str) -> Option<String> {
        std::fs::read(self.join(rel))
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    pub(crate) fn exists(&self, rel: &str) -> bool {
        self.join(rel).exists()
    }

    /// Names in a folder, sorted; empty when it cannot be listed.
    pub(crate) fn entries(&self, rel: &str) -> Vec<String> {
        let Ok(dir) = std::fs::read_dir(self.join(rel)) else {
            return Vec::new();
        };
        let mut names: Vec<String> = dir
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .collect();
        names.sort();
        names
    }

    /// CPUs in `sys/devices/system/cpu/online`.
    pub(crate) fn online_cpus(&self) -> Option<BTreeSet<usize>> {
        parse_cpu_list(&self.read("sys/devices/system/cpu/online")?)
    }

    /// The CPUs sharing a core with `cpu` (its `thread_siblings_list`, itself included).
    pub(crate) fn thread_siblings(&self, cpu: usize) -> Option<BTreeSet<usize>> {
        parse_cpu_list(&self.read(&format!(
            "sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list"
        ))?)
    }

    /// Why `cpus` cannot measure side by side: one sentence per pair of them that are SMT
    /// siblings (two hardware threads of one core disturb each other's cycle counts). CPUs
    /// without topology files pass here; the host check reports them.
    pub fn smt_sibling_pairs(&self, cpus: &[usize]) -> Vec<String> {
        let mut out = Vec::new();
        for (i, &a) in cpus.iter().enumerate() {
            let Some(siblings) = self.thread_siblings(a) else {
                continue;
            };
            for &b in &cpus[i + 1..] {
                if b != a && siblings.contains(&b) {
                    out.push(format!(
                        "CPUs {a} and {b} are SMT siblings (one core: thread_siblings_list of \
                         CPU {a} is {}), so their trials would disturb each other",
                        format_cpu_list(&siblings)
                    ));
                }
            }
        }
        out
    }

    /// The highest-numbered online CPU: the default measurement CPU (CPU 0 takes most
    /// housekeeping interrupts). On the live system, only the CPUs this process may use
    /// count (its allocation), as for `run`.
    pub fn default_cpu(&self) -> Option<usize> {
        let online = self.online_cpus()?;
        if self.is_system() {
            let allowed = crate::cpu::allowed();
            return online.into_iter().rev().find(|c| allowed.contains(c));
        }
        online.last().copied()
    }
}

/// Parses a kernel CPU list (`"0-3,8,10-11"`; empty text is the empty set). None when malformed
/// (e.g. `"(null)"`).
pub fn parse_cpu_list(text: &str) -> Option<BTreeSet<usize>> {
    let mut cpus = BTreeSet::new();
    for part in text
        .trim()
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        // `a-b:g/n` (stride groups) is accepted by the kernel on the command line only.
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
        if a > b || b > 1 << 16 {
            return None;
        }
        cpus.extend(a..=b);
    }
    Some(cpus)
}

/// Whether a hexadecimal CPU mask (`"ff,ffffffff"`, as in `/proc/irq/*/smp_affinity`) has
/// `cpu` set. None when malformed.
pub fn mask_has_cpu(mask: &str, cpu: usize) -> Option<bool> {
    let digits: Vec<u32> = mask
        .trim()
        .chars()
        .filter(|&c| c != ',')
        .map(|c| c.to_digit(16))
        .collect::<Option<_>>()?;
    if digits.is_empty() {
        return None;
    }
    let from_right = cpu / 4;
    Some(from_right < digits.len() && digits[digits.len() - 1 - from_right] & (1 << (cpu % 4)) != 0)
}

/// Formats a CPU set the way the kernel does (`0-3,8`).
pub fn format_cpu_list(cpus: &BTreeSet<usize>) -> String {
    let mut parts = Vec::new();
    let mut iter = cpus.iter().copied().peekable();
    while let Some(start) = iter.next() {
        let mut end = start;
        while iter.peek() == Some(&(end + 1)) {
            end = iter.next().unwrap_or(end);
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smt_siblings_among_the_measurement_cpus_are_named() {
        let root = HostRoot::new(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/host/smt-on"),
        );
        assert!(
            root.smt_sibling_pairs(&[0, 2]).is_empty(),
            "one thread per core"
        );
        let pairs = root.smt_sibling_pairs(&[0, 1, 2, 3]);
        assert_eq!(pairs.len(), 2, "{pairs:?}");
        assert!(
            pairs[0].starts_with("CPUs 0 and 1 are SMT siblings"),
            "{pairs:?}"
        );
        assert!(pairs[1].contains("CPU 2 is 2-3"), "{pairs:?}");
    }

    #[test]
    fn cpu_lists_parse_like_the_harness() {
        let s = |v: &[usize]| v.iter().copied().collect::<BTreeSet<_>>();
        assert_eq!(parse_cpu_list("0-3,8"), Some(s(&[0, 1, 2, 3, 8])));
        assert_eq!(parse_cpu_list("2\n"), Some(s(&[2])));
        assert_eq!(parse_cpu_list(""), Some(s(&[])));
        assert_eq!(parse_cpu_list("(null)"), None);
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(format_cpu_list(&s(&[0, 2, 4, 5, 6, 9])), "0,2,4-6,9");
    }

    #[test]
    fn masks_are_read_from_the_right() {
        assert_eq!(mask_has_cpu("3", 1), Some(true));
        assert_eq!(mask_has_cpu("3", 2), Some(false));
        assert_eq!(mask_has_cpu("ffffb", 2), Some(false));
        assert_eq!(mask_has_cpu("1,00000000", 32), Some(true));
        assert_eq!(mask_has_cpu("1,00000000", 31), Some(false));
        assert_eq!(mask_has_cpu("zz", 0), None);
    }

    #[test]
    fn paths_join_under_the_root() {
        let r = HostRoot::new("/tmp/x");
        assert_eq!(
            r.join("/proc/cpuinfo"),
            PathBuf::from("/tmp/x/proc/cpuinfo")
        );
        assert!(HostRoot::default().is_system());
        assert!(!r.is_system());
    }
}
