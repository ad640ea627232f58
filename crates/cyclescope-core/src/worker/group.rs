//! One worker's process group: the worker is spawned as the leader of a group of its own, so
//! whatever the candidate forks stays in it and goes with it. The group notices the leader's
//! end without reaping it (the zombie pins the group id against reuse and keeps its CPU times
//! readable), reads those times from outside, then kills the whole group and reaps the leader
//! — also when dropped early. It never reads the worker's pipes.

use std::io;
use std::process::{Child, Command, ExitStatus};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use nix::unistd::Pid;

/// A spawned worker and its process group (same id: the worker leads it).
pub(crate) struct Group {
    child: Child,
    pgid: Pid,
    reaped: bool,
}

impl Group {
    /// Spawns `cmd` as the leader of a new process group.
    pub(crate) fn spawn(cmd: &mut Command) -> io::Result<Self> {
        use std::os::unix::process::CommandExt;
        let child = cmd.process_group(0).spawn()?;
        let pgid = Pid::from_raw(child.id() as i32);
        Ok(Self {
            child,
            pgid,
            reaped: false,
        })
    }

    pub(super) fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Whether the leader has ended (it stays a zombie until `finish`).
    pub(crate) fn leader_ended(&self) -> bool {
        let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
        // An error here (ECHILD) means there is nothing left to wait for: ended.
        !matches!(
            waitid(Id::Pid(self.pgid), flags),
            Ok(WaitStatus::StillAlive)
        )
    }

    /// The leader's user + system CPU time, read from `/proc` while it is a zombie (its own
    /// threads included; the candidate's forked children are not).
    pub(super) fn leader_cpu_time(&self) -> Option<Duration> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pgid)).ok()?;
        cpu_time_from_stat(&stat, clock_ticks_per_second()?)
    }

    /// Kills every process of the group and reaps the leader.
    pub(crate) fn finish(mut self) -> Option<ExitStatus> {
        self.kill_and_reap()
    }

    fn kill_and_reap(&mut self) -> Option<ExitStatus> {
        if self.reaped {
            return None;
        }
        // ESRCH only means the group is already empty.
        let _ = killpg(self.pgid, Signal::SIGKILL);
        self.reaped = true;
        self.child.wait().ok()
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill_and_reap();
    }
}

fn clock_ticks_per_second() -> Option<u64> {
    nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .and_then(|t| u64::try_from(t).ok())
        .filter(|&t| t > 0)
}

/// `utime + stime` (fields 14 and 15) of a `/proc/<pid>/stat` line. The command name may
/// hold spaces and parentheses, so fields are counted after its last `)`.
fn cpu_time_from_stat(stat: &str, ticks_per_second: u64) -> Option<Duration> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    let ticks = utime.checked_add(stime)?;
    Some(Duration::from_secs_f64(
        ticks as f64 / ticks_per_second as f64,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_is_utime_plus_stime_after_the_command_name() {
        let stat = "4242 (a (b) c) Z 1 4242 4242 0 -1 4227148 230 0 0 0 49 3 0 0 20 0 1 0";
        assert_eq!(
            cpu_time_from_stat(stat, 100),
            Some(Duration::from_millis(520))
        );
        assert_eq!(cpu_time_from_stat("4242 (x) Z 1", 100), None);
    }

    #[test]
    fn a_group_is_killed_whole_and_its_leader_reaped() {
        // A shell that leaves a sleeping child behind in its group, then exits.
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 300 >/dev/null 2>&1 & echo $!"])
            .stdout(std::process::Stdio::piped());
        let mut g = Group::spawn(&mut cmd).unwrap();
        let mut out = String::new();
        std::io::Read::read_to_string(g.child_mut().stdout.as_mut().unwrap(), &mut out).ok();
        let sleeper: i32 = out.trim().parse().unwrap();
        while !g.leader_ended() {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(g.leader_cpu_time().is_some());
        let status = g.finish().unwrap();
        assert!(status.success());
        // The sleeper is gone (a zombie at most, until its new parent reaps it).
        let mut state = None;
        for _ in 0..200 {
            state = std::fs::read_to_string(format!("/proc/{sleeper}/stat"))
                .ok()
                .and_then(|s| s[s.rfind(')')? + 2..].chars().next());
            if state.is_none_or(|c| c == 'Z' || c == 'X') {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("the group's sleeper {sleeper} survived (state {state:?})");
    }
}
