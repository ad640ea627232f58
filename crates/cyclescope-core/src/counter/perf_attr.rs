//! `struct perf_event_attr` of `<linux/perf_event.h>` and the constants cyclescope opens its
//! counter with, laid out here because the `libc` crate does not define them. Plain `core`
//! items, shared by the engine's counter and the trial worker companion (which includes this
//! file), so the two open exactly the same event. No system call is made here.

const PERF_TYPE_HARDWARE: u32 = 0;
const PERF_COUNT_HW_CPU_CYCLES: u64 = 0;
/// `PERF_ATTR_SIZE_VER8`: the layout below, up to and including `config3`. Older kernels accept
/// a larger struct as long as the bytes they do not know are zero.
const PERF_ATTR_SIZE: u32 = 136;

const FLAG_DISABLED: u64 = 1 << 0;
const FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
const FLAG_EXCLUDE_HV: u64 = 1 << 6;

// `_IO('$', n)`: no direction bits, no size, type '$' (0x24) — the same on x86-64 and AArch64.
pub(crate) const PERF_EVENT_IOC_ENABLE: u32 = 0x2400;
pub(crate) const PERF_EVENT_IOC_DISABLE: u32 = 0x2401;
pub(crate) const PERF_EVENT_IOC_RESET: u32 = 0x2403;

/// `struct perf_event_attr` of `<linux/perf_event.h>` (the unions are reduced to their first
/// member; the bitfield word is `flags`).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct PerfEventAttr {
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
    /// disabled, user mode only (kernel and hypervisor excluded).
    pub(crate) fn user_cycles() -> Self {
        PerfEventAttr {
            type_: PERF_TYPE_HARDWARE,
            size: PERF_ATTR_SIZE,
            config: PERF_COUNT_HW_CPU_CYCLES,
            flags: FLAG_DISABLED | FLAG_EXCLUDE_KERNEL | FLAG_EXCLUDE_HV,
            ..PerfEventAttr::default()
        }
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
            PerfEventAttr::user_cycles().size as usize,
            core::mem::size_of::<PerfEventAttr>()
        );
    }
}
