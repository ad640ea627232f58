//! The protections a worker is under, as the engine sees them from outside: read from
//! `/proc/<pid>/status`, `/proc/<pid>/ns/*` and `/proc/<pid>/cgroup` of the running worker
//! once it has spoken (its sandbox is in place before it loads the candidate, and none of
//! these can be loosened from inside: a seccomp filter stays, `no_new_privs` stays set,
//! dropped capabilities never come back). Nothing here comes from the worker's own report,
//! which the candidate could write. Landlock leaves no trace in `/proc`: records say what the
//! worker reported for it, named as such.

use serde::{Deserialize, Serialize};

/// A worker's protections, observed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Protections {
    /// `filter` with the number of seccomp programs, `strict`, or `none`.
    pub seccomp: String,
    pub no_new_privs: bool,
    /// True when the permitted, effective, inheritable, ambient and bounding sets are all empty.
    pub no_capabilities: bool,
    /// The real, effective, saved and filesystem uids.
    pub uids: Vec<u32>,
    /// The namespaces the worker has of its own (not the engine's): `net`, `ipc`, …
    pub own_namespaces: Vec<String>,
    /// The namespaces whose link the engine could not read from outside (a worker that is not
    /// dumpable and has no user namespace of its own, seen by an engine that is not root: one
    /// whose user namespace the engine made is the engine's to inspect): neither its own nor
    /// the engine's, as far as the engine can tell.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unobserved_namespaces: Vec<String>,
    /// Its control group (the v1 memory hierarchy's path, or the v2 one), "" when none.
    pub cgroup: String,
    /// Landlock as the engine knows it (the kernel's ABI, and what the workers' ruleset
    /// handles at it): nothing in `/proc` shows it. None in records made before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landlock: Option<crate::jail::landlock::Landlock>,
}

/// The namespaces compared with the engine's.
const NAMESPACES: [&str; 6] = ["net", "ipc", "uts", "pid", "mnt", "user"];

