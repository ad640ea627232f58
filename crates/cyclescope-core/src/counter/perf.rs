//! `perf_event_open` user-mode hardware cycles of the calling thread, exactly as the harness's
//! `ngcc_perf.c` and `clockprobe.c` open them (`PERF_TYPE_HARDWARE`, `PERF_COUNT_HW_CPU_CYCLES`,
//! disabled, exclude_kernel, exclude_hv, pid 0, cpu -1), on a hybrid CPU on the measurement
//! CPU's core PMU. The attribute struct is in `perf_attr` because the `libc` crate does not
//! define it. No multiplexing scaling, no groups: a reading that ran for less time than it was
//! enabled, or counted zero, is no count at all.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use nix::errno::Errno;

use super::CounterError;
use super::perf_attr::{
    CounterFault, PERF_EVENT_IOC_DISABLE, PERF_EVENT_IOC_ENABLE, PERF_EVENT_IOC_RESET,
    PerfEventAttr, PerfReading,
};

/// An open user-mode cycle counter of the calling thread (it follows the thread across CPUs).
#[derive(Debug)]
pub struct PerfCycles {
    fd: OwnedFd,
}

impl PerfCycles {
    /// Opens the counter, disabled. The error says why it is unavailable: no PMU (ENOENT,
    /// ENODEV, EOPNOTSUPP — e.g. a virtual machine) or not permitted (EACCES, EPERM —
    /// `kernel.perf_event_paranoid`). `pmu`: the extended type of a hybrid CPU's core PMU
    /// (`host::CorePmu::extended_type`).
    pub fn open(pmu: Option<u32>) -> Result<Self, CounterError> {
        Self::open_event(PerfEventAttr::user_cycles(pmu))
    }

