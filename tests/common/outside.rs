//! What a test reads of a running process from outside, in `/proc`: where its descriptors
//! lead, its controlling terminal, who owns its entry; and a reader of another user's
//! (`nobody`) for what that user may open there. Nothing here changes the process looked at.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::process::{Child, Command, Output};
use std::time::Duration;

/// Every open descriptor of `pid` with what it links to (`/proc/<pid>/fd/<n>`), in order.
pub fn descriptors(pid: i32) -> Vec<(i32, PathBuf)> {
    let dir = format!("/proc/{pid}/fd");
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{dir}: {e}"));
    let mut out: Vec<(i32, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let fd = e.file_name().to_str()?.parse().ok()?;
            Some((fd, std::fs::read_link(e.path()).ok()?))
        })
        .collect();
    out.sort();
    out
}

/// The device number of `pid`'s controlling terminal (`tty_nr`, the seventh field of
/// `/proc/<pid>/stat`): 0 when it has none.
pub fn controlling_terminal(pid: i32) -> i64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // After the command name, which may hold spaces and parentheses: state, ppid, pgrp,
    // session, tty_nr.
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    after.split(' ').nth(4).unwrap().parse().unwrap()
}

/// Whether `pid`'s descriptor `fd` is the null device: the file it opens (followed from
/// outside, whatever mount namespace the process sees it through) has `/dev/null`'s device
/// number.
pub fn is_dev_null(pid: i32, fd: i32) -> bool {
    use std::os::unix::fs::FileTypeExt;
    let null = std::fs::metadata("/dev/null").unwrap();
    std::fs::metadata(format!("/proc/{pid}/fd/{fd}"))
        .is_ok_and(|m| m.file_type().is_char_device() && m.rdev() == null.rdev())
}

/// The owner of `pid`'s `/proc/<pid>/mem`: the process's own user while it is dumpable,
/// root's once it made itself not dumpable. (The folder `/proc/<pid>` itself keeps the
/// process's user either way; the files in it change hands.)
pub fn memory_owner(pid: i32) -> u32 {
    std::fs::metadata(format!("/proc/{pid}/mem")).unwrap().uid()
}

/// The real user of `pid` (the first number of `Uid:` in `/proc/<pid>/status`).
pub fn real_uid(pid: i32) -> u32 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("{status}"))
}

/// `sh -c script` run as `nobody` (uid and gid 65534, no groups, no capabilities), to its end.
pub fn as_nobody(script: &str) -> Output {
    Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .args(["sh", "-c", script])
        .output()
        .expect("setpriv (util-linux) runs a shell as nobody")
}

/// Waits for `child` to end, up to `limit`, and collects what it wrote; kills it and fails
/// the test when it does not end.
pub fn output_within(child: Child, limit: Duration) -> Output {
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.expect("waiting for the process"),
        Err(_) => {
            kill(pid);
            panic!("the process did not end within {limit:?}");
        }
    }
}

/// Sends SIGKILL to `pid` (gone already is fine).
pub fn kill(pid: i32) {
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    );
}

/// The descriptors of `pid` that lead to a terminal: a path under `/dev/pts/`, `/dev/tty*`
/// or `/dev/console`, or the very device `terminal` (a device number) whatever its path.
pub fn terminal_descriptors(pid: i32, terminal: u64) -> Vec<(i32, PathBuf)> {
    use std::os::unix::fs::FileTypeExt;
    descriptors(pid)
        .into_iter()
        .filter(|(fd, path)| {
            let named = path.starts_with("/dev/pts")
                || path.to_string_lossy().starts_with("/dev/tty")
                || path == std::path::Path::new("/dev/console");
            let same = std::fs::metadata(format!("/proc/{pid}/fd/{fd}"))
                .is_ok_and(|m| m.file_type().is_char_device() && m.rdev() == terminal);
            named || same
        })
        .collect()
}

/// The device number of the terminal `pid`'s descriptor `fd` leads to; None when it is no
/// character device.
pub fn device_of(pid: i32, fd: i32) -> Option<u64> {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(format!("/proc/{pid}/fd/{fd}"))
        .ok()
        .filter(|m| m.file_type().is_char_device())
        .map(|m| m.rdev())
}