impl Protections {
    /// Reads worker `pid`'s protections; None when it has ended (its `/proc` entry is gone,
    /// or it is a zombie: a zombie has no namespaces or control group left to read, and its
    /// links would read as the engine's). The status is read last, so a worker seen alive
    /// there was alive when its links were read.
    pub fn of(pid: u32) -> Option<Self> {
        let proc = std::path::PathBuf::from(format!("/proc/{pid}"));
        let cgroup = std::fs::read_to_string(proc.join("cgroup")).unwrap_or_default();
        let link = |root: &std::path::Path, ns: &str| std::fs::read_link(root.join("ns").join(ns));
        let (mut own_namespaces, mut unobserved) = (Vec::new(), Vec::new());
        for ns in NAMESPACES {
            match (
                link(&proc, ns),
                link(std::path::Path::new("/proc/self"), ns),
            ) {
                (Ok(w), Ok(e)) if w != e => own_namespaces.push(ns.to_string()),
                (Err(e), Ok(_)) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                    // A process on its way out has no memory left (its `statm` reads all
                    // zeros), and its links are then closed to an engine that is not root:
                    // it ended before it could be looked at, as a zombie has.
                    if exiting(&proc) {
                        return None;
                    }
                    unobserved.push(ns.to_string())
                }
                _ => {}
            }
        }
        let status = std::fs::read_to_string(proc.join("status")).ok()?;
        if status
            .lines()
            .any(|l| l.starts_with("State:") && l[6..].trim_start().starts_with(['Z', 'X']))
        {
            return None;
        }
        let mut seen = Self::parse(&status, &cgroup, own_namespaces);
        // The engine's own group (a session's, a container's) is not the worker's.
        let engine = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        if seen.cgroup == memory_cgroup(&engine) {
            seen.cgroup.clear();
        }
        Some(Self {
            unobserved_namespaces: unobserved,
            landlock: Some(crate::jail::landlock::Landlock::of_this_kernel()),
            ..seen
        })
    }

    fn parse(status: &str, cgroup: &str, own_namespaces: Vec<String>) -> Self {
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                .map(str::trim)
        };
        let seccomp = match (field("Seccomp"), field("Seccomp_filters")) {
            (Some("2"), Some(n)) => format!("filter ({n} program(s))"),
            (Some("2"), None) => "filter".into(),
            (Some("1"), _) => "strict".into(),
            _ => "none".into(),
        };
        let empty = |name| field(name).is_some_and(|v| v.chars().all(|c| c == '0'));
        let cgroup = memory_cgroup(cgroup);
        Self {
            seccomp,
            no_new_privs: field("NoNewPrivs") == Some("1"),
            no_capabilities: ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"]
                .into_iter()
                .all(empty),
            uids: field("Uid")
                .map(|v| {
                    v.split_whitespace()
                        .filter_map(|u| u.parse().ok())
                        .collect()
                })
                .unwrap_or_default(),
            own_namespaces,
            unobserved_namespaces: Vec::new(),
            cgroup,
            landlock: None,
        }
    }

    /// One line for `check`: what was read, then each gap.
    pub fn summary(&self) -> String {
        let mut parts = vec![
            format!("seccomp {}", self.seccomp),
            format!(
                "no_new_privs {}",
                if self.no_new_privs { "set" } else { "NOT set" }
            ),
            if self.no_capabilities {
                "no capabilities".to_string()
            } else {
                "capabilities HELD".to_string()
            },
            format!(
                "uid {}",
                self.uids
                    .first()
                    .map_or_else(|| "unknown".into(), u32::to_string)
            ),
            match (
                self.own_namespaces.is_empty(),
                self.unobserved_namespaces.is_empty(),
            ) {
                (true, true) => "the engine's namespaces".to_string(),
                (false, true) => {
                    format!("namespaces of its own: {}", self.own_namespaces.join(", "))
                }
                (_, false) => format!(
                    "namespaces of its own: {}; not readable from outside: {}",
                    none_if_empty(&self.own_namespaces),
                    self.unobserved_namespaces.join(", ")
                ),
            },
            if self.cgroup.is_empty() {
                "no control group".to_string()
            } else {
                format!("control group {}", crate::sanitize::log_field(&self.cgroup))
            },
        ];
        parts.extend(self.landlock.as_ref().map(|l| l.summary()));
        parts.extend(self.gaps().iter().map(|g| format!("⚠ {g}")));
        parts.join("; ")
    }

    /// What is missing, each with what a candidate could then do; empty when nothing is.
    pub fn gaps(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if !self.seccomp.starts_with("filter") {
            out.push(
                "no seccomp filter: the candidate may make any system call (sockets, exec, ptrace)",
            );
        }
        if !self.no_new_privs {
            out.push("no no_new_privs: a setuid program it ran could gain privileges");
        }
        if !self.no_capabilities {
            out.push(
                "capabilities held: as root, the candidate may change files, limits and the clock",
            );
        }
        if self.uids.first() == Some(&0) {
            out.push("runs as uid 0: files root owns are the candidate's to read");
        }
        let unobserved = |ns: &str| self.unobserved_namespaces.iter().any(|n| n == ns);
        if !self.unobserved_namespaces.is_empty() {
            out.push(
                "namespaces not readable from outside (an engine that is not root cannot read \
                 them of a worker that is not dumpable and has no user namespace of its \
                 own): they rest on the engine's word",
            );
        }
        if !self.own_namespaces.iter().any(|n| n == "net") && !unobserved("net") {
            out.push(
                "no network namespace of its own: the candidate reaches the engine's network \
                 wherever its system-call filter lets it make a socket",
            );
        }
        if !self.own_namespaces.iter().any(|n| n == "mnt") && !unobserved("mnt") {
            out.push(
                "no /tmp of its own: the candidate sees the engine's /tmp, and what it may \
                 write there others see",
            );
        }
        if !self.own_namespaces.iter().any(|n| n == "pid") && !unobserved("pid") {
            out.push(
                "no PID namespace of its own: the candidate may signal or open the host's \
                 processes of its uid, wherever its system-call filter lets it",
            );
        }
        if self.cgroup.is_empty() {
            out.push("no control group: memory and processes are bounded only by rlimits");
        }
        out.extend(self.landlock.iter().flat_map(|l| l.gaps()));
        out
    }
}

/// Whether the process at `proc` has released its memory (exiting): `statm` all zeros.
fn exiting(proc: &std::path::Path) -> bool {
    std::fs::read_to_string(proc.join("statm"))
        .map_or(true, |s| s.split_whitespace().all(|f| f == "0"))
}

