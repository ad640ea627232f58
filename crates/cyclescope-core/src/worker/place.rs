//! Where a worker runs, as the kernel shows it from outside: per task (thread) of the worker,
//! the CPU it last ran on, the CPUs it may run on (`Cpus_allowed_list`), its scheduling policy,
//! real-time priority and nice value (`/proc/<pid>/task/<tid>/stat` and `status`), and the
//! process's address-space peak (`VmPeak`). The parent compares these with what it gave the
//! worker — the measurement CPU, and its own policy and nice, which a child inherits — so a
//! candidate that moved is caught even where no seccomp filter stops the calls (qemu-user).
//! Read-only; it never changes a task, and it decides nothing beyond naming what moved.

use std::collections::BTreeSet;
use std::path::Path;

/// Where one task is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TaskPlace {
    pub(crate) last_cpu: usize,
    pub(crate) policy: u32,
    pub(crate) rt_priority: u32,
    pub(crate) nice: i64,
    /// The CPUs it may run on (None when `status` was unreadable).
    pub(crate) allowed: Option<BTreeSet<usize>>,
}

/// What the worker was given: the CPU it pins itself to (if it does) and the parent's own
/// scheduling, which the worker inherited when it was spawned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Expected {
    pub(crate) cpu: Option<usize>,
    pub(crate) policy: u32,
    pub(crate) rt_priority: u32,
    pub(crate) nice: i64,
}

impl Expected {
    /// The calling thread's own scheduling (a child spawned from it starts with the same),
    /// with `cpu` the CPU the worker is told to pin itself to. None when `/proc` is unreadable.
    pub(crate) fn of_this_thread(cpu: Option<usize>) -> Option<Self> {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
        let (nice, _, rt_priority, policy) = sched_fields(&stat)?;
        Some(Self {
            cpu,
            policy,
            rt_priority,
            nice,
        })
    }

    /// Why `task` is not where it was put, if it is not.
    pub(crate) fn breach(&self, tid: &str, task: &TaskPlace) -> Option<String> {
        if let Some(cpu) = self.cpu {
            let pinned = BTreeSet::from([cpu]);
            if let Some(allowed) = task.allowed.as_ref().filter(|a| **a != pinned) {
                return Some(format!(
                    "task {tid} of the worker may run on CPUs {}, but it was pinned to CPU {cpu}",
                    crate::host::format_cpu_list(allowed)
                ));
            }
            if task.last_cpu != cpu {
                return Some(format!(
                    "task {tid} of the worker last ran on CPU {}, but it was pinned to CPU {cpu}",
                    task.last_cpu
                ));
            }
        }
        if (task.policy, task.rt_priority) != (self.policy, self.rt_priority) {
            return Some(format!(
                "task {tid} of the worker runs under scheduling policy {} priority {}, but it \
                 was started under {} priority {}",
                policy_name(task.policy),
                task.rt_priority,
                policy_name(self.policy),
                self.rt_priority
            ));
        }
        if task.nice != self.nice {
            return Some(format!(
                "task {tid} of the worker runs at nice {}, but it was started at nice {}",
                task.nice, self.nice
            ));
        }
        None
    }
}

/// `SCHED_OTHER`, `SCHED_FIFO`, … for a policy number of `/proc/…/stat`.
fn policy_name(policy: u32) -> String {
    match policy {
        0 => "SCHED_OTHER".into(),
        1 => "SCHED_FIFO".into(),
        2 => "SCHED_RR".into(),
        3 => "SCHED_BATCH".into(),
        5 => "SCHED_IDLE".into(),
        6 => "SCHED_DEADLINE".into(),
        7 => "SCHED_EXT".into(),
        n => format!("{n}"),
    }
}

/// Nice (field 19), processor (39), rt_priority (40) and policy (41) of a `stat` line; fields
/// are counted after the command name's last `)`, which may hold spaces.
fn sched_fields(stat: &str) -> Option<(i64, usize, u32, u32)> {
    let fields: Vec<&str> = stat
        .get(stat.rfind(')')? + 1..)?
        .split_whitespace()
        .collect();
    let field = |n: usize| fields.get(n - 3).copied();
    Some((
        field(19)?.parse().ok()?,
        field(39)?.parse().ok()?,
        field(40)?.parse().ok()?,
        field(41)?.parse().ok()?,
    ))
}

/// The value after `key` in `status` text.
fn status_value<'a>(status: &'a str, key: &str) -> Option<&'a str> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .map(str::trim)
}

/// One task's place, from its `/proc` folder.
fn read_task(dir: &Path) -> Option<TaskPlace> {
    let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
    let (nice, last_cpu, rt_priority, policy) = sched_fields(&stat)?;
    let allowed = std::fs::read_to_string(dir.join("status"))
        .ok()
        .and_then(|s| crate::host::parse_cpu_list(status_value(&s, "Cpus_allowed_list:")?));
    Some(TaskPlace {
        last_cpu,
        policy,
        rt_priority,
        nice,
        allowed,
    })
}

/// What one look at a worker found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Look {
    /// The first task found out of place, and how.
    pub(crate) breach: Option<String>,
    /// The process's `VmPeak` in bytes (None for a zombie, which has no memory left).
    pub(crate) vm_peak_bytes: Option<u64>,
}

