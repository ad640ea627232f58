//! `struct perf_event_attr` of `<linux/perf_event.h>` and the constants cyclescope opens its
//! counter with, laid out here because the `libc` crate does not define them. Plain `core`
//! items, shared by the engine's counter and the trial worker, so the two open exactly the
//! same event. No system call is made here.

const PERF_TYPE_HARDWARE: u32 = 0;
const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_COUNT_HW_CPU_CYCLES: u64 = 0;
const PERF_COUNT_HW_INSTRUCTIONS: u64 = 1;
const PERF_COUNT_SW_TASK_CLOCK: u64 = 1;
// The sampling items serve the trial worker's profile (`cyclescope-worker`'s `sampler`).
const PERF_COUNT_SW_CPU_CLOCK: u64 = 0;
/// `PERF_SAMPLE_IP`: each sample record holds the instruction pointer alone.
const PERF_SAMPLE_IP: u64 = 1;
/// `PERF_RECORD_LOST` and `PERF_RECORD_SAMPLE`, the ring buffer's record types read.
pub const PERF_RECORD_LOST: u32 = 2;
pub const PERF_RECORD_SAMPLE: u32 = 9;
/// `PERF_PMU_TYPE_SHIFT`: a generic hardware event names its PMU (a hybrid CPU's core type)
/// in the upper 32 bits of `config`.
const PERF_PMU_TYPE_SHIFT: u32 = 32;
/// `PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING`: a read returns the count,
/// then the nanoseconds the event was enabled and those it was running on the PMU. They
/// differ when the event was multiplexed, or ran on a CPU whose PMU it does not belong to.
const READ_TIMES: u64 = (1 << 0) | (1 << 1);
/// `PERF_ATTR_SIZE_VER8`: the layout below, up to and including `config3`. Older kernels accept
/// a larger struct as long as the bytes they do not know are zero.
const PERF_ATTR_SIZE: u32 = 136;

const FLAG_DISABLED: u64 = 1 << 0;
const FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
const FLAG_EXCLUDE_HV: u64 = 1 << 6;

// `_IO('$', n)`: no direction bits, no size, type '$' (0x24) — the same on x86-64 and AArch64.
pub const PERF_EVENT_IOC_ENABLE: u32 = 0x2400;
pub const PERF_EVENT_IOC_DISABLE: u32 = 0x2401;
pub const PERF_EVENT_IOC_RESET: u32 = 0x2403;

/// `struct perf_event_attr` of `<linux/perf_event.h>` (the unions are reduced to their first
/// member; the bitfield word is `flags`).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct PerfEventAttr {
    type_: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    reserved_2: u16,
    aux_sample_size: u32,
    reserved_3: u32,
    sig_data: u64,
    config3: u64,
}

const _: () = assert!(core::mem::size_of::<PerfEventAttr>() == PERF_ATTR_SIZE as usize);

impl PerfEventAttr {
    /// The harness's event (`ngcc_perf.c`, `clockprobe.c`): hardware cpu-cycles, opened
    /// disabled, user mode only (kernel and hypervisor excluded); on a hybrid CPU on the PMU
    /// of type `pmu` (`host::pmu`). Reads carry the enabled and running times.
    pub fn user_cycles(pmu: Option<u32>) -> Self {
        let extended = pmu.map_or(0, |t| u64::from(t) << PERF_PMU_TYPE_SHIFT);
        PerfEventAttr {
            type_: PERF_TYPE_HARDWARE,
            size: PERF_ATTR_SIZE,
            config: extended | PERF_COUNT_HW_CPU_CYCLES,
            read_format: READ_TIMES,
            flags: FLAG_DISABLED | FLAG_EXCLUDE_KERNEL | FLAG_EXCLUDE_HV,
            ..PerfEventAttr::default()
        }
    }

