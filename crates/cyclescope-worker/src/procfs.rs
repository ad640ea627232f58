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

/// The nanoseconds a thread waited runnable inside a timed span, from two readings of its
/// run-queue wait taken just outside the span. A wait counts once it has ended, and the
/// thread can be preempted between reading its wait and reading the clock: under a busy loop
/// on the same CPU a whole time slice (4 to 8 ms) was seen to fall there, and counted against
/// a 10 ms trial it made the trial's own running time a sixth of the truth. So each wait
/// reading sits between two clock readings, and whatever time passed outside the span, in the
/// bracket around it, is taken off: what is left is no more than the wait inside the span
/// (short by the cost of the readings, a few microseconds).
pub struct WaitWindow {
    start: u64,
    wait: Option<u64>,
}

impl WaitWindow {
    /// Reads the clock and the wait, just before the span begins.
    pub fn open() -> Self {
        let start = sys::clock_ns(sys::CLOCK_MONOTONIC_RAW);
        let wait = runqueue_wait_ns();
        Self { start, wait }
    }

    /// Reads the wait and the clock just after a span of `span_ns` that began after `open`.
    pub fn close(self, span_ns: u64) -> Option<u64> {
        let wait = runqueue_wait_ns();
        let end = sys::clock_ns(sys::CLOCK_MONOTONIC_RAW);
        let waited = wait?.checked_sub(self.wait?)?;
        Some(inside(waited, end.saturating_sub(self.start), span_ns))
    }
}

/// Of `waited` ns that ended within `bracket_ns`, what lies inside a span of `span_ns` in it.
fn inside(waited: u64, bracket_ns: u64, span_ns: u64) -> u64 {
    waited.saturating_sub(bracket_ns.saturating_sub(span_ns))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_outside_the_span_is_not_counted_in_it() {
        // 10 ms trial, 4 ms waited inside it, a 5.5 ms slice lost while reading the wait.
        let span = 10_000_000;
        assert_eq!(inside(9_500_000, span + 5_500_000 + 4_000, span), 3_996_000);
        // Nothing lost outside: the whole wait is the span's.
        assert_eq!(inside(4_000_000, span + 3_000, span), 3_997_000);
        // More time outside than waited: none of it was inside.
        assert_eq!(inside(2_000_000, span + 6_000_000, span), 0);
    }

    /// A wait forced between opening the window and the span (threads that spin on every
    /// CPU preempt this one) is not the span's: counted, it exceeded the span a thousandfold.
    #[test]
    fn a_wait_between_the_readings_and_the_span_is_not_the_spans() {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        let spinners: Vec<_> = (0..2 * cpus + 1)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let w = WaitWindow::open();
        let before = w.wait.expect("schedstat is readable");
        // Spin until this thread has waited for its CPU at least once since the reading.
        while runqueue_wait_ns().unwrap() == before {
            assert!(std::time::Instant::now() < deadline, "never preempted");
        }
        let t0 = sys::clock_ns(sys::CLOCK_MONOTONIC_RAW);
        let t1 = sys::clock_ns(sys::CLOCK_MONOTONIC_RAW);
        let waited = w.close(t1 - t0).unwrap();
        let all = runqueue_wait_ns().unwrap() - before;
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        spinners.into_iter().for_each(|t| t.join().unwrap());
        assert!(all > 0);
        assert!(
            waited <= t1 - t0,
            "{waited} ns counted in a span of {} ns ({all} ns waited in all)",
            t1 - t0
        );
    }
}
