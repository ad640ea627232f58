use super::*;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// This VM's own view: v1 memory and pids hierarchies (the memory one nested), an empty v2.
const MOUNTINFO: &str = "\
30 24 0:26 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 30 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
42 30 0:38 /inner /mnt/with\\040space rw,relatime - cgroup cgroup rw,cpuset
";
const MEMBERSHIP: &str = "\
8:pids:/
4:memory:/process_api/04cc
3:cpuset:/inner/deeper
0::/
";

#[test]
fn own_groups_are_found_below_their_mounts() {
    let find = |h| own_group(MOUNTINFO, MEMBERSHIP, h);
    assert_eq!(
        find(Hierarchy::V1("memory")),
        Some(PathBuf::from("/sys/fs/cgroup/memory/process_api/04cc"))
    );
    assert_eq!(
        find(Hierarchy::V1("pids")),
        Some(PathBuf::from("/sys/fs/cgroup/pids/"))
    );
    assert_eq!(
        find(Hierarchy::V1("cpuset")),
        Some(PathBuf::from("/mnt/with space/deeper"))
    );
    assert_eq!(
        find(Hierarchy::V2),
        Some(PathBuf::from("/sys/fs/cgroup/unified/"))
    );
    assert_eq!(find(Hierarchy::V1("blkio")), None);
}

/// `script` run by `sh` inside `group`, joined before exec as the jail joins it.
fn run_in(group: &Cgroup, script: &str) -> std::process::Output {
    let fds = group.join_fds();
    let mut cmd = Command::new("sh");
    cmd.args(["-c", script]);
    // SAFETY: `join` only writes to descriptors opened before the fork.
    unsafe {
        cmd.pre_exec(move || join(&fds));
    }
    cmd.output().unwrap()
}

/// Root on a machine with cgroups (CI, this VM) must get a group; others say why not.
fn group_or_why(limits: CgroupLimits) -> Option<Cgroup> {
    match Cgroup::create("test", limits) {
        Ok(g) => Some(g),
        Err(e) => {
            assert!(
                !nix::unistd::geteuid().is_root() || !Path::new("/sys/fs/cgroup").exists(),
                "root could not make a cgroup: {e}"
            );
            None
        }
    }
}

#[test]
fn a_process_in_the_group_is_held_to_its_memory_and_counted() {
    let limits = CgroupLimits {
        memory_bytes: Some(64 << 20),
        pids: 16,
    };
    let Some(group) = group_or_why(limits) else {
        return;
    };
    assert_eq!(group.memory_limit(), Some(64 << 20));
    let paths: Vec<PathBuf> = group.paths().iter().map(|p| p.to_path_buf()).collect();
    // It is in the group: its own /proc/self/cgroup names the group's folder.
    let name = paths[0].file_name().unwrap().to_str().unwrap().to_string();
    let o = run_in(&group, "cat /proc/self/cgroup");
    assert!(String::from_utf8_lossy(&o.stdout).contains(&name));
    // A 128 MiB string does not fit in 64 MiB: the kernel kills it, whatever its rlimits.
    let hog = "awk 'BEGIN { s = \"x\"; for (i = 0; i < 27; i++) s = s s; print length(s) }'";
    let o = run_in(&group, hog);
    assert!(!o.status.success(), "{o:?}");
    assert!(group.out_of_memory());
    let peak = group.peak_memory().unwrap();
    assert!(peak > 32 << 20 && peak <= 64 << 20, "peak {peak}");
    // The same program within its limit runs.
    let small = hog.replace("27", "20");
    let o = run_in(&group, &small);
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "1048576");
    drop(group);
    assert!(paths.iter().all(|p| !p.exists()), "{paths:?}");
}

