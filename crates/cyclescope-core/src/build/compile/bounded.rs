//! A command run to its end or to a time limit, as the leader of its own process group, its
//! output appended to a log file (no pipe to fill); the whole group is killed after it.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::jail::namespaces::ChildMade;
use crate::worker::group::Group;

/// How a bounded run ended.
pub(crate) enum Finished {
    Exited { success: bool, code: String },
    TimedOut,
}

/// Runs `cmd` as a process-group leader with stdout and stderr appended to `log`; after it
/// ends, or at `limit`, the whole group is killed. `made`: the PID namespace its jail has its
/// forked child make (`build::jail::Confined`).
pub(crate) fn run_bounded(
    cmd: &mut Command,
    log: &Path,
    limit: Duration,
    made: Option<ChildMade>,
) -> std::io::Result<Finished> {
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)?;
    let err = out.try_clone()?;
    cmd.stdin(Stdio::null()).stdout(out).stderr(err);
    let group = Group::spawn(cmd, None, made)?;
    let start = Instant::now();
    let mut pause = Duration::from_millis(2);
    while !group.leader_ended() {
        if start.elapsed() >= limit {
            group.finish();
            return Ok(Finished::TimedOut);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
    let status = group.finish();
    Ok(match status {
        Some(s) => Finished::Exited {
            success: s.success(),
            code: s.code().map_or_else(|| format!("{s}"), |c| c.to_string()),
        },
        None => Finished::Exited {
            success: false,
            code: "unknown".into(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_that_outlives_its_limit_is_killed_with_its_group() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 300 & echo started; wait"]);
        let start = Instant::now();
        let end = run_bounded(&mut cmd, &log, Duration::from_millis(300), None).unwrap();
        assert!(matches!(end, Finished::TimedOut));
        assert!(start.elapsed() < Duration::from_secs(10));
        assert!(std::fs::read_to_string(&log).unwrap().contains("started"));
    }
}