    /// Hardware retired instructions (`instructions:u`), opened and read exactly like
    /// [`PerfEventAttr::user_cycles`], on the same core PMU of a hybrid CPU: the loop counter of
    /// `--counter hw-instructions`.
    pub fn user_instructions(pmu: Option<u32>) -> Self {
        let extended = pmu.map_or(0, |t| u64::from(t) << PERF_PMU_TYPE_SHIFT);
        PerfEventAttr {
            config: extended | PERF_COUNT_HW_INSTRUCTIONS,
            ..Self::user_cycles(pmu)
        }
    }

    /// A sampling event for the profile: hardware cycles every `period` cycles (on the PMU of
    /// type `pmu` on a hybrid CPU), user mode only, each sample the instruction pointer.
    pub fn sampling_cycles(pmu: Option<u32>, period: u64) -> Self {
        PerfEventAttr {
            sample_period: period,
            sample_type: PERF_SAMPLE_IP,
            read_format: 0,
            ..Self::user_cycles(pmu)
        }
    }

    /// The `cpu-clock` software event sampling every `period_ns` nanoseconds, where there is no
    /// PMU (as in most virtual machines).
    pub fn sampling_cpu_clock(period_ns: u64) -> Self {
        PerfEventAttr {
            type_: PERF_TYPE_SOFTWARE,
            config: PERF_COUNT_SW_CPU_CLOCK,
            ..Self::sampling_cycles(None, period_ns)
        }
    }

    /// The software task clock (nanoseconds this thread ran), opened and read exactly like
    /// [`PerfEventAttr::user_cycles`]: a machine without a PMU still runs the read path with it.
    pub fn task_clock() -> Self {
        PerfEventAttr {
            type_: PERF_TYPE_SOFTWARE,
            config: PERF_COUNT_SW_TASK_CLOCK,
            ..Self::user_cycles(None)
        }
    }
}

/// What one read of an event opened with [`PerfEventAttr`] returns: the count, and the
/// nanoseconds it was enabled and running (`read_format` of the two times).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PerfReading {
    pub count: u64,
    pub enabled_ns: u64,
    pub running_ns: u64,
}

/// Why a reading is no figure: a counter fault, named in the job's failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterFault {
    /// The read returned fewer bytes than the three numbers.
    Unread,
    /// It counted nothing over a trial of calls.
    Zero,
    /// It ran for less time than it was enabled: multiplexed with other events, or enabled on
    /// a CPU of another core type. Its count is not the trial's.
    Multiplexed { enabled_ns: u64, running_ns: u64 },
}

impl CounterFault {
    /// The protocol's and the record's word for it (the worker sends it).
    pub fn name(self) -> &'static str {
        match self {
            CounterFault::Unread => "unread",
            CounterFault::Zero => "zero",
            CounterFault::Multiplexed { .. } => "multiplexed",
        }
    }
}

