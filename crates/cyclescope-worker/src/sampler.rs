//! The sampled profile's instruction pointers (`--sample-period NS`): a perf_event sampling
//! event of this thread — hardware cycles on the measurement CPU's core PMU where the PMU
//! allows, else the `cpu-clock` software event — each sample the user-mode instruction pointer
//! alone, read from the event's ring buffer after each trial and sent to the engine with the
//! library's load address, which symbolises them (`profile::sampled`). Only ever in a profile
//! trial of its own, never in the guide's trials. Reads only; judging is the engine's.

use core::ffi::{c_int, c_ulong, c_void};
use core::sync::atomic::{Ordering, fence};

use super::json::Channel;
use super::perf_attr::{
    PERF_EVENT_IOC_DISABLE, PERF_EVENT_IOC_ENABLE, PERF_RECORD_LOST, PERF_RECORD_SAMPLE,
    PerfEventAttr,
};
use super::sys;

/// Data pages of the ring buffer (a power of two): 512 KiB, 32 768 samples of 16 bytes.
const DATA_PAGES: usize = 128;
/// Cycles between two samples where hardware cycles are sampled.
const CYCLES_PERIOD: u64 = 100_000;
/// Where `struct perf_event_mmap_page` keeps `data_head`, `data_tail`, `data_offset` and
/// `data_size`.
const DATA_HEAD: usize = 1024;
const DATA_TAIL: usize = 1032;
const DATA_OFFSET: usize = 1040;
const DATA_SIZE: usize = 1048;
/// Instruction pointers per message.
const BATCH: usize = 4096;
const PROT_READ_WRITE: c_int = 1 | 2;
const MAP_SHARED: c_int = 1;

pub(crate) struct Sampler {
    fd: c_int,
    map: *mut u8,
    len: usize,
    /// `cycles` or `cpu-clock`, as the engine names the event.
    pub(crate) event: &'static str,
    base: u64,
    batch: &'static mut [u64],
}

impl Sampler {
    /// Opens the sampling event (cycles, else cpu-clock every `period_ns`), maps its ring
    /// buffer, and finds where `entry` was loaded. None when no event opens or maps.
    pub(crate) fn open(pmu: Option<u32>, period_ns: u64, entry: *const c_void) -> Option<Self> {
        let (fd, event) = match open_event(PerfEventAttr::sampling_cycles(pmu, CYCLES_PERIOD)) {
            Some(fd) => (fd, "cycles"),
            None => (
                open_event(PerfEventAttr::sampling_cpu_clock(period_ns.max(1)))?,
                "cpu-clock",
            ),
        };
        let page = sys::page_size() as usize;
        let len = page * (1 + DATA_PAGES);
        // SAFETY: maps the perf descriptor's ring buffer (a fresh mapping the kernel chooses);
        // nothing else refers to it, and it is unmapped in `drop`.
        let map = unsafe {
            sys::mmap(
                core::ptr::null_mut(),
                len,
                PROT_READ_WRITE,
                MAP_SHARED,
                fd,
                0,
            )
        };
        if map as isize == -1 || map.is_null() {
            sys::close_fd(fd);
            return None;
        }
        let mut info = sys::DlInfo {
            fname: core::ptr::null(),
            fbase: core::ptr::null_mut(),
            sname: core::ptr::null(),
            saddr: core::ptr::null_mut(),
        };
        // SAFETY: `entry` is a function of a loaded library; dladdr only fills `info`.
        let found = unsafe { sys::dladdr(entry, &mut info) };
        let batch = sys::alloc_filled(BATCH * 8, 0)?;
        // SAFETY: a u8 buffer viewed as u64 where aligned (malloc's memory is).
        let (_, batch, _) = unsafe { batch.align_to_mut::<u64>() };
        Some(Sampler {
            fd,
            map: map.cast(),
            len,
            event,
            base: if found != 0 { info.fbase as u64 } else { 0 },
            batch,
        })
    }

    #[inline(always)]
    pub(crate) fn enable(&self) {
        // SAFETY: `fd` is a perf event this process opened; the request takes no argument.
        unsafe { sys::ioctl(self.fd, c_ulong::from(PERF_EVENT_IOC_ENABLE), 0 as c_ulong) };
    }

    #[inline(always)]
    pub(crate) fn disable(&self) {
        // SAFETY: as in `enable`.
        unsafe { sys::ioctl(self.fd, c_ulong::from(PERF_EVENT_IOC_DISABLE), 0 as c_ulong) };
    }

    fn header_u64(&self, at: usize) -> u64 {
        // SAFETY: `at` is one of the header's 8-byte fields, inside the first (header) page of
        // the live mapping; the kernel updates them concurrently, hence volatile.
        unsafe { core::ptr::read_volatile(self.map.add(at).cast::<u64>()) }
    }

    /// Sends what the ring buffer holds as `ip_samples` messages and frees it.
    pub(crate) fn drain(&mut self, ch: &Channel) {
        let head = self.header_u64(DATA_HEAD);
        fence(Ordering::Acquire);
        let page = sys::page_size() as usize;
        let (offset, size) = match (self.header_u64(DATA_OFFSET), self.header_u64(DATA_SIZE)) {
            (o, s) if s > 0 => (o as usize, s as usize),
            _ => (page, self.len - page),
        };
        let mut tail = self.header_u64(DATA_TAIL);
        let mut filled = 0;
        let mut lost = 0u64;
        let byte = |i: u64| {
            let at = offset + (i as usize % size);
            // SAFETY: `at` lies inside the data area of the live mapping.
            unsafe { core::ptr::read_volatile(self.map.add(at)) }
        };
        let word = |i: u64| (0..8).fold(0u64, |w, k| w | (u64::from(byte(i + k)) << (8 * k)));
        while tail < head {
            let header = word(tail);
            let (kind, size_bytes) = (header as u32, (header >> 48) as u16);
            if size_bytes < 8 {
                break;
            }
            match kind {
                PERF_RECORD_SAMPLE => {
                    self.batch[filled] = word(tail + 8);
                    filled += 1;
                }
                PERF_RECORD_LOST => lost += word(tail + 16),
                _ => {}
            }
            if filled == self.batch.len() {
                self.send(ch, filled, 0);
                filled = 0;
            }
            tail += u64::from(size_bytes);
        }
        self.send(ch, filled, lost);
        fence(Ordering::SeqCst);
        // SAFETY: `data_tail` is the header field user space writes to free the buffer.
        unsafe { core::ptr::write_volatile(self.map.add(DATA_TAIL).cast::<u64>(), tail) };
    }

    fn send(&self, ch: &Channel, n: usize, lost: u64) {
        ch.message("ip_samples")
            .name("event", self.event)
            .number("base", self.base)
            .numbers("ips", &self.batch[..n])
            .number("lost", lost)
            .send();
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `open`, of `len` bytes, unmapped once.
        unsafe { sys::munmap(self.map.cast(), self.len) };
        sys::close_fd(self.fd);
    }
}

fn open_event(attr: PerfEventAttr) -> Option<c_int> {
    sys::perf_event_open(&attr).ok()
}