/// The memory controller's group in a `/proc/<pid>/cgroup` text (v1's `memory` line, else
/// v2's), or empty at the root.
fn memory_cgroup(text: &str) -> String {
    text.lines()
        .find_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            let memory = controllers.split(',').any(|c| c == "memory") || controllers.is_empty();
            (memory && path != "/").then(|| path.to_string())
        })
        .unwrap_or_default()
}

/// `names` joined, or `none`.
fn none_if_empty(names: &[String]) -> String {
    match names.is_empty() {
        true => "none".into(),
        false => names.join(", "),
    }
}

/// A record's account of its workers' protections: what was observed, and each gap in words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observed {
    #[serde(flatten)]
    pub protections: Protections,
    pub gaps: Vec<String>,
}

impl From<Protections> for Observed {
    fn from(protections: Protections) -> Self {
        let gaps = protections.gaps().into_iter().map(String::from).collect();
        Self { protections, gaps }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATUS: &str = "Name:\tcyclescope\nUid:\t0\t0\t0\t0\nNoNewPrivs:\t1\nSeccomp:\t2\n\
        Seccomp_filters:\t2\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\n\
        CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\n";
    const CGROUP: &str = "12:pids:/process_api/cyclescope-worker-1\n\
        4:memory:/process_api/cyclescope-worker-1\n1:name=systemd:/\n";

    #[test]
    fn status_fields_read_as_protections_and_gaps() {
        let own = ["net", "ipc", "uts", "mnt", "pid"]
            .map(String::from)
            .to_vec();
        let p = Protections::parse(STATUS, CGROUP, own.clone());
        assert_eq!(p.seccomp, "filter (2 program(s))");
        assert!(p.no_new_privs && p.no_capabilities, "{p:?}");
        assert_eq!(p.cgroup, "/process_api/cyclescope-worker-1");
        assert_eq!(
            p.gaps(),
            ["runs as uid 0: files root owns are the candidate's to read"]
        );
        let bare = Protections::parse(
            "Uid:\t1000\t1000\t1000\t1000\nNoNewPrivs:\t0\nSeccomp:\t0\nCapBnd:\t000001ffffffffff\n",
            "0::/\n",
            vec![],
        );
        assert_eq!(bare.seccomp, "none");
        assert_eq!(bare.gaps().len(), 7, "{:?}", bare.gaps());
        assert!(bare.gaps().iter().any(|g| g.contains("no PID namespace")));
        assert!(bare.gaps().iter().any(|g| g.contains("network namespace")));
        assert!(bare.gaps().iter().any(|g| g.contains("no /tmp of its own")));
        let shared_tmp = Protections::parse(
            STATUS,
            CGROUP,
            own.iter().filter(|n| *n != "mnt").cloned().collect(),
        );
        assert_eq!(shared_tmp.gaps().len(), 2, "{:?}", shared_tmp.gaps());
        // Unreadable is not missing: one gap says so, none claims a namespace is absent.
        let unread = Protections {
            unobserved_namespaces: ["net", "mnt", "pid"].map(String::from).to_vec(),
            ..Protections::parse(STATUS, CGROUP, vec![])
        };
        let gaps = unread.gaps();
        assert_eq!(gaps.len(), 2, "{gaps:?}");
        assert!(gaps.iter().any(|g| g.contains("not readable from outside")));
        assert!(
            unread
                .summary()
                .contains("not readable from outside: net, mnt, pid")
        );
    }

    /// A worker that ended before it was looked at (its first line read only after its end)
    /// is not observed: a zombie's links and control group would read as the engine's.
    #[test]
    fn a_zombie_is_not_observed() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        let flags = nix::sys::wait::WaitPidFlag::WEXITED | nix::sys::wait::WaitPidFlag::WNOWAIT;
        nix::sys::wait::waitid(nix::sys::wait::Id::Pid(pid), flags).unwrap();
        assert_eq!(Protections::of(child.id()), None);
        child.wait().unwrap();
    }

    #[test]
    fn this_process_reads_as_itself() {
        let me = Protections::of(std::process::id()).unwrap();
        assert!(me.own_namespaces.is_empty(), "{me:?}");
        // Whatever group this process is in (a session's, here), it is not one of its own.
        assert_eq!(me.cgroup, "", "{me:?}");
        assert_eq!(me.uids.len(), 4, "{me:?}");
    }
}
