//! The allocation a measurement runs in: which CPUs this process was given (its affinity mask,
//! which is what `taskset`, a container's cpuset or a Slurm job's binding sets) and where the
//! measurement CPU's SMT siblings stand against it. A sibling outside the allocation belongs to
//! someone else — another job may run on the other half of the core; a sibling inside it is
//! one cyclescope's own threads may step onto. It warns, never fails (the harness's `smt`
//! condition already fails a shared core); it reads through the root and never changes a mask.

use std::collections::BTreeSet;

use super::check::{CheckResult, HostCheck};
use super::root::{HostRoot, format_cpu_list};

/// The allocation advisory for measurement CPU `cpu`, given the CPUs this process may use
/// (`None`: unreadable).
pub(crate) fn allocation(
    root: &HostRoot,
    cpu: usize,
    allowed: Option<&BTreeSet<usize>>,
) -> CheckResult {
    let c = HostCheck::Allocation;
    let Some(allowed) = allowed.filter(|a| !a.is_empty()) else {
        return CheckResult::unknown(
            c,
            "the CPUs this process may use are unreadable (sched_getaffinity)",
            "check that the kernel allows sched_getaffinity",
        );
    };
    let mut value = format!(
        "allowed CPUs {} (sched_getaffinity)",
        format_cpu_list(allowed)
    );
    let Some(siblings) = root.thread_siblings(cpu) else {
        value += &format!("; no topology for CPU {cpu}");
        return CheckResult::unknown(
            c,
            value,
            format!("check that CPU {cpu} exists and is online"),
        );
    };
    let others: BTreeSet<usize> = siblings.into_iter().filter(|&s| s != cpu).collect();
    let (inside, outside): (BTreeSet<usize>, BTreeSet<usize>) =
        others.iter().partition(|s| allowed.contains(s));
    if others.is_empty() {
        value += &format!("; CPU {cpu} has no SMT sibling");
        return CheckResult::pass(c, value);
    }
    let list = |s: &BTreeSet<usize>| {
        if s.is_empty() {
            "none".to_string()
        } else {
            format_cpu_list(s)
        }
    };
    value += &format!(
        "; CPU {cpu}'s SMT siblings inside the allocation: {}, outside it: {}",
        list(&inside),
        list(&outside)
    );
    let fix = if outside.is_empty() {
        format!(
            "leave CPU {} idle (it shares CPU {cpu}'s core) or measure on a core without SMT \
             siblings",
            list(&inside)
        )
    } else {
        format!(
            "ask for whole cores (sbatch --exclusive --hint=nomultithread, or a taskset that \
             holds CPU {}): another job may run on the rest of CPU {cpu}'s core",
            list(&outside)
        )
    };
    CheckResult::warn(c, value, fix)
}

/// The measurement CPUs `--cpus allowed` takes from an allocation: one CPU per core (its
/// highest-numbered allowed thread), every core but the one holding the lowest allowed CPU,
/// which is left to cyclescope itself; with a single core, that core's CPU (shared then).
/// A CPU without topology counts as a core of its own.
pub fn allocation_lanes(root: &HostRoot, allowed: &BTreeSet<usize>) -> Vec<usize> {
    let mut cores: Vec<BTreeSet<usize>> = Vec::new();
    for &cpu in allowed {
        let core: BTreeSet<usize> = root
            .thread_siblings(cpu)
            .unwrap_or_else(|| [cpu].into())
            .into_iter()
            .filter(|c| allowed.contains(c))
            .chain([cpu])
            .collect();
        if !cores.contains(&core) {
            cores.push(core);
        }
    }
    // Ordered by their lowest CPU; the first is the engine's when another is left.
    cores.sort_by_key(|c| c.first().copied());
    let skip = usize::from(cores.len() > 1);
    cores
        .iter()
        .skip(skip)
        .filter_map(|c| c.last().copied())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Status;

    /// A sysfs tree where CPUs 0 and 2 share a core, as do 1 and 3.
    fn smt_tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (cpu, list) in [(0, "0,2"), (1, "1,3"), (2, "0,2"), (3, "1,3")] {
            let topo = dir
                .path()
                .join(format!("sys/devices/system/cpu/cpu{cpu}/topology"));
            std::fs::create_dir_all(&topo).unwrap();
            std::fs::write(topo.join("thread_siblings_list"), format!("{list}\n")).unwrap();
        }
        dir
    }

    fn set(cpus: &[usize]) -> BTreeSet<usize> {
        cpus.iter().copied().collect()
    }

    #[test]
    fn siblings_are_placed_inside_or_outside_the_allocation() {
        let tree = smt_tree();
        let root = HostRoot::new(tree.path());
        let out = allocation(&root, 1, Some(&set(&[0, 1])));
        assert_eq!(out.status, Status::Warn);
        assert_eq!(
            out.value,
            "allowed CPUs 0-1 (sched_getaffinity); CPU 1's SMT siblings inside the \
             allocation: none, outside it: 3"
        );
        assert!(
            out.hint
                .as_deref()
                .unwrap_or("")
                .contains("--hint=nomultithread")
        );
        let inside = allocation(&root, 1, Some(&set(&[1, 3])));
        assert_eq!(inside.status, Status::Warn);
        assert!(
            inside
                .value
                .ends_with("inside the allocation: 3, outside it: none")
        );
        let alone = allocation(&root, 1, Some(&set(&[1])));
        assert!(alone.value.contains("allowed CPUs 1 "), "{}", alone.value);
    }

    #[test]
    fn lanes_take_one_cpu_per_core_and_leave_the_first_core_to_the_engine() {
        let tree = smt_tree();
        let root = HostRoot::new(tree.path());
        assert_eq!(allocation_lanes(&root, &set(&[0, 1, 2, 3])), [3]);
        assert_eq!(allocation_lanes(&root, &set(&[1, 3])), [3]);
        assert_eq!(allocation_lanes(&root, &set(&[0, 1])), [1]);
        assert_eq!(allocation_lanes(&root, &set(&[2])), [2]);
        let flat = tempfile::tempdir().unwrap();
        let flat = HostRoot::new(flat.path());
        assert_eq!(allocation_lanes(&flat, &set(&[4, 5, 6, 7])), [5, 6, 7]);
    }

    #[test]
    fn a_core_without_siblings_passes_and_an_unknown_mask_is_said() {
        let dir = tempfile::tempdir().unwrap();
        let topo = dir.path().join("sys/devices/system/cpu/cpu0/topology");
        std::fs::create_dir_all(&topo).unwrap();
        std::fs::write(topo.join("thread_siblings_list"), "0\n").unwrap();
        let root = HostRoot::new(dir.path());
        let out = allocation(&root, 0, Some(&set(&[0, 1])));
        assert_eq!(out.status, Status::Pass);
        assert_eq!(
            out.value,
            "allowed CPUs 0-1 (sched_getaffinity); CPU 0 has no SMT sibling"
        );
        assert_eq!(allocation(&root, 0, None).status, Status::Unknown);
    }
}