    fn open_event(attr: PerfEventAttr) -> Result<Self, CounterError> {
        let (pid, cpu, group_fd, flags): (libc::pid_t, libc::c_int, libc::c_int, libc::c_ulong) =
            (0, -1, -1, 0);
        // SAFETY: the attribute pointer is to a live, fully initialised struct whose `size`
        // field is its true size; the kernel only reads it. The other arguments are integers.
        let ret = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                &attr as *const PerfEventAttr,
                pid,
                cpu,
                group_fd,
                flags,
            )
        };
        if ret < 0 {
            return Err(CounterError::from_open_errno(Errno::last()));
        }
        let raw = libc::c_int::try_from(ret).map_err(|_| CounterError::Open {
            errno: Errno::EBADF,
        })?;
        // SAFETY: a non-negative return of perf_event_open is a new descriptor owned by nobody
        // else; OwnedFd closes it once.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        Ok(PerfCycles { fd })
    }

    /// Opens the counter and checks that it counts: some hypervisors accept the event but
    /// never advance it, which would otherwise show up as zero cycles in every trial.
    pub(crate) fn open_counting(pmu: Option<u32>) -> Result<Self, CounterError> {
        Self::open_counting_event(PerfEventAttr::user_cycles(pmu))
    }

    /// Whether hardware `instructions:u` open on the core PMU `pmu` (as the trial worker opens
    /// them for `--counter hw-instructions`): the run's check before any job. On a hybrid CPU
    /// only the open is asked, as this thread may run on the other core type; the worker,
    /// pinned, checks that they count.
    pub(crate) fn probe_user_instructions(pmu: Option<u32>) -> Result<(), CounterError> {
        let attr = PerfEventAttr::user_instructions(pmu);
        match pmu {
            None => Self::open_counting_event(attr).map(drop),
            Some(_) => Self::open_event(attr).map(drop),
        }
    }

    fn open_counting_event(attr: PerfEventAttr) -> Result<Self, CounterError> {
        let perf = Self::open_event(attr)?;
        perf.reset_enable();
        let mut x = 0u64;
        for i in 0..100_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        if perf.disable_read() == 0 {
            return Err(CounterError::NoCount);
        }
        Ok(perf)
    }

    fn ioctl(&self, request: u32) {
        // SAFETY: the descriptor is a live perf event owned by `self`; these requests take no
        // argument (0 is passed and ignored). They cannot fail on a valid perf descriptor, and
        // a failure would show as a zero count, which callers treat as "no count".
        unsafe {
            libc::ioctl(self.fd.as_raw_fd(), request as libc::Ioctl, 0);
        }
    }

    /// Zeroes the count and starts counting.
    #[inline]
    pub(crate) fn reset_enable(&self) {
        self.ioctl(PERF_EVENT_IOC_RESET);
        self.ioctl(PERF_EVENT_IOC_ENABLE);
    }

    /// Stops counting and returns the count (0 if it is no figure: see `disable_read_checked`).
    #[inline]
    pub(crate) fn disable_read(&self) -> u64 {
        self.disable_read_checked().unwrap_or(0)
    }

    /// Stops counting and returns the count, or the fault that makes it none (unread, zero,
    /// multiplexed).
    #[inline]
    pub(crate) fn disable_read_checked(&self) -> Result<u64, CounterFault> {
        self.ioctl(PERF_EVENT_IOC_DISABLE);
        let mut bytes = [0u8; 24];
        // SAFETY: reads at most 24 bytes into a live local buffer of 24 bytes from a descriptor
        // owned by `self`.
        let n = unsafe {
            libc::read(
                self.fd.as_raw_fd(),
                bytes.as_mut_ptr().cast::<libc::c_void>(),
                bytes.len(),
            )
        };
        PerfReading::checked(PerfReading::from_bytes(&bytes, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_errors_are_classified_by_errno() {
        for (errno, want) in [
            (Errno::ENOENT, "NoPmu"),
            (Errno::ENODEV, "NoPmu"),
            (Errno::EOPNOTSUPP, "NoPmu"),
            (Errno::EACCES, "NotPermitted"),
            (Errno::EPERM, "NotPermitted"),
            (Errno::ENOSYS, "Unimplemented"),
            (Errno::EINVAL, "Open"),
        ] {
            let got = CounterError::from_open_errno(errno);
            assert!(format!("{got:?}").starts_with(want), "{errno:?} -> {got:?}");
        }
    }

    /// A hardware PMU the kernel registered (x86 `cpu`, `cpu_core`, `cpu_atom`; Arm `armv8_*`
    /// and friends), as sysfs shows it, independently of perf_event_open.
    fn sysfs_has_hardware_pmu() -> bool {
        std::fs::read_dir("/sys/bus/event_source/devices")
            .map(|dir| {
                dir.filter_map(Result::ok).any(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    name == "cpu" || name.starts_with("cpu_") || name.starts_with("armv")
                })
            })
            .unwrap_or(false)
    }

    /// The counter's verdict must agree with what sysfs says of this machine: no hardware PMU
    /// means `NoPmu`; a PMU with `perf_event_paranoid` at most 2 means a counter whose count
    /// grows with the work done.
    #[test]
    fn open_agrees_with_the_pmu_sysfs_shows() {
        let paranoid: i32 = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(3);
        let opened = PerfCycles::open_counting(None);
        if let Err(CounterError::Unimplemented { .. }) = opened {
            // No perf_event_open at all (qemu-user answers ENOSYS): there is no counter to
            // agree with sysfs, which describes the host kernel, not this one.
            return;
        }
        if !sysfs_has_hardware_pmu() {
            assert!(
                matches!(opened, Err(CounterError::NoPmu { .. })),
                "no PMU in sysfs, yet {opened:?}"
            );
            return;
        }
        if paranoid > 2 {
            assert!(
                opened.is_err(),
                "paranoid {paranoid} yet the counter opened"
            );
            return;
        }
        let perf = opened.expect("a PMU and paranoid <= 2: the counter must open and count");
        let count = |n: u64| {
            perf.reset_enable();
            let mut x = 0u64;
            for i in 0..n {
                x = std::hint::black_box(x.wrapping_add(i));
            }
            perf.disable_read()
        };
        let (small, large) = (count(10_000), count(1_000_000));
        assert!(small > 0 && large > 10 * small, "{small} then {large}");
    }

    /// The trial worker's hardware-instructions loop counter never hands out another counter:
    /// without a PMU (this CI's VM) it refuses with the errno the engine's up-front probe names
    /// too; with one, it counts instructions, more for more work.
    #[test]
    fn the_trial_workers_instructions_refuse_rather_than_fall_back() {
        use crate::companion::counter::{CycleSource as WorkerSource, LoopCounter, PerfRefusal};
        let engine = PerfCycles::probe_user_instructions(None);
        match LoopCounter::open_instructions(None) {
            Err(PerfRefusal::Errno(e)) => {
                let errno = Errno::from_raw(e);
                let named = match engine {
                    Err(
                        CounterError::NoPmu { errno }
                        | CounterError::NotPermitted { errno }
                        | CounterError::Unimplemented { errno }
                        | CounterError::Open { errno },
                    ) => errno,
                    other => panic!("the worker refused with {errno:?}, the engine: {other:?}"),
                };
                assert_eq!(named, errno);
                if !sysfs_has_hardware_pmu() {
                    assert!(
                        matches!(
                            errno,
                            Errno::ENOENT | Errno::ENODEV | Errno::EOPNOTSUPP | Errno::ENOSYS
                        ),
                        "no PMU in sysfs, yet {errno:?}"
                    );
                }
                let said =
                    super::super::NoHardwareInstructions(CounterError::from_open_errno(errno))
                        .to_string();
                assert!(said.contains(&format!("{errno:?}")), "{said}");
            }
            Err(PerfRefusal::NoCount) => assert_eq!(engine, Err(CounterError::NoCount)),
            Ok(mut c) => {
                assert!(
                    sysfs_has_hardware_pmu(),
                    "instructions:u open without a PMU"
                );
                assert_eq!(engine, Ok(()));
                assert_eq!(c.source(), WorkerSource::PerfUserInstructions);
                let mut count = |n: u64| {
                    c.start();
                    let mut x = 0u64;
                    for i in 0..n {
                        x = std::hint::black_box(x.wrapping_add(i));
                    }
                    c.stop_checked().expect("a whole, non-zero count")
                };
                let (small, large) = (count(10_000), count(1_000_000));
                assert!(large > 10 * small, "{small} then {large}");
            }
        }
    }

    /// The instructions loop counter's read path (start, stop, the running == enabled and
    /// non-zero checks) with the software task clock, which opens without a PMU.
    #[test]
    fn the_trial_workers_instructions_read_path_runs_with_a_software_event() {
        use crate::companion::counter::{CycleSource as WorkerSource, LoopCounter, PerfRefusal};
        let mut c = match LoopCounter::open_instructions_event(
            crate::companion::perf_attr::PerfEventAttr::task_clock(),
        ) {
            Err(PerfRefusal::Errno(e))
                if matches!(
                    Errno::from_raw(e),
                    Errno::ENOSYS | Errno::EACCES | Errno::EPERM
                ) =>
            {
                return;
            }
            other => other.expect("the software task clock opens where perf_event_open exists"),
        };
        assert_eq!(c.source(), WorkerSource::PerfUserInstructions);
        c.start();
        let mut x = 0u64;
        for i in 0..200_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        let first = c.stop_checked().expect("a whole, non-zero reading");
        assert!(first > 0);
        assert_eq!(c.stop_checked(), Ok(first), "stopped, it counts no further");
    }

    /// The read path hardware cycles take (times, the running == enabled check), with the
    /// software task clock, which every Linux with perf events has, PMU or not.
    #[test]
    fn the_read_path_checks_a_software_events_times_and_count() {
        let perf = match PerfCycles::open_event(PerfEventAttr::task_clock()) {
            Err(CounterError::Unimplemented { .. } | CounterError::NotPermitted { .. }) => return,
            other => other.expect("the software task clock opens where perf_event_open exists"),
        };
        perf.reset_enable();
        let mut x = 0u64;
        for i in 0..1_000_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        let ns = perf
            .disable_read_checked()
            .expect("a whole, non-zero reading");
        assert!(ns > 0);
        // Disabled, it counts no further, and a reset zeroes it: a zero is a fault, not a 0.
        perf.ioctl(PERF_EVENT_IOC_RESET);
        assert_eq!(perf.disable_read_checked(), Err(CounterFault::Zero));
    }
}