#[test]
fn the_group_bounds_how_many_processes_run_and_kills_those_left() {
    let limits = CgroupLimits {
        memory_bytes: Some(256 << 20),
        pids: 4,
    };
    let Some(group) = group_or_why(limits) else {
        return;
    };
    // Eight background sleeps in a group of four: some forks fail.
    let o = run_in(
        &group,
        "n=0; for i in 1 2 3 4 5 6 7 8; do sleep 30 >/dev/null 2>&1 & n=$((n+1)); done 2>&1; echo started",
    );
    let said =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert!(said.contains("fork") || said.contains("Resource"), "{said}");
    // The sleeps outlived their shell, and left its process group behind: the group finds them.
    let left = group.members();
    assert!(!left.is_empty() && left.len() <= 4, "{left:?}");
    group.kill_all();
    std::thread::sleep(std::time::Duration::from_millis(50));
    for pid in left {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // Gone, or a zombie waiting for init to reap it.
        assert!(stat.is_empty() || stat.contains(") Z "), "{stat}");
    }
}

#[test]
fn a_v1_group_is_joined_through_tasks_so_no_grace_period_is_waited_for() {
    let limits = CgroupLimits {
        memory_bytes: Some(64 << 20),
        pids: 16,
    };
    let Some(group) = group_or_why(limits) else {
        return;
    };
    let files: Vec<String> = group
        .join_fds()
        .iter()
        .map(|fd| {
            let link = std::fs::read_link(format!("/proc/self/fd/{fd}")).unwrap();
            link.file_name().unwrap().to_string_lossy().into_owned()
        })
        .collect();
    assert!(
        match group.version() {
            Version::V1 => files.len() >= 2 && files.iter().all(|f| f == "tasks"),
            Version::V2 => files == ["cgroup.procs"],
        },
        "{files:?}"
    );
    // Joined by its one thread, the process is in every hierarchy's group, and so is what it
    // starts after the join.
    let o = run_in(&group, "cat /proc/self/cgroup; sh -c 'cat /proc/$$/cgroup'");
    let seen = String::from_utf8_lossy(&o.stdout);
    // The hierarchies' groups share one name: one line each, for each of the two processes.
    let name = group.name().unwrap();
    assert_eq!(
        seen.matches(&name).count(),
        2 * group.paths().len(),
        "{seen}"
    );
}

/// The group counts the CPU time of every process that ran in it, a child that ended before
/// its parent included, at least what the processes' own clocks say they used.
#[test]
fn a_group_counts_the_cpu_time_of_every_process_it_held() {
    let limits = CgroupLimits {
        memory_bytes: Some(64 << 20),
        pids: 16,
    };
    let Some(group) = group_or_why(limits) else {
        return;
    };
    let hierarchies = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    // Root writes every hierarchy this machine mounts (this VM mounts v1's cpuacct).
    let counted = group.version() == Version::V2
        || (hierarchies.contains("cpuacct") && nix::unistd::geteuid().is_root());
    let before = group.cpu_time();
    assert_eq!(before.is_some(), counted, "{:?}", group.paths());
    let Some(before) = before else {
        return;
    };
    // A child burns CPU and ends; its parent, the group's first process, then reports the
    // CPU time of itself and its reaped child (the `times` builtin's second line).
    let burn = "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done";
    let o = run_in(&group, &format!("sh -c '{burn}'; times"));
    let said = String::from_utf8_lossy(&o.stdout);
    // `times`: "0m0.01s 0m0.00s" for the shell, then its children's user and system time.
    let seconds = |field: &str| -> f64 {
        let (m, s) = field.trim_end_matches('s').split_once('m').unwrap();
        m.parse::<f64>().unwrap() * 60.0 + s.parse::<f64>().unwrap()
    };
    let own: f64 = said.split_whitespace().map(seconds).sum();
    let used = (group.cpu_time().unwrap() - before).as_secs_f64();
    assert!(own > 0.05, "{said}");
    // The shell's clock ticks (10 ms) round down by at most a tick a field.
    assert!(
        used + 0.04 >= own,
        "group {used} s, processes {own} s: {said}"
    );
}
