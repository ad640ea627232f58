//! The shield on a cgroup v2 hierarchy whose root enables the cpuset controller: the
//! measurement CPU (and its SMT siblings) given to a child group of its own, [`PARTITION_GROUP`],
//! made a cpuset partition (`cpuset.cpus.partition` = `isolated`, else `root` on kernels without
//! isolated partitions). The kernel then takes those CPUs from every other group's effective
//! CPUs, so every task outside the group, and every task started later, runs on the others.
//! A worker joins the group before it pins itself ([`join_partition`]); the process that starts
//! it stays where it is. Undone by making the group a member again (its CPUs go back to the
//! others), moving any process still in it to the hierarchy's root and removing it. On a
//! fixture tree there is no kernel: the group's control files are made and removed as the
//! kernel would, and the partition's state reads back as written.

use std::collections::BTreeSet;
use std::io::Write;

use serde::{Deserialize, Serialize};

use crate::host::{HostRoot, PARTITION_GROUP, cpuset_v2_dir, format_cpu_list, partition_cpus};

/// The control files of a new v2 group that the partition reads or writes, with the text the
/// kernel gives them.
const CONTROL_FILES: [(&str, &str); 4] = [
    ("cgroup.procs", ""),
    ("cpuset.cpus", ""),
    ("cpuset.mems", ""),
    ("cpuset.cpus.partition", "member\n"),
];

/// The partition to make, saved in the restore file before anything changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Partition {
    /// The v2 hierarchy's root folder under the host root (`sys/fs/cgroup`).
    pub hierarchy: String,
    /// The CPUs given to the partition: the measurement CPU and its siblings.
    pub cpus: String,
}

impl Partition {
    fn group(&self) -> String {
        format!("{}/{PARTITION_GROUP}", self.hierarchy)
    }

    /// One line for the plan.
    pub fn describe(&self) -> String {
        format!(
            "shield: CPUs {} made the cgroup v2 cpuset partition /{} (isolated, else root): \
             every other group's tasks run on the other CPUs, workers join it to measure",
            self.cpus,
            self.group()
        )
    }
}

/// The partition for the CPUs `away` (the measurement CPU and its siblings), or why there is
/// none: None when the host has no v2 hierarchy with the cpuset controller enabled (the v1
/// shield is tried then), Some(Err(note)) when it has one but the group cannot be ours.
pub(crate) fn plan(root: &HostRoot, away: &BTreeSet<usize>) -> Option<Result<Partition, String>> {
    let hierarchy = cpuset_v2_dir(root)?;
    let group = format!("{hierarchy}/{PARTITION_GROUP}");
    if root.exists(&group) {
        return Some(Err(format!(
            "no shield: the cgroup /{group} already exists (remove it with rmdir once it holds \
             no process)"
        )));
    }
    Some(Ok(Partition {
        hierarchy,
        cpus: format_cpu_list(away),
    }))
}

/// Makes the group and its partition; the settings the kernel refused (the group is ours
/// then, and restoring removes it). Err: the group could not be made (it exists since the
/// plan, for one), so there is nothing of ours to undo.
pub(crate) fn apply(root: &HostRoot, p: &Partition) -> Result<Vec<String>, String> {
    let group = p.group();
    make(root, &group).map_err(|e| format!("no shield: cgroup /{group}: {e}"))?;
    let mems = root
        .read(&format!("{}/cpuset.mems.effective", p.hierarchy))
        .unwrap_or_default();
    let limits = write(root, &format!("{group}/cpuset.cpus"), &p.cpus).and_then(|()| {
        if mems.is_empty() {
            Ok(())
        } else {
            write(root, &format!("{group}/cpuset.mems"), &mems)
        }
    });
    if let Err(e) = limits {
        return Ok(vec![format!("no shield: cgroup /{group}: {e}")]);
    }
    let state = format!("{group}/cpuset.cpus.partition");
    if let Err(e) = write(root, &state, "isolated").or_else(|_| write(root, &state, "root")) {
        return Ok(vec![format!("no shield: /{state}: {e}")]);
    }
    // The kernel takes the write and says afterwards when it could not give the CPUs away
    // (another group claims them): `root invalid (…)`.
    let now = root.read(&state).unwrap_or_default();
    if !matches!(now.trim(), "root" | "isolated") {
        return Ok(vec![format!("no shield: /{state} reads `{now}`")]);
    }
    Ok(Vec::new())
}

