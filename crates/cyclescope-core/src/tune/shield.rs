//! The shield: the measurement CPU kept for the measurement by moving every other movable task
//! of the cgroup v1 cpuset hierarchy's root into a cpuset of its own ([`SHIELD_SET`]) on the
//! other online CPUs. Threads started later by those tasks stay there too, which a one-time
//! `sched_setaffinity` cannot promise. The process that shields (and its workers) stays in the
//! root cpuset, so it can still pin to the measurement CPU. Undone by moving every thread of the
//! shield's cpuset back (those started since included), giving each saved thread its previous
//! allowed CPUs again, and removing the cpuset. Per-CPU kernel threads cannot move; they are
//! counted, never a failure. Where a cgroup v2 hierarchy enables the cpuset controller the
//! shield is a v2 partition instead (`partition`).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::cgroupfs;
use super::tasks::{self, PF_NO_SETAFFINITY};
use crate::host::{
    HostRoot, SHIELD_SET, cpuset_v1_dir, cpuset_v2_available, format_cpu_list, parse_cpu_list,
};

/// What the shield moves, saved in the restore file before anything moves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shield {
    /// The cpuset hierarchy's root folder under the host root (`sys/fs/cgroup/cpuset`).
    pub hierarchy: String,
    /// The shield cpuset's CPUs (the online CPUs without the measurement CPU and its siblings)
    /// and memory nodes (the root cpuset's).
    pub cpus: String,
    pub mems: String,
    pub tasks: Vec<ShieldTask>,
}

/// A thread moved into the shield's cpuset. On a fixture tree there is no live thread behind
/// the id: no start time and no allowed CPUs are known, and none are set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShieldTask {
    pub tid: i32,
    pub comm: String,
    pub start_time: Option<u64>,
    /// Its allowed CPUs before the move (the kernel widens them to the cpuset's on each move).
    pub allowed: Option<String>,
}

impl Shield {
    fn set(&self) -> String {
        format!("{}/{SHIELD_SET}", self.hierarchy)
    }

    /// One line for the plan.
    pub fn describe(&self) -> String {
        format!(
            "shield: {} task(s) of the root cpuset /{} moved into its child cpuset {SHIELD_SET} \
             (CPUs {}, memory nodes {}), with the threads they start later",
            self.tasks.len(),
            self.hierarchy,
            self.cpus,
            self.mems
        )
    }
}

/// The shield for `housekeeping` CPUs, or why there is none (a note).
pub(crate) fn plan(
    root: &HostRoot,
    housekeeping: &BTreeSet<usize>,
    self_pid: u32,
) -> Result<Shield, String> {
    let Some(hierarchy) = cpuset_v1_dir(root) else {
        return Err(if cpuset_v2_available(root) {
            "no shield: the cgroup v2 hierarchy has the cpuset controller but does not enable it \
             for its groups (echo +cpuset > /sys/fs/cgroup/cgroup.subtree_control, then tune \
             again; IRQs and task affinities are still moved)"
                .into()
        } else {
            "no shield: no cpuset hierarchy is mounted".into()
        });
    };
    if root.exists(&format!("{hierarchy}/{SHIELD_SET}")) {
        return Err(format!(
            "no shield: the cpuset /{hierarchy}/{SHIELD_SET} already exists (remove it with \
             rmdir once it holds no task)"
        ));
    }
    let mems = root
        .read(&format!("{hierarchy}/cpuset.mems"))
        .filter(|m| !m.is_empty())
        .ok_or_else(|| format!("no shield: /{hierarchy}/cpuset.mems is unreadable"))?;
    let tasks = cgroupfs::tasks(root, &hierarchy)
        .into_iter()
        .filter_map(|tid| movable(root, tid, self_pid))
        .collect();
    Ok(Shield {
        hierarchy,
        cpus: format_cpu_list(housekeeping),
        mems,
        tasks,
    })
}

/// A thread of the root cpuset that may move: on the live system not this process's, not
/// `kthreadd` and not a per-CPU kernel thread (the kernel refuses both).
fn movable(root: &HostRoot, tid: i32, self_pid: u32) -> Option<ShieldTask> {
    if !root.is_system() {
        return Some(ShieldTask {
            tid,
            comm: String::new(),
            start_time: None,
            allowed: None,
        });
    }
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_string())
    };
    if field("Tgid:")?.parse::<u32>().ok()? == self_pid || tid == 2 {
        return None;
    }
    let stat = std::fs::read_to_string(format!("/proc/{tid}/stat")).ok()?;
    let (comm, flags, start_time) = tasks::stat_fields(&stat)?;
    (flags & PF_NO_SETAFFINITY == 0).then(|| ShieldTask {
        tid,
        comm,
        start_time: Some(start_time),
        allowed: field("Cpus_allowed_list:"),
    })
}