impl PerfReading {
    /// The three native-endian u64s a read returns, or None when `n` is short of them.
    // Inlined into the callers' read path, as when this file was compiled into each of them.
    #[inline]
    pub fn from_bytes(bytes: &[u8; 24], n: isize) -> Option<Self> {
        if n != 24 {
            return None;
        }
        let word = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&bytes[i * 8..i * 8 + 8]);
            u64::from_ne_bytes(w)
        };
        Some(PerfReading {
            count: word(0),
            enabled_ns: word(1),
            running_ns: word(2),
        })
    }

    /// The count, when it is a figure: non-zero, and counted for all the time it was enabled.
    #[inline]
    pub fn checked(reading: Option<Self>) -> Result<u64, CounterFault> {
        let r = reading.ok_or(CounterFault::Unread)?;
        if r.running_ns != r.enabled_ns {
            return Err(CounterFault::Multiplexed {
                enabled_ns: r.enabled_ns,
                running_ns: r.running_ns,
            });
        }
        if r.count == 0 {
            return Err(CounterFault::Zero);
        }
        Ok(r.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attr_flags_are_the_harness_bits() {
        // disabled:1, inherit:1, pinned:1, exclusive:1, exclude_user:1, exclude_kernel:1,
        // exclude_hv:1 — bits 0 and 5, 6.
        assert_eq!(
            FLAG_DISABLED | FLAG_EXCLUDE_KERNEL | FLAG_EXCLUDE_HV,
            0b110_0001
        );
        assert_eq!(core::mem::offset_of!(PerfEventAttr, flags), 40);
        assert_eq!(core::mem::offset_of!(PerfEventAttr, config1), 56);
        assert_eq!(core::mem::offset_of!(PerfEventAttr, sample_regs_intr), 96);
        assert_eq!(core::mem::offset_of!(PerfEventAttr, sig_data), 120);
        assert_eq!(
            PerfEventAttr::user_cycles(None).size as usize,
            core::mem::size_of::<PerfEventAttr>()
        );
    }

    #[test]
    fn a_reading_is_a_figure_only_when_whole_and_non_zero() {
        let mut bytes = [0u8; 24];
        for (i, v) in [5000u64, 900, 900].into_iter().enumerate() {
            bytes[i * 8..i * 8 + 8].copy_from_slice(&v.to_ne_bytes());
        }
        let r = PerfReading::from_bytes(&bytes, 24);
        assert_eq!(PerfReading::checked(r), Ok(5000));
        assert_eq!(
            PerfReading::checked(PerfReading::from_bytes(&bytes, 8)),
            Err(CounterFault::Unread)
        );
        let half = PerfReading {
            count: 5000,
            enabled_ns: 900,
            running_ns: 450,
        };
        assert_eq!(
            PerfReading::checked(Some(half)),
            Err(CounterFault::Multiplexed {
                enabled_ns: 900,
                running_ns: 450
            })
        );
        // An event that never got onto the PMU (an E-core's cycles asked of cpu_core).
        let never = PerfReading {
            count: 0,
            enabled_ns: 900,
            running_ns: 0,
        };
        assert_eq!(
            PerfReading::checked(Some(never)).map_err(CounterFault::name),
            Err("multiplexed")
        );
        let zero = PerfReading {
            count: 0,
            enabled_ns: 900,
            running_ns: 900,
        };
        assert_eq!(PerfReading::checked(Some(zero)), Err(CounterFault::Zero));
    }

    #[test]
    fn a_hybrid_pmu_goes_in_the_upper_half_of_config() {
        assert_eq!(PerfEventAttr::user_cycles(None).config, 0);
        // i7-12700: cpu_atom is type 10, the generic cpu-cycles event 0.
        let atom = PerfEventAttr::user_cycles(Some(10));
        assert_eq!((atom.type_, atom.config), (0, 0x0000_000a_0000_0000));
        assert_eq!(atom.read_format, 0b11);
        let sw = PerfEventAttr::task_clock();
        assert_eq!(
            (sw.type_, sw.config, sw.read_format, sw.flags),
            (1, 1, 0b11, 0b110_0001)
        );
    }

    #[test]
    fn hardware_instructions_are_the_cycles_event_with_its_own_config() {
        // PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, user mode only, times read.
        let plain = PerfEventAttr::user_instructions(None);
        assert_eq!(
            (plain.type_, plain.config, plain.read_format, plain.flags),
            (0, 1, 0b11, 0b110_0001)
        );
        assert_ne!(plain.flags & FLAG_EXCLUDE_KERNEL, 0);
        assert_ne!(plain.flags & FLAG_EXCLUDE_HV, 0);
        assert_eq!(plain.size as usize, core::mem::size_of::<PerfEventAttr>());
        // i7-12700: cpu_core is type 4, cpu_atom type 10.
        for pmu in [4u32, 10] {
            let hybrid = PerfEventAttr::user_instructions(Some(pmu));
            assert_eq!(hybrid.type_, 0);
            assert_eq!(hybrid.config, (u64::from(pmu) << 32) | 1);
        }
    }
}