/// Looks at every task of process `pid` (a zombie's remaining one included).
pub(crate) fn look(pid: u32, expected: &Expected) -> Look {
    let proc_dir = Path::new("/proc").join(pid.to_string());
    let vm_peak_bytes = std::fs::read_to_string(proc_dir.join("status"))
        .ok()
        .and_then(|s| {
            let kib = status_value(&s, "VmPeak:")?.strip_suffix("kB")?.trim();
            kib.parse::<u64>().ok()?.checked_mul(1024)
        });
    let mut tids: Vec<String> = std::fs::read_dir(proc_dir.join("task"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    tids.sort();
    let breach = tids.iter().find_map(|tid| {
        let task = read_task(&proc_dir.join("task").join(tid))?;
        expected.breach(tid, &task)
    });
    Look {
        breach,
        vm_peak_bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `stat` line with the given nice, processor, rt_priority and policy (a command name
    /// with spaces and parentheses, as a candidate may give its threads).
    fn stat(nice: i64, cpu: usize, rt: u32, policy: u32) -> String {
        let mut f: Vec<String> = (3..=52).map(|_| "0".to_string()).collect();
        f[0] = "S".into();
        f[19 - 3] = nice.to_string();
        f[39 - 3] = cpu.to_string();
        f[40 - 3] = rt.to_string();
        f[41 - 3] = policy.to_string();
        format!("4242 (a (b) c) {}", f.join(" "))
    }

    fn task(nice: i64, cpu: usize, rt: u32, policy: u32, allowed: &[usize]) -> TaskPlace {
        let (nice, last_cpu, rt_priority, policy) =
            sched_fields(&stat(nice, cpu, rt, policy)).expect("the test's stat line parses");
        TaskPlace {
            last_cpu,
            policy,
            rt_priority,
            nice,
            allowed: Some(allowed.iter().copied().collect()),
        }
    }

    #[test]
    fn a_task_where_it_was_put_passes_and_each_move_is_named() {
        let want = Expected {
            cpu: Some(1),
            policy: 0,
            rt_priority: 0,
            nice: 10,
        };
        assert_eq!(want.breach("7", &task(10, 1, 0, 0, &[1])), None);
        let cases = [
            (
                task(10, 1, 0, 0, &[0]),
                "may run on CPUs 0, but it was pinned to CPU 1",
            ),
            (task(10, 1, 0, 0, &[0, 1]), "may run on CPUs 0-1"),
            (
                task(10, 0, 0, 0, &[1]),
                "last ran on CPU 0, but it was pinned to CPU 1",
            ),
            (
                task(10, 1, 99, 1, &[1]),
                "scheduling policy SCHED_FIFO priority 99, but it was started under SCHED_OTHER priority 0",
            ),
            (
                task(-20, 1, 0, 0, &[1]),
                "runs at nice -20, but it was started at nice 10",
            ),
        ];
        for (t, words) in cases {
            let why = want.breach("7", &t).unwrap_or_default();
            assert!(
                why.contains(words) && why.contains("task 7"),
                "{t:?}: {why}"
            );
        }
        // Not pinned: any CPU will do, the scheduling still must not change.
        let unpinned = Expected { cpu: None, ..want };
        assert_eq!(unpinned.breach("7", &task(10, 0, 0, 0, &[0, 1])), None);
        assert!(unpinned.breach("7", &task(0, 0, 0, 0, &[0])).is_some());
    }

    /// A real process moved from outside, as a candidate without a seccomp filter could move
    /// itself: each move shows in the parent's look.
    #[test]
    fn a_process_moved_from_outside_is_seen_moved() {
        use nix::sched::{CpuSet, sched_setaffinity};
        use nix::unistd::Pid;
        let cpu = crate::cpu::last_allowed();
        // Pinned before `sleep` starts (taskset pins itself, then runs it): a child pinned only
        // after it has fallen asleep elsewhere keeps that CPU as its last until it wakes, which
        // a loaded CI run saw (it had gone to sleep on CPU 0 before the pin to CPU 1).
        let mut child = std::process::Command::new("taskset")
            .args(["-c", &cpu.to_string(), "sleep", "30"])
            .spawn()
            .expect("taskset (util-linux) is installed");
        let pid = Pid::from_raw(child.id() as i32);
        let mut only = CpuSet::new();
        only.set(cpu).unwrap();
        sched_setaffinity(pid, &only).unwrap();
        let me = Expected::of_this_thread(Some(cpu)).unwrap();
        // Until it has run on its CPU once, its last CPU may still be another.
        let mut seen = look(child.id(), &me);
        for _ in 0..100 {
            if seen.breach.is_none() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
            seen = look(child.id(), &me);
        }
        assert_eq!(seen.breach, None);
        // One step nicer, or one less nice where the test already runs at the nicest (CI runs
        // the AArch64 unit tests at nice 19 beside the native ones; lowering takes root).
        let other = if me.nice < 19 {
            me.nice + 1
        } else {
            me.nice - 1
        };
        let renice = std::process::Command::new("renice")
            .args(["-n", &other.to_string(), "-p", &child.id().to_string()])
            .output()
            .expect("this test moves a process with renice(1)");
        assert!(renice.status.success(), "{renice:?}");
        let why = look(child.id(), &me).breach.unwrap_or_default();
        assert!(why.contains(&format!("runs at nice {other}")), "{why}");
        let mut any = CpuSet::new();
        for c in 0..CpuSet::count() {
            let _ = any.set(c);
        }
        if crate::cpu::last_allowed() > 0 && sched_setaffinity(pid, &any).is_ok() {
            let why = look(child.id(), &me).breach.unwrap_or_default();
            assert!(why.contains("may run on CPUs"), "{why}");
        }
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn this_process_is_where_it_is() {
        let me = Expected::of_this_thread(None).expect("/proc/thread-self/stat is readable");
        let seen = look(std::process::id(), &me);
        assert!(seen.vm_peak_bytes.is_some_and(|b| b > 0));
        // Test threads run beside this one with the same scheduling.
        assert_eq!(seen.breach, None);
    }
}
