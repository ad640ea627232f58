//! Where the cgroup v1 cpuset hierarchy is under a root, and whether `cyclescope tune` has
//! shielded a CPU with it: the cpuset [`SHIELD_SET`] holding every other movable task, on CPUs
//! that leave the measurement CPU out. Reading only: `tune` makes and removes the cpuset.

use std::collections::BTreeSet;

use super::root::{HostRoot, parse_cpu_list};

/// The cpuset (a child of the hierarchy's root) the other tasks move to while a CPU is shielded.
pub(crate) const SHIELD_SET: &str = "cyclescope-system";

/// The folder (relative to the root) where the v1 cpuset controller is mounted: the first
/// `cgroup` line of `proc/mounts` with the `cpuset` option, else `sys/fs/cgroup/cpuset` when
/// it holds a `cpuset.cpus` (a fixture tree may have no mount table).
pub(crate) fn cpuset_v1_dir(root: &HostRoot) -> Option<String> {
    let mounted = root.read("proc/mounts").and_then(|mounts| {
        mounts.lines().find_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let is_cpuset =
                f.len() > 3 && f[2] == "cgroup" && f[3].split(',').any(|o| o == "cpuset");
            is_cpuset.then(|| f[1].trim_start_matches('/').to_string())
        })
    });
    mounted
        .or_else(|| Some("sys/fs/cgroup/cpuset".to_string()))
        .filter(|dir| root.exists(&format!("{dir}/cpuset.cpus")))
}

/// The CPUs of the shield's cpuset, when `tune` has made one.
pub(crate) fn shield_cpus(root: &HostRoot) -> Option<BTreeSet<usize>> {
    let dir = cpuset_v1_dir(root)?;
    parse_cpu_list(&root.read(&format!("{dir}/{SHIELD_SET}/cpuset.cpus"))?)
}

/// The group (a child of the v2 hierarchy's root) holding the measurement CPU as a cpuset
/// partition while it is shielded there.
pub(crate) const PARTITION_GROUP: &str = "cyclescope-measure";

/// The cgroup v2 hierarchy (`sys/fs/cgroup` or `sys/fs/cgroup/unified`) whose root enables the
/// cpuset controller for its children (`cgroup.subtree_control`): where `tune` makes a
/// partition. A v2 mount without it (the controller bound to v1, or not enabled) is no use.
pub(crate) fn cpuset_v2_dir(root: &HostRoot) -> Option<String> {
    ["sys/fs/cgroup", "sys/fs/cgroup/unified"]
        .iter()
        .find(|d| {
            root.read(&format!("{d}/cgroup.subtree_control"))
                .is_some_and(|c| c.split_whitespace().any(|x| x == "cpuset"))
        })
        .map(|d| d.to_string())
}

/// The CPUs of `tune`'s v2 partition, while it is a valid partition (`root` or `isolated`;
/// the kernel reads `… invalid (why)` when it could not give the CPUs away).
pub(crate) fn partition_cpus(root: &HostRoot) -> Option<BTreeSet<usize>> {
    let group = format!("{}/{PARTITION_GROUP}", cpuset_v2_dir(root)?);
    let state = root.read(&format!("{group}/cpuset.cpus.partition"))?;
    if !matches!(state.trim(), "root" | "isolated") {
        return None;
    }
    parse_cpu_list(&root.read(&format!("{group}/cpuset.cpus"))?)
}

/// Whether a cgroup v2 hierarchy with the cpuset controller is mounted (`sys/fs/cgroup` or
/// `sys/fs/cgroup/unified`), enabled for its children or not.
pub(crate) fn cpuset_v2_available(root: &HostRoot) -> bool {
    ["sys/fs/cgroup", "sys/fs/cgroup/unified"].iter().any(|d| {
        root.read(&format!("{d}/cgroup.controllers"))
            .is_some_and(|c| c.split_whitespace().any(|x| x == "cpuset"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mount_table_names_the_hierarchy() {
        let dir = tempfile::tempdir().unwrap();
        let root = HostRoot::new(dir.path());
        assert_eq!(cpuset_v1_dir(&root), None);
        let cs = dir.path().join("cg/cs");
        std::fs::create_dir_all(dir.path().join("proc")).unwrap();
        std::fs::create_dir_all(cs.join(SHIELD_SET)).unwrap();
        std::fs::write(cs.join("cpuset.cpus"), "0-3\n").unwrap();
        std::fs::write(
            dir.path().join("proc/mounts"),
            "cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n\
             cgroup /cg/cs cgroup rw,relatime,cpuset 0 0\n",
        )
        .unwrap();
        assert_eq!(cpuset_v1_dir(&root).as_deref(), Some("cg/cs"));
        assert_eq!(shield_cpus(&root), None);
        std::fs::write(cs.join(SHIELD_SET).join("cpuset.cpus"), "0-2\n").unwrap();
        assert_eq!(shield_cpus(&root), Some(BTreeSet::from([0, 1, 2])));
        assert!(!cpuset_v2_available(&root));
    }

    #[test]
    fn a_v2_partition_counts_only_where_the_root_enables_cpuset_and_while_it_is_valid() {
        let dir = tempfile::tempdir().unwrap();
        let root = HostRoot::new(dir.path());
        let v2 = dir.path().join("sys/fs/cgroup");
        let group = v2.join(PARTITION_GROUP);
        std::fs::create_dir_all(&group).unwrap();
        std::fs::write(v2.join("cgroup.controllers"), "cpuset cpu\n").unwrap();
        std::fs::write(v2.join("cgroup.subtree_control"), "cpu\n").unwrap();
        std::fs::write(group.join("cpuset.cpus"), "2-3\n").unwrap();
        std::fs::write(group.join("cpuset.cpus.partition"), "isolated\n").unwrap();
        assert_eq!(
            cpuset_v2_dir(&root),
            None,
            "cpuset not enabled for the groups"
        );
        assert_eq!(partition_cpus(&root), None);
        std::fs::write(v2.join("cgroup.subtree_control"), "cpuset cpu\n").unwrap();
        assert_eq!(cpuset_v2_dir(&root).as_deref(), Some("sys/fs/cgroup"));
        assert_eq!(partition_cpus(&root), Some(BTreeSet::from([2, 3])));
        std::fs::write(
            group.join("cpuset.cpus.partition"),
            "root invalid (Cpu list in cpuset.cpus not exclusive)\n",
        )
        .unwrap();
        assert_eq!(partition_cpus(&root), None);
    }
}
