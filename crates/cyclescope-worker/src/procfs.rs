//! What the trial worker reads of itself in `/proc`, at the points the harness's driver reads
//! it: resident memory now (`statm`, the baseline RSS), its high-water mark (`VmHWM`, the peak
//! RSS) and the run-queue wait of its thread (`schedstat`). A small stack buffer each: these
//! readings must not add to the memory they report.

use core::ffi::CStr;

use super::args::number;
use super::sys;

/// The `n`-th whitespace-separated field of a small `/proc` file.
fn field(path: &CStr, n: usize) -> Option<u64> {
    let mut buf = [0u8; 256];
    let len = sys::read_file(path, &mut buf)?;
    buf[..len]
        .split(|b| b.is_ascii_whitespace())
        .filter(|f| !f.is_empty())
        .nth(n)
        .and_then(number)
}

/// Resident pages × page size (`/proc/self/statm`, second field), 0 when unreadable.
pub fn resident_bytes() -> u64 {
    field(c"/proc/self/statm", 1).map_or(0, |pages| pages * sys::page_size())
}

/// `VmHWM` of `/proc/self/status`, in bytes (0 when unreadable).
pub fn peak_resident_bytes() -> u64 {
    let mut buf = [0u8; 4096];
    let Some(len) = sys::read_file(c"/proc/self/status", &mut buf) else {
        return 0;
    };
    status_kib(&buf[..len], b"VmHWM:").map_or(0, |kib| kib * 1024)
}

/// The number after `key` in `/proc/…/status` text (a `kB` figure).
pub fn status_kib(status: &[u8], key: &[u8]) -> Option<u64> {
    status
        .split(|&b| b == b'\n')
        .find_map(|line| line.strip_prefix(key))?
        .split(|b| b.is_ascii_whitespace())
        .find(|f| !f.is_empty())
        .and_then(number)
}

/// Nanoseconds this thread has waited runnable so far (`/proc/thread-self/schedstat`).
pub fn runqueue_wait_ns() -> Option<u64> {
    field(c"/proc/thread-self/schedstat", 1)
}
