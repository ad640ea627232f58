//! The trial worker's counters, the same as the engine's (`counter`): perf_event user-mode core
//! cycles when the kernel gives them and they count, else the architecture's reference
//! counter (read as the engine reads it, `cyclescope-counter-raw`); hardware `instructions:u`
//! when asked for, with no stand-in when they do not open; serialised stamps and
//! their overhead for the per-call phase; the clock witness of a trial (perf cycles beside the
//! reference counter, or APERF/MPERF through the msr driver). Reads only; judging is the
//! engine's.

use core::ffi::{CStr, c_int, c_ulong};

use cyclescope_counter_raw::reference::ReferenceCounter;

use super::perf_attr::{
    CounterFault, PERF_EVENT_IOC_DISABLE, PERF_EVENT_IOC_ENABLE, PERF_EVENT_IOC_RESET,
    PerfEventAttr, PerfReading,
};
use super::sys;

pub(crate) use cyclescope_counter_raw::reference::{reference_now, stamp_end, stamp_start};

/// The architecture's reference counter, by the records' name (None: there is none).
pub const REFERENCE_SOURCE: Option<CycleSource> = match cyclescope_counter_raw::reference::REFERENCE
{
    Some(ReferenceCounter::Tsc) => Some(CycleSource::Tsc),
    Some(ReferenceCounter::Cntvct) => Some(CycleSource::Cntvct),
    None => None,
};

/// What a count counts, by the name records use (`counter::CycleSource`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CycleSource {
    PerfUserCycles,
    PerfUserInstructions,
    Tsc,
    Cntvct,
}

impl CycleSource {
    pub fn name(self) -> &'static str {
        match self {
            CycleSource::PerfUserCycles => "perf_event:cpu-cycles:u",
            CycleSource::PerfUserInstructions => "perf_event:instructions:u",
            CycleSource::Tsc => "tsc",
            CycleSource::Cntvct => "cntvct_el0",
        }
    }
}

/// Why perf_event is not the loop counter (or, asked for instructions, why there is none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerfRefusal {
    /// `perf_event_open` failed with this errno.
    Errno(c_int),
    /// It opened but did not count over a busy loop.
    NoCount,
}

/// The guide's loop counter.
pub enum LoopCounter {
    Perf(c_int),
    /// Hardware `instructions:u` (`--hw-instructions`), read and checked like the cycles.
    PerfInstructions(c_int),
    Reference(u64),
}

impl LoopCounter {
    /// perf_event user cycles (on the PMU of type `pmu`, a hybrid CPU's core type) if they
    /// open and count, else the reference counter (and why).
    pub fn open(pmu: Option<u32>) -> (Self, Option<PerfRefusal>) {
        Self::open_event(PerfEventAttr::user_cycles(pmu))
    }

    /// [`LoopCounter::open`] with any event read like the cycles (the tests' software clock).
    pub fn open_event(attr: PerfEventAttr) -> (Self, Option<PerfRefusal>) {
        match open_counting_perf(attr) {
            Ok(fd) => (LoopCounter::Perf(fd), None),
            Err(why) => (LoopCounter::Reference(0), Some(why)),
        }
    }

    /// Hardware `instructions:u` on the PMU of type `pmu`, or why they cannot be had: never
    /// the reference counter in their place, whose ticks are no instructions.
    pub fn open_instructions(pmu: Option<u32>) -> Result<Self, PerfRefusal> {
        Self::open_instructions_event(PerfEventAttr::user_instructions(pmu))
    }

    /// [`LoopCounter::open_instructions`] with the attribute given (the tests' own).
    pub fn open_instructions_event(attr: PerfEventAttr) -> Result<Self, PerfRefusal> {
        open_counting_perf(attr).map(LoopCounter::PerfInstructions)
    }

    pub fn source(&self) -> CycleSource {
        match self {
            LoopCounter::Perf(_) => CycleSource::PerfUserCycles,
            LoopCounter::PerfInstructions(_) => CycleSource::PerfUserInstructions,
            LoopCounter::Reference(_) => REFERENCE_SOURCE.unwrap_or(CycleSource::PerfUserCycles),
        }
    }

    #[inline(always)]
    pub fn start(&mut self) {
        match self {
            LoopCounter::Perf(fd) | LoopCounter::PerfInstructions(fd) => reset_enable(*fd),
            LoopCounter::Reference(start) => *start = reference_now(),
        }
    }

    #[inline(always)]
    pub fn stop(&mut self) -> u64 {
        self.stop_checked().unwrap_or(0)
    }

    /// The count since `start`, or the fault that makes perf's no figure: zero, or running
    /// for less time than enabled (multiplexed, or on another core type's CPU).
    #[inline(always)]
    pub fn stop_checked(&mut self) -> Result<u64, CounterFault> {
        match self {
            LoopCounter::Perf(fd) | LoopCounter::PerfInstructions(fd) => {
                PerfReading::checked(disable_read(*fd))
            }
            LoopCounter::Reference(start) => Ok(reference_now().wrapping_sub(*start)),
        }
    }
}

fn perf_ioctl(fd: c_int, request: u32) {
    // SAFETY: `fd` is a perf event this process opened; these requests take no argument.
    unsafe { sys::ioctl(fd, c_ulong::from(request), 0 as c_ulong) };
}