/// Makes the cpuset and moves the tasks; returns how many moved and what the kernel refused
/// (threads that refuse the same way are named on one line). Err: the cpuset could not be
/// made (it exists since the plan, for one), so there is nothing of ours to undo.
pub(crate) fn apply(root: &HostRoot, shield: &Shield) -> Result<(usize, Vec<String>), String> {
    let set = shield.set();
    cgroupfs::make(root, &set).map_err(|e| format!("no shield: cpuset /{set}: {e}"))?;
    let limits = cgroupfs::write(root, &format!("{set}/cpuset.cpus"), &shield.cpus)
        .and_then(|()| cgroupfs::write(root, &format!("{set}/cpuset.mems"), &shield.mems));
    if let Err(e) = limits {
        // Ours and empty: restoring removes it.
        return Ok((0, vec![format!("no shield: cpuset /{set}: {e}")]));
    }
    let housekeeping = parse_cpu_list(&shield.cpus).unwrap_or_default();
    let mut moved = 0;
    let mut refused: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for t in &shield.tasks {
        let outcome = still_there(t).and_then(|()| {
            cgroupfs::attach(root, &shield.hierarchy, &set, t.tid).map_err(|e| e.to_string())
        });
        match outcome {
            Ok(()) => {
                moved += 1;
                // A thread pinned to some CPUs keeps what of them the shield leaves it.
                if let (Some(start), Some(kept)) = (t.start_time, narrower(t, &housekeeping)) {
                    let _ = tasks::set_allowed(t.tid, start, &kept);
                }
            }
            Err(e) => refused.entry(e).or_default().push(t.label()),
        }
    }
    Ok((moved, grouped(refused)))
}

/// Moves every thread of the shield's cpuset back (threads started since included), gives
/// the saved ones their allowed CPUs again and removes the cpuset.
pub(crate) fn restore(root: &HostRoot, shield: &Shield) -> (usize, Vec<String>) {
    let set = shield.set();
    if !root.exists(&set) {
        return (0, Vec::new());
    }
    let mut moved = 0;
    let mut refused: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for tid in cgroupfs::tasks(root, &set) {
        match cgroupfs::attach(root, &set, &shield.hierarchy, tid) {
            Ok(()) => moved += 1,
            Err(e) => refused
                .entry(e.to_string())
                .or_default()
                .push(tid.to_string()),
        }
    }
    for t in &shield.tasks {
        if let (Some(start), Some(allowed)) = (t.start_time, &t.allowed) {
            let _ = tasks::set_allowed(t.tid, start, allowed);
        }
    }
    let mut out = grouped(refused);
    if let Err(e) = cgroupfs::remove(root, &set) {
        out.push(format!("shield cpuset /{set} is not removed: {e}"));
    }
    (moved, out)
}

impl ShieldTask {
    fn label(&self) -> String {
        if self.comm.is_empty() {
            self.tid.to_string()
        } else {
            format!("{} ({})", self.tid, crate::sanitize::terminal(&self.comm))
        }
    }
}

/// Ok while the saved thread is the one alive under its id (always on a fixture tree).
fn still_there(t: &ShieldTask) -> Result<(), String> {
    match t.start_time {
        Some(start) if tasks::start_time(t.tid) != Some(start) => Err("exited".into()),
        _ => Ok(()),
    }
}

/// The thread's previous CPUs within the shield's, when that is less than all of them.
fn narrower(t: &ShieldTask, housekeeping: &BTreeSet<usize>) -> Option<String> {
    let before = parse_cpu_list(t.allowed.as_deref()?)?;
    let kept: BTreeSet<usize> = before.intersection(housekeeping).copied().collect();
    (!kept.is_empty() && &kept != housekeeping).then(|| format_cpu_list(&kept))
}

fn grouped(refused: BTreeMap<String, Vec<String>>) -> Vec<String> {
    refused
        .into_iter()
        .map(|(why, who)| {
            format!(
                "{} task(s) stay where they are ({why}): {}",
                who.len(),
                who.join(", ")
            )
        })
        .collect()
}

/// A process started while a CPU is shielded begins in the shield's cpuset, away from the
/// measurement CPU, so its workers could not pin there. As root it moves itself (all its
/// threads) back to the root cpuset: Ok(true). Ok(false): nothing to do. The error says why a
/// process outside the shield cannot measure on the shielded CPU.
pub fn join_measuring_set(root: &HostRoot) -> Result<bool, String> {
    // One small read for every start (workers too) when nothing is shielded.
    let mine = std::fs::read_to_string("/proc/self/cpuset").unwrap_or_default();
    if !root.is_system() || mine.trim() != format!("/{SHIELD_SET}") {
        return Ok(false);
    }
    let Some(hierarchy) = cpuset_v1_dir(root) else {
        return Ok(false);
    };
    if !nix::unistd::geteuid().is_root() {
        return Err(format!(
            "a CPU is shielded (`cyclescope tune`) and this process runs in the cpuset \
             {SHIELD_SET} beside it: only root may leave it, so workers cannot pin to the \
             shielded CPU (run as root, or `sudo cyclescope tune --restore`)"
        ));
    }
    let procs = format!("{hierarchy}/cgroup.procs");
    cgroupfs::write(root, &procs, &format!("{}\n", std::process::id()))
        .map(|()| true)
        .map_err(|e| format!("cannot leave the cpuset {SHIELD_SET} (/{procs}: {e})"))
}
