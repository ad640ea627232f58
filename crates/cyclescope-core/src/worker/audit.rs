//! Which forbidden system call the seccomp filter stopped a worker on, from the kernel's own
//! record of the kill: an audit line (`type=1326 … pid=<pid> … syscall=<nr>`) that the kernel
//! writes to its log for every `SECCOMP_RET_KILL_PROCESS`, read from `/dev/kmsg`. The signal
//! alone (`SIGSYS`) does not say which call it was. Best effort: where the log is not readable
//! (no privilege, `dmesg_restrict`, no audit line yet) the call stays unnamed. Reads only.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::time::{Duration, Instant};

/// How long to wait for the audit line: the kernel may log it a moment after the process died.
const WAIT: Duration = Duration::from_millis(300);

/// The forbidden call process `pid` was killed on, when the kernel log names it. `since` is
/// when the worker was started (older lines of a reused pid are not its).
pub(crate) fn forbidden_call(pid: u32, since: Instant) -> Option<&'static str> {
    // The kernel log's stamps count microseconds since boot, unslewed, as the raw monotonic
    // clock does; a second of slack covers their drift apart.
    let age = since.elapsed() + Duration::from_secs(1);
    let now_us = crate::counter::monotonic_raw_ns() / 1000;
    let not_before = now_us.saturating_sub(age.as_micros() as u64);
    let started = Instant::now();
    loop {
        if let Some(nr) = read_log().and_then(|log| find(&log, pid, not_before)) {
            return crate::jail::syscalls::name_of(nr);
        }
        if started.elapsed() >= WAIT {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every record the kernel log holds now (one per `read`), without waiting for more.
fn read_log() -> Option<Vec<String>> {
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open("/dev/kmsg")
        .ok()?;
    let mut records = Vec::new();
    let mut buf = vec![0u8; 8192];
    // The ring buffer is bounded; this bounds the loop too should the log keep growing.
    for _ in 0..100_000 {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => records.push(String::from_utf8_lossy(&buf[..n]).into_owned()),
            // EPIPE: a record was overwritten while reading; the next read goes on.
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
            Err(_) => break, // EAGAIN: the end
        }
    }
    Some(records)
}

/// The system call number of the last seccomp kill of `pid` logged at or after `not_before`
/// (µs). A record reads `<prio>,<seq>,<µs>,<flags>;<text>`.
fn find(records: &[String], pid: u32, not_before: u64) -> Option<i64> {
    let pid_field = format!(" pid={pid} ");
    records.iter().rev().find_map(|r| {
        let (head, text) = r.split_once(';')?;
        let stamp: u64 = head.split(',').nth(2)?.parse().ok()?;
        if stamp < not_before || !text.contains("type=1326") || !text.contains(&pid_field) {
            return None;
        }
        let nr = text.split(" syscall=").nth(1)?.split_whitespace().next()?;
        nr.parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kill_record_of_the_pid_names_the_call() {
        let line = |seq: u32, us: u64, pid: u32, nr: i64| {
            format!(
                "5,{seq},{us},-;audit: type=1326 audit(1.2:3): auid=4294967295 uid=0 gid=0 \
                 ses=4294967295 pid={pid} comm=\"cyclescope-work\" exe=\"/x\" sig=31 \
                 arch=c000003e syscall={nr} compat=0 ip=0x7f code=0x80000000\n"
            )
        };
        let log = vec![
            line(1, 100, 42, 41),
            "6,2,150,-;something else pid=42 syscall=7\n".to_string(),
            line(3, 200, 4242, 59),
            line(4, 300, 42, 203),
        ];
        assert_eq!(find(&log, 42, 0), Some(203));
        assert_eq!(find(&log, 4242, 0), Some(59));
        assert_eq!(find(&log, 42, 350), None, "older than the worker");
        assert_eq!(find(&log, 7, 0), None);
    }
}
