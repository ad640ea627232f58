//! The clock probe (the harness's `clockprobe`): count cycles over busy windows of
//! `CLOCK_MONOTONIC_RAW`, pinned to the measurement CPU, and report the median rate, its range
//! and interquartile spread. With perf_event it measures the core clock (and the reference
//! counter's rate alongside, giving the reference-to-core ratio); without it, it can only
//! measure the reference counter's rate and says so through `source`. It never judges the
//! result; `host` does.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{CounterError, CycleSource, PerfCycles, REFERENCE_SOURCE, reference_now};

/// Windows and their length; the harness uses 21 × 50 ms plus one untimed warm window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockProbeConfig {
    pub(crate) windows: usize,
    pub(crate) window: Duration,
    /// Pin the probing thread here while probing (its previous affinity is restored after).
    pub(crate) cpu: Option<usize>,
}

impl Default for ClockProbeConfig {
    fn default() -> Self {
        ClockProbeConfig {
            windows: 21,
            window: Duration::from_millis(50),
            cpu: None,
        }
    }
}

/// One probe's result, in counts per second of `source`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClockProbe {
    /// What was counted: perf core cycles (the core clock) or a reference counter (its rate).
    pub(crate) source: CycleSource,
    /// Median over the windows.
    pub(crate) clock_hz: u64,
    pub(crate) clock_min_hz: u64,
    pub(crate) clock_max_hz: u64,
    /// `sorted[3w/4] - sorted[w/4]`, as the harness computes it.
    pub(crate) clock_iqr_hz: u64,
    pub(crate) windows: usize,
    /// The reference counter's median rate in the same windows (None when not measured).
    #[serde(default)]
    pub(crate) reference_hz: Option<u64>,
    /// Median of reference ticks per core cycle over the windows; only when `source` counts
    /// core cycles and a reference counter exists.
    #[serde(default)]
    pub(crate) ref_to_core_ratio: Option<f64>,
}

impl ClockProbe {
    /// True when `clock_hz` is the core clock (perf cycles), false for a reference rate.
    pub(crate) fn measures_core_clock(&self) -> bool {
        self.source.counts_core_cycles()
    }

    /// The harness's verdict: IQR at most 0.5 % of the median.
    pub(crate) fn is_steady(&self) -> bool {
        self.clock_iqr_hz as f64 <= 0.005 * self.clock_hz as f64
    }

    /// `50·round(clock_hz/50e6)`, the harness's `core_clock_mhz`.
    pub(crate) fn mhz_to_50(&self) -> u64 {
        50 * (self.clock_hz as f64 / 50e6).round() as u64
    }
}

/// Nanoseconds of `CLOCK_MONOTONIC_RAW` (not slewed by NTP: the harness's wall clock).
pub fn monotonic_raw_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a pointer to a live local.
    // CLOCK_MONOTONIC_RAW exists on every Linux since 2.6.28, so it cannot fail here.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Probes the clock: perf core cycles when they open, else the reference counter's rate.