#[inline(always)]
fn reset_enable(fd: c_int) {
    perf_ioctl(fd, PERF_EVENT_IOC_RESET);
    perf_ioctl(fd, PERF_EVENT_IOC_ENABLE);
}

/// Stops the event and reads its count and times (None when the read comes up short).
#[inline(always)]
fn disable_read(fd: c_int) -> Option<PerfReading> {
    perf_ioctl(fd, PERF_EVENT_IOC_DISABLE);
    let mut bytes = [0u8; 24];
    let n = sys::read_fd(fd, &mut bytes).ok()?;
    PerfReading::from_bytes(&bytes, n as isize)
}

/// Opens the event and checks that it counts (some hypervisors accept it and never advance
/// it).
fn open_counting_perf(attr: PerfEventAttr) -> Result<c_int, PerfRefusal> {
    let fd = sys::perf_event_open(&attr).map_err(PerfRefusal::Errno)?;
    reset_enable(fd);
    let mut x = 0u64;
    for i in 0..100_000u64 {
        x = core::hint::black_box(x.wrapping_add(i));
    }
    if PerfReading::checked(disable_read(fd)).is_err() {
        sys::close_fd(fd);
        return Err(PerfRefusal::NoCount);
    }
    Ok(fd)
}

/// Repetitions of the stamp-pair overhead measurement (`counter::TIMER_OVERHEAD_REPETITIONS`).
pub(crate) const TIMER_OVERHEAD_REPETITIONS: usize = 10_000;

/// The median cost of a serialised stamp pair, in reference ticks (None when the buffer for
/// it cannot be had).
pub fn timer_overhead() -> Option<u64> {
    let bytes = sys::alloc_filled(TIMER_OVERHEAD_REPETITIONS * 4, 0)?;
    // u32, saturating, as the engine measures it: half the memory of u64 samples.
    let (_, ticks, _) = {
        // SAFETY: a u8 buffer reinterpreted as u32 where aligned; `align_to_mut` gives the
        // aligned middle, and every bit pattern is a valid u32.
        unsafe { bytes.align_to_mut::<u32>() }
    };
    for _ in 0..16 {
        core::hint::black_box(stamp_end().wrapping_sub(stamp_start()));
    }
    for t in ticks.iter_mut() {
        let t0 = stamp_start();
        let t1 = stamp_end();
        *t = u32::try_from(t1.wrapping_sub(t0)).unwrap_or(u32::MAX);
    }
    if ticks.is_empty() {
        return None;
    }
    ticks.sort_unstable();
    Some(u64::from(ticks[ticks.len() / 2]))
}

/// `IA32_MPERF` and `IA32_APERF`.
const MSR_MPERF: i64 = 0xE7;
const MSR_APERF: i64 = 0xE8;

/// How a trial's clock is witnessed.
pub(crate) enum Witness {
    PerfAndReference,
    /// The open msr device of the measurement CPU.
    AperfMperf(c_int),
    None,
}

impl Witness {
    pub(crate) fn open(loop_counter: &LoopCounter, cpu: Option<usize>) -> Self {
        if matches!(loop_counter, LoopCounter::Perf(_)) && REFERENCE_SOURCE.is_some() {
            return Witness::PerfAndReference;
        }
        let Some(cpu) = cpu else {
            return Witness::None;
        };
        let mut path = [0u8; 40];
        let mut w = super::text::ByteWriter::new(&mut path);
        let _ = core::fmt::Write::write_fmt(&mut w, format_args!("/dev/cpu/{cpu}/msr\0"));
        let Ok(path) = CStr::from_bytes_until_nul(&path) else {
            return Witness::None;
        };
        match sys::open_read(path) {
            Ok(fd) if read_aperf_mperf(fd).is_some() => Witness::AperfMperf(fd),
            Ok(fd) => {
                sys::close_fd(fd);
                Witness::None
            }
            Err(_) => Witness::None,
        }
    }

    /// APERF/MPERF before the loop counter starts (a system call: outside the timed loop).
    #[inline(always)]
    pub(crate) fn outer(&self) -> Option<(u64, u64)> {
        match self {
            Witness::AperfMperf(fd) => read_aperf_mperf(*fd),
            _ => None,
        }
    }

    /// The reference counter just inside perf's counting window.
    #[inline(always)]
    pub(crate) fn inner(&self) -> u64 {
        match self {
            Witness::PerfAndReference => reference_now(),
            _ => 0,
        }
    }

    /// The trial's pair: (kind, core count, reference count).
    pub(crate) fn pair(
        &self,
        outer: Option<(u64, u64)>,
        inner: (u64, u64),
        cycles: u64,
    ) -> Option<(&'static str, u64, u64)> {
        match self {
            Witness::PerfAndReference => {
                Some(("perf_and_reference", cycles, inner.1.wrapping_sub(inner.0)))
            }
            Witness::AperfMperf(fd) => {
                let (a0, m0) = outer?;
                let (a1, m1) = read_aperf_mperf(*fd)?;
                Some(("aperf_mperf", a1.wrapping_sub(a0), m1.wrapping_sub(m0)))
            }
            Witness::None => None,
        }
    }
}

fn read_aperf_mperf(fd: c_int) -> Option<(u64, u64)> {
    Some((
        sys::pread_u64(fd, MSR_APERF)?,
        sys::pread_u64(fd, MSR_MPERF)?,
    ))
}
