//! The CPU shield of `cyclescope tune` on a cgroup v2 hierarchy that enables the cpuset
//! controller, on a writable fixture tree through the real binary: `--apply` makes the
//! measurement CPU and its sibling a cpuset partition of their own (the kernel then keeps every
//! other group's tasks on the other CPUs), `check` passes the isolation row, `--restore` leaves
//! every file as it was; a v2 hierarchy without the cpuset controller leaves the shield to the
//! v1 cpuset hierarchy, as before. (Applying needs root, as on a real host.)

mod common;

use std::path::Path;

use common::host_tree::{fixture_copy, snapshot};
use common::output_text;

const V2: &str = "sys/fs/cgroup";

fn cyclescope(tree: &Path, args: &[&str]) -> (Option<i32>, String) {
    let o = common::cyclescope()
        .args(args)
        .arg("--root")
        .arg(tree)
        .output()
        .unwrap();
    (o.status.code(), output_text(&o))
}

fn read(tree: &Path, rel: &str) -> String {
    std::fs::read_to_string(tree.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn write_all(dir: &Path, files: &[(&str, &str)]) {
    std::fs::create_dir_all(dir).unwrap();
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
    }
}

/// A copy of `untuned-laptop` with a cgroup v2 hierarchy whose root enables `subtree` for its
/// groups, and one group (a login session) holding a process.
fn v2_tree(into: &Path, subtree: &str) -> std::path::PathBuf {
    let tree = fixture_copy("untuned-laptop", into);
    write_all(
        &tree.join(V2),
        &[
            ("cgroup.controllers", "cpuset cpu io memory pids\n"),
            ("cgroup.subtree_control", subtree),
            ("cgroup.procs", "1\n57\n"),
            ("cpuset.cpus.effective", "0-3\n"),
            ("cpuset.mems.effective", "0\n"),
        ],
    );
    write_all(
        &tree.join(V2).join("user.slice"),
        &[("cgroup.procs", "300\n"), ("cpuset.cpus", "")],
    );
    tree
}

fn isolation_row(tree: &Path) -> String {
    let (_, text) = cyclescope(tree, &["check", "--cpu", "3"]);
    let at = text.find("isolation").unwrap_or_else(|| panic!("{text}"));
    text[at..].lines().take(2).collect::<Vec<_>>().join("\n")
}

#[test]
fn a_v2_partition_takes_the_cpu_from_every_other_group_and_restore_leaves_the_tree_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = v2_tree(tmp.path(), "cpuset cpu\n");
    let original = snapshot(&tree);
    assert!(isolation_row(&tree).contains("WARN"));

    let (code, plan) = cyclescope(&tree, &["tune", "--cpu", "3"]);
    assert_eq!(code, Some(0), "{plan}");
    assert!(
        plan.contains(
            "shield: CPUs 2-3 made the cgroup v2 cpuset partition /sys/fs/cgroup/cyclescope-measure"
        ),
        "{plan}"
    );
    assert!(!plan.contains("cyclescope-system"), "{plan}");
    assert_eq!(
        snapshot(&tree),
        original,
        "showing the plan changed the tree"
    );

    let (code, applied) = cyclescope(&tree, &["tune", "--cpu", "3", "--apply"]);
    assert_eq!(code, Some(0), "{applied}");
    let group = format!("{V2}/cyclescope-measure");
    assert_eq!(read(&tree, &format!("{group}/cpuset.cpus")), "2-3");
    assert_eq!(read(&tree, &format!("{group}/cpuset.mems")), "0");
    assert_eq!(
        read(&tree, &format!("{group}/cpuset.cpus.partition")),
        "isolated"
    );
    assert_eq!(read(&tree, &format!("{group}/cgroup.procs")), "");
    // The other groups are the kernel's to narrow: their files are not touched.
    assert_eq!(read(&tree, &format!("{V2}/cgroup.procs")), "1\n57\n");
    assert_eq!(
        read(&tree, &format!("{V2}/user.slice/cgroup.procs")),
        "300\n"
    );
    for irq in ["0", "16", "120"] {
        let list = read(&tree, &format!("proc/irq/{irq}/smp_affinity_list"));
        assert!(
            !list.contains('3'),
            "IRQ {irq} still allowed on CPU 3: {list}"
        );
    }
    let after = isolation_row(&tree);
    assert!(
        after.contains("pass")
            && after.contains(
                "shielded by `cyclescope tune`: CPUs 2-3 are the cgroup v2 cpuset partition \
                 cyclescope-measure"
            ),
        "{after}"
    );

    let (code, restored) = cyclescope(&tree, &["tune", "--restore"]);
    assert_eq!(code, Some(0), "{restored}");
    assert_eq!(snapshot(&tree), original, "the tree is not what it was");
}

#[test]
fn a_v2_hierarchy_without_the_cpuset_controller_leaves_the_shield_to_v1() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = v2_tree(tmp.path(), "");
    std::fs::write(tree.join(V2).join("cgroup.controllers"), "").unwrap();
    write_all(
        &tree.join("sys/fs/cgroup/cpuset"),
        &[
            ("cpuset.cpus", "0-3\n"),
            ("cpuset.mems", "0\n"),
            ("tasks", "1\n57\n"),
        ],
    );
    let original = snapshot(&tree);
    let (code, plan) = cyclescope(&tree, &["tune", "--cpu", "3"]);
    assert_eq!(code, Some(0), "{plan}");
    assert!(
        plan.contains("moved into its child cpuset cyclescope-system (CPUs 0-1"),
        "{plan}"
    );
    assert!(!plan.contains("cyclescope-measure"), "{plan}");
    let (code, applied) = cyclescope(&tree, &["tune", "--cpu", "3", "--apply"]);
    assert_eq!(code, Some(0), "{applied}");
    assert!(tree.join("sys/fs/cgroup/cpuset/cyclescope-system").is_dir());
    assert!(!tree.join(V2).join("cyclescope-measure").exists());
    let (code, restored) = cyclescope(&tree, &["tune", "--restore"]);
    assert_eq!(code, Some(0), "{restored}");
    assert_eq!(snapshot(&tree), original, "the tree is not what it was");
}