pub fn clock_probe(config: &ClockProbeConfig) -> Result<ClockProbe, CounterError> {
    let pmu = config.cpu.and_then(|cpu| {
        crate::host::core_pmu(&crate::host::HostRoot::system(), cpu)
            .ok()
            .flatten()
            .and_then(|p| p.extended_type())
    });
    let perf = PerfCycles::open_counting(pmu).ok();
    let reference = REFERENCE_SOURCE;
    let source = match (&perf, reference) {
        (Some(_), _) => CycleSource::PerfUserCycles,
        (None, Some(r)) => r,
        (None, None) => return Err(CounterError::NoReferenceCounter),
    };
    let _pinned = config
        .cpu
        .map(|cpu| crate::cpu::Pinned::to(cpu).map_err(|errno| CounterError::Pin { cpu, errno }))
        .transpose()?;
    let windows = config.windows.max(1);
    let window_ns = (config.window.as_nanos() as u64).max(1);
    let mut rate = Vec::with_capacity(windows);
    let mut ref_rate = Vec::with_capacity(windows);
    let mut ratio = Vec::with_capacity(windows);
    let mut sink = 0u64;
    // One untimed window lets the core leave any idle state (w = 0 below).
    for w in 0..=windows {
        if let Some(p) = &perf {
            p.reset_enable();
        }
        let r0 = reference_now();
        let t0 = monotonic_raw_ns();
        let mut t1;
        loop {
            for i in 0..10_000u64 {
                sink = std::hint::black_box(sink.wrapping_add(i));
            }
            t1 = monotonic_raw_ns();
            if t1.wrapping_sub(t0) >= window_ns {
                break;
            }
        }
        let r1 = reference_now();
        let ticks = r1.wrapping_sub(r0);
        let count = match &perf {
            Some(p) => p.disable_read(),
            None => ticks,
        };
        if count == 0 {
            return Err(CounterError::NoCount);
        }
        if w == 0 {
            continue;
        }
        let secs = (t1 - t0) as f64 / 1e9;
        rate.push(count as f64 / secs);
        if perf.is_some() && reference.is_some() && ticks > 0 {
            ref_rate.push(ticks as f64 / secs);
            ratio.push(ticks as f64 / count as f64);
        }
    }
    let (median, min, max, iqr) = summary(&mut rate);
    let reference_hz = if perf.is_none() {
        Some(median)
    } else if ref_rate.is_empty() {
        None
    } else {
        Some(summary(&mut ref_rate).0)
    };
    let ref_to_core_ratio = (!ratio.is_empty()).then(|| {
        ratio.sort_by(f64::total_cmp);
        ratio[ratio.len() / 2]
    });
    Ok(ClockProbe {
        source,
        clock_hz: median,
        clock_min_hz: min,
        clock_max_hz: max,
        clock_iqr_hz: iqr,
        windows,
        reference_hz,
        ref_to_core_ratio,
    })
}

/// (median, min, max, IQR) with the harness's indices: `[w/2]`, `[0]`, `[w-1]`,
/// `[3w/4] - [w/4]`.
fn summary(values: &mut [f64]) -> (u64, u64, u64, u64) {
    values.sort_by(f64::total_cmp);
    let w = values.len();
    let r = |x: f64| x.round() as u64;
    (
        r(values[w / 2]),
        r(values[0]),
        r(values[w - 1]),
        r(values[3 * w / 4] - values[w / 4]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_uses_the_harness_indices() {
        let mut v: Vec<f64> = (1..=21).rev().map(|x| x as f64 * 1e8).collect();
        // sorted 1..21 e8: median [10] = 11e8, [15] = 16e8, [5] = 6e8
        assert_eq!(
            summary(&mut v),
            (1_100_000_000, 100_000_000, 2_100_000_000, 1_000_000_000)
        );
    }

    #[test]
    fn steadiness_and_mhz_follow_the_harness() {
        let p = ClockProbe {
            source: CycleSource::PerfUserCycles,
            clock_hz: 2_695_228_108,
            clock_min_hz: 2_686_861_117,
            clock_max_hz: 2_696_419_686,
            clock_iqr_hz: 13_476_140,
            windows: 21,
            reference_hz: None,
            ref_to_core_ratio: None,
        };
        assert_eq!(p.mhz_to_50(), 2700);
        assert!(p.is_steady());
        assert!(
            !ClockProbe {
                clock_iqr_hz: 13_476_141,
                ..p
            }
            .is_steady()
        );
    }

    #[test]
    fn a_short_probe_reports_its_source_and_restores_affinity() {
        use nix::sched::{CpuSet, sched_getaffinity};
        use nix::unistd::Pid;
        let before = sched_getaffinity(Pid::from_raw(0)).unwrap();
        let cpu = (0..CpuSet::count()).find(|&c| before.is_set(c).unwrap_or(false));
        let cfg = ClockProbeConfig {
            windows: 3,
            window: Duration::from_millis(2),
            cpu,
        };
        let p = clock_probe(&cfg).unwrap();
        assert_eq!(p.windows, 3);
        assert!(p.clock_min_hz <= p.clock_hz && p.clock_hz <= p.clock_max_hz);
        if !p.measures_core_clock() {
            assert_eq!(p.reference_hz, Some(p.clock_hz));
            assert_eq!(p.ref_to_core_ratio, None);
        }
        assert_eq!(sched_getaffinity(Pid::from_raw(0)).unwrap(), before);
    }
}
