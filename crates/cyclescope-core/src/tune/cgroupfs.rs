//! The few cgroup v1 cpuset operations the shield needs — make a cpuset, move one thread into
//! a cpuset, list a cpuset's threads, remove an empty cpuset — written once for the kernel's
//! cgroupfs and once for a fixture tree, which has no kernel behind it: there this module does
//! what the kernel would (control files in a new cpuset, a moved thread leaving the `tasks`
//! file it was in, sorted `tasks` lists), so a fixture shows the same files as a real host.

use std::collections::BTreeSet;
use std::io::Write;

use crate::host::HostRoot;

/// The control files the kernel puts in a new cpuset (the ones the shield reads or writes).
const CONTROL_FILES: [&str; 3] = ["cpuset.cpus", "cpuset.mems", "tasks"];

/// The thread ids in `<set>/tasks` (sorted, as the kernel lists them).
pub(crate) fn tasks(root: &HostRoot, set: &str) -> Vec<i32> {
    ids(root, &format!("{set}/tasks"))
}

/// The ids a control-group file lists one a line (`tasks`, `cgroup.procs`), sorted, once each.
pub(crate) fn ids(root: &HostRoot, file: &str) -> Vec<i32> {
    let mut out: Vec<i32> = root
        .read(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Makes the cpuset `set` (its parent must be a cpuset).
pub(crate) fn make(root: &HostRoot, set: &str) -> std::io::Result<()> {
    std::fs::create_dir(root.join(set))?;
    if !root.is_system() {
        for f in CONTROL_FILES {
            std::fs::write(root.join(&format!("{set}/{f}")), "")?;
        }
    }
    Ok(())
}

/// Writes `text` to an existing control file of a cpuset.
pub(crate) fn write(root: &HostRoot, rel: &str, text: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(!root.is_system())
        .open(root.join(rel))?;
    f.write_all(text.as_bytes())
}

/// Moves thread `tid` from cpuset `from` into cpuset `to` (the kernel takes one id per write).
pub(crate) fn attach(root: &HostRoot, from: &str, to: &str, tid: i32) -> std::io::Result<()> {
    if root.is_system() {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(root.join(&format!("{to}/tasks")))?;
        return f.write_all(format!("{tid}\n").as_bytes());
    }
    let mut left: BTreeSet<i32> = tasks(root, from).into_iter().collect();
    if !left.remove(&tid) {
        return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
    }
    let mut joined: BTreeSet<i32> = tasks(root, to).into_iter().collect();
    joined.insert(tid);
    write(root, &format!("{from}/tasks"), &listing(&left))?;
    write(root, &format!("{to}/tasks"), &listing(&joined))
}

fn listing(ids: &BTreeSet<i32>) -> String {
    ids.iter().map(|t| format!("{t}\n")).collect()
}

/// Removes the cpuset `set`; the kernel refuses (EBUSY) while it holds a thread.
pub(crate) fn remove(root: &HostRoot, set: &str) -> std::io::Result<()> {
    if !root.is_system() {
        if !tasks(root, set).is_empty() {
            return Err(std::io::Error::from_raw_os_error(libc::EBUSY));
        }
        for f in CONTROL_FILES {
            std::fs::remove_file(root.join(&format!("{set}/{f}")))?;
        }
    }
    std::fs::remove_dir(root.join(set))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a fixture the kernel's rules hold: a moved thread leaves its old list, lists stay
    /// sorted, a thread that is not there cannot move, a cpuset holding one cannot go.
    #[test]
    fn a_fixture_cpuset_behaves_as_the_kernel_would() {
        let dir = tempfile::tempdir().unwrap();
        let root = HostRoot::new(dir.path());
        std::fs::create_dir(dir.path().join("cs")).unwrap();
        std::fs::write(dir.path().join("cs/tasks"), "3\n10\n200\n").unwrap();
        make(&root, "cs/child").unwrap();
        assert_eq!(tasks(&root, "cs/child"), Vec::<i32>::new());
        attach(&root, "cs", "cs/child", 200).unwrap();
        attach(&root, "cs", "cs/child", 3).unwrap();
        let ids = |rel: &str| std::fs::read_to_string(dir.path().join(rel)).unwrap();
        assert_eq!(ids("cs/tasks"), "10\n");
        assert_eq!(ids("cs/child/tasks"), "3\n200\n");
        let gone = attach(&root, "cs", "cs/child", 3).unwrap_err();
        assert_eq!(gone.raw_os_error(), Some(libc::ESRCH));
        let busy = remove(&root, "cs/child").unwrap_err();
        assert_eq!(busy.raw_os_error(), Some(libc::EBUSY));
        for tid in tasks(&root, "cs/child") {
            attach(&root, "cs/child", "cs", tid).unwrap();
        }
        remove(&root, "cs/child").unwrap();
        assert_eq!(ids("cs/tasks"), "3\n10\n200\n");
        assert!(!dir.path().join("cs/child").exists());
    }
}