/// Gives the CPUs back, moves the processes still in the group to the hierarchy's root and
/// removes the group; how many moved and what the kernel refused.
pub(crate) fn restore(root: &HostRoot, p: &Partition) -> (usize, Vec<String>) {
    let group = p.group();
    if !root.exists(&group) {
        return (0, Vec::new());
    }
    let mut refused = Vec::new();
    if let Err(e) = write(root, &format!("{group}/cpuset.cpus.partition"), "member") {
        refused.push(format!("/{group}/cpuset.cpus.partition: {e}"));
    }
    let mut moved = 0;
    for pid in procs(root, &group) {
        match attach(root, &group, &p.hierarchy, pid) {
            Ok(()) => moved += 1,
            Err(e) => refused.push(format!("process {pid} stays in /{group}: {e}")),
        }
    }
    if let Err(e) = remove(root, &group) {
        refused.push(format!("shield cgroup /{group} is not removed: {e}"));
    }
    (moved, refused)
}

/// A worker about to pin itself to `cpu` joins the partition holding it (on the running
/// system, while `tune` has one): outside it the kernel lets no task use the CPU. Ok(false):
/// no partition holds `cpu`.
pub fn join_partition(cpu: usize) -> Result<bool, String> {
    let root = HostRoot::new("/");
    if !partition_cpus(&root).is_some_and(|c| c.contains(&cpu)) {
        return Ok(false);
    }
    let Some(hierarchy) = cpuset_v2_dir(&root) else {
        return Ok(false);
    };
    let procs = format!("{hierarchy}/{PARTITION_GROUP}/cgroup.procs");
    write(&root, &procs, &std::process::id().to_string())
        .map(|()| true)
        .map_err(|e| {
            format!(
                "CPU {cpu} is shielded by the partition /{hierarchy}/{PARTITION_GROUP}, which \
                 this worker cannot join (/{procs}: {e}; run as root)"
            )
        })
}

fn make(root: &HostRoot, group: &str) -> std::io::Result<()> {
    std::fs::create_dir(root.join(group))?;
    if !root.is_system() {
        for (f, text) in CONTROL_FILES {
            std::fs::write(root.join(&format!("{group}/{f}")), text)?;
        }
    }
    Ok(())
}

fn write(root: &HostRoot, rel: &str, text: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(!root.is_system())
        .open(root.join(rel))?;
    f.write_all(text.as_bytes())
}

/// The process ids in `<group>/cgroup.procs`, sorted.
fn procs(root: &HostRoot, group: &str) -> Vec<i32> {
    super::cgroupfs::ids(root, &format!("{group}/cgroup.procs"))
}

/// Moves process `pid` from group `from` into group `to` (on a fixture: both lists edited).
fn attach(root: &HostRoot, from: &str, to: &str, pid: i32) -> std::io::Result<()> {
    if root.is_system() {
        return write(root, &format!("{to}/cgroup.procs"), &pid.to_string());
    }
    let listing = |ids: BTreeSet<i32>| -> String { ids.iter().map(|p| format!("{p}\n")).collect() };
    let mut left: BTreeSet<i32> = procs(root, from).into_iter().collect();
    left.remove(&pid);
    let mut joined: BTreeSet<i32> = procs(root, to).into_iter().collect();
    joined.insert(pid);
    write(root, &format!("{from}/cgroup.procs"), &listing(left))?;
    write(root, &format!("{to}/cgroup.procs"), &listing(joined))
}

/// Removes the group; the kernel refuses (EBUSY) while it holds a process.
fn remove(root: &HostRoot, group: &str) -> std::io::Result<()> {
    if !root.is_system() {
        if !procs(root, group).is_empty() {
            return Err(std::io::Error::from_raw_os_error(libc::EBUSY));
        }
        for (f, _) in CONTROL_FILES {
            std::fs::remove_file(root.join(&format!("{group}/{f}")))?;
        }
    }
    std::fs::remove_dir(root.join(group))
}
