//! Other tasks off the measurement CPU: every thread of the live system (`/proc/*/task/*`)
//! whose allowed CPUs include it is given the same set without it (`sched_setaffinity`), and
//! put back afterwards if it is still the same thread (same start time). Kernel threads bound
//! to one CPU refuse and are left alone. Only for the real root: a fixture tree has no tasks.

use std::collections::BTreeSet;

use nix::sched::{CpuSet, sched_setaffinity};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};

use crate::host::{format_cpu_list, parse_cpu_list};

/// `PF_NO_SETAFFINITY` in `/proc/<pid>/stat` flags: per-CPU kernel threads.
pub(crate) const PF_NO_SETAFFINITY: u64 = 0x0400_0000;

/// One thread to move, with its allowed CPUs before and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskMove {
    pub tid: i32,
    pub comm: String,
    /// Field 22 of `/proc/<tid>/stat`: tells a thread from a later one with the same id.
    pub start_time: u64,
    pub before: String,
    pub after: String,
}

/// (comm, flags, start time) from a stat line; fields are counted after the last `)`.
pub(crate) fn stat_fields(stat: &str) -> Option<(String, u64, u64)> {
    let comm = stat.get(stat.find('(')? + 1..stat.rfind(')')?)?.to_string();
    let rest: Vec<&str> = stat
        .get(stat.rfind(')')? + 1..)?
        .split_whitespace()
        .collect();
    let flags = rest.get(9 - 3)?.parse().ok()?;
    let start = rest.get(22 - 3)?.parse().ok()?;
    Some((comm, flags, start))
}

/// The start time of a live thread or process (None when it is gone — a zombie, killed but
/// not yet reaped by its parent, is gone too: it will never restore anything).
pub(crate) fn start_time(tid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{tid}/stat")).ok()?;
    let state = stat
        .get(stat.rfind(')')? + 1..)?
        .split_whitespace()
        .next()?;
    if matches!(state, "Z" | "X") {
        return None;
    }
    stat_fields(&stat).map(|(_, _, s)| s)
}

fn allowed_list(tid: i32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{tid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map(|v| v.trim().to_string())
}

/// Threads of the live system (except `self_pid`'s) allowed on a CPU of `away`.
pub(crate) fn plan_moves(away: &BTreeSet<usize>, self_pid: u32) -> Vec<TaskMove> {
    let mut moves = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return moves;
    };
    let mut pids: Vec<u32> = procs
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter(|&p| p != self_pid)
        .collect();
    pids.sort_unstable();
    for pid in pids {
        let Ok(threads) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for tid in threads.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok()) {
            let Some(stat) = std::fs::read_to_string(format!("/proc/{tid}/stat")).ok() else {
                continue;
            };
            let Some((comm, flags, start_time)) = stat_fields(&stat) else {
                continue;
            };
            let Some(before) = allowed_list(tid) else {
                continue;
            };
            let Some(now) = parse_cpu_list(&before) else {
                continue;
            };
            let kept: BTreeSet<usize> = now.difference(away).copied().collect();
            if flags & PF_NO_SETAFFINITY != 0 || now.is_disjoint(away) || kept.is_empty() {
                continue;
            }
            moves.push(TaskMove {
                tid,
                comm,
                start_time,
                before,
                after: format_cpu_list(&kept),
            });
        }
    }
    moves
}

/// Sets `tid`'s allowed CPUs to `list` if it is still the thread that started at `start`.
pub(crate) fn set_allowed(tid: i32, start: u64, list: &str) -> Result<(), String> {
    if start_time(tid) != Some(start) {
        return Err("exited".into());
    }
    let cpus = parse_cpu_list(list).ok_or_else(|| format!("bad CPU list {list:?}"))?;
    let mut set = CpuSet::new();
    for c in cpus {
        set.set(c).map_err(|e| e.to_string())?;
    }
    sched_setaffinity(Pid::from_raw(tid), &set).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_moved_off_and_back() {
        let online = parse_cpu_list(
            &std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default(),
        )
        .unwrap_or_default();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep runs");
        let tid = child.id() as i32;
        let start = start_time(tid).expect("the child is alive");
        let before = allowed_list(tid).expect("status is readable");
        let cpu = *online.last().expect("a CPU is online");
        let away = BTreeSet::from([cpu]);
        let kept: BTreeSet<usize> = online.difference(&away).copied().collect();
        assert!(!kept.is_empty(), "this test needs two online CPUs");
        set_allowed(tid, start, &format_cpu_list(&kept)).expect("moved");
        assert_eq!(allowed_list(tid), Some(format_cpu_list(&kept)));
        set_allowed(tid, start, &before).expect("moved back");
        assert_eq!(allowed_list(tid).as_deref(), Some(before.as_str()));
        assert_eq!(
            set_allowed(tid, start + 1, &before),
            Err("exited".to_string()),
            "a different start time is another thread"
        );
        child.kill().ok();
        // Killed but not reaped: a zombie counts as gone.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while start_time(tid).is_some() {
            assert!(
                std::time::Instant::now() < deadline,
                "the zombie still counts as alive"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        child.wait().ok();
    }
}
