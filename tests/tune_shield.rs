//! The CPU shield of `cyclescope tune` on a writable fixture tree with a cgroup v1 cpuset
//! hierarchy, through the real binary: the plan names it, `check` suggests it, `--apply` moves
//! every task of the root cpuset into the shield's cpuset and the IRQs off the CPU, `check`
//! then passes the isolation row, and `--restore` leaves every file of the tree as it was.
//! (Applying needs root, as on a real host; the tree stands in for `/`.)

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;

use common::host_tree::{fixture_copy, snapshot};
use common::output_text;

const CPUSET: &str = "sys/fs/cgroup/cpuset";

/// `cyclescope ARGS --root TREE`: its exit code and output.
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

/// The isolation row of `check --cpu 3`.
fn isolation_row(tree: &Path) -> String {
    let (_, text) = cyclescope(tree, &["check", "--cpu", "3"]);
    let at = text.find("isolation").unwrap_or_else(|| panic!("{text}"));
    text[at..].lines().take(2).collect::<Vec<_>>().join("\n")
}

/// A copy of `untuned-laptop` with a cpuset hierarchy whose root holds four tasks.
fn shieldable_tree(into: &Path) -> std::path::PathBuf {
    let tree = fixture_copy("untuned-laptop", into);
    std::fs::create_dir_all(tree.join(CPUSET)).unwrap();
    for (file, text) in [
        ("cpuset.cpus", "0-3\n"),
        ("cpuset.mems", "0\n"),
        ("tasks", "1\n2\n57\n300\n"),
    ] {
        std::fs::write(tree.join(CPUSET).join(file), text).unwrap();
    }
    tree
}

#[test]
fn a_shield_moves_tasks_and_irqs_off_and_restore_leaves_the_tree_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = shieldable_tree(tmp.path());
    let original = snapshot(&tree);

    let before = isolation_row(&tree);
    assert!(
        before.contains("WARN") && before.contains("sudo cyclescope tune --cpu 3 --apply"),
        "{before}"
    );
    let (code, plan) = cyclescope(&tree, &["tune", "--cpu", "3"]);
    assert_eq!(code, Some(0), "{plan}");
    assert!(
        plan.contains(
            "shield: 4 task(s) of the root cpuset /sys/fs/cgroup/cpuset moved into its child \
             cpuset cyclescope-system (CPUs 0-1, memory nodes 0)"
        ),
        "{plan}"
    );
    assert_eq!(
        snapshot(&tree),
        original,
        "showing the plan changed the tree"
    );

    let (code, applied) = cyclescope(&tree, &["tune", "--cpu", "3", "--apply"]);
    assert_eq!(code, Some(0), "{applied}");
    let shield = format!("{CPUSET}/cyclescope-system");
    assert_eq!(read(&tree, &format!("{CPUSET}/tasks")), "");
    assert_eq!(read(&tree, &format!("{shield}/tasks")), "1\n2\n57\n300\n");
    assert_eq!(read(&tree, &format!("{shield}/cpuset.cpus")), "0-1");
    assert_eq!(read(&tree, &format!("{shield}/cpuset.mems")), "0");
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
                "shielded by `cyclescope tune`: other tasks in cpuset \
                               cyclescope-system (CPUs 0-1)"
            ),
        "{after}"
    );

    let (code, restored) = cyclescope(&tree, &["tune", "--restore"]);
    assert_eq!(code, Some(0), "{restored}");
    assert!(
        restored.contains("4 task(s) back from the shield's cpuset"),
        "{restored}"
    );
    assert_eq!(snapshot(&tree), original, "the tree is not what it was");
}

#[test]
fn a_shield_whose_holder_is_killed_is_undone_by_the_next_start() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = shieldable_tree(tmp.path());
    let original = snapshot(&tree);
    let mut child = common::cyclescope()
        .args(["tune", "--cpu", "3", "--apply", "--hold", "--root"])
        .arg(&tree)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(
        lines.any(|l| l.unwrap().starts_with("holding")),
        "never held"
    );
    assert!(tree.join(CPUSET).join("cyclescope-system").is_dir());
    child.kill().unwrap();
    child.wait().unwrap();
    let (_, text) = cyclescope(&tree, &["check", "--cpu", "3"]);
    assert!(
        text.contains("restored the host tuning left by pid")
            && text.contains("4 task(s) back from the shield"),
        "{text}"
    );
    assert_eq!(snapshot(&tree), original, "the tree is not what it was");
}
