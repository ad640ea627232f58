//! The worker side of a measurement: runs inside `cyclescope worker measure`, pinned to the
//! measurement CPU. It loads one library, prepares the harness's message
//! (`msg[i] = (u8)(131·i + len)`), records baseline RSS, runs the warm-ups, then per trial
//! (1) the guide's bare loop of ITERS calls timed by the loop counter and CLOCK_MONOTONIC_RAW —
//! nothing else inside it — and (2) a separate per-call phase with serialised stamps around
//! each call for the histogram, so the stamps can never bias the guide figure. Samples go to
//! the engine in batches, never one message per call. `verify` holds what the engine checks
//! of such a report before believing it.

pub(crate) mod verify;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::counter::witness::{AperfMperf, ClockPair, WitnessKind, aperf_mperf_pair};
use crate::counter::{self, CycleSource, LoopCounter};
use crate::plugin::{Abi, GuardedBuffer, HashLibrary, NgccMeta, PreparedCall};
use crate::vocabulary::FailureKind;
use crate::worker::child::Channel;

/// Samples per batch message, and the longest a batch waits.
const BATCH_SAMPLES: usize = 4096;
const BATCH_INTERVAL: Duration = Duration::from_millis(25);

/// What one worker process runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialSpec {
    pub library: PathBuf,
    pub digest_bits: u32,
    pub input_bytes: u64,
    pub iterations: u64,
    pub warmups: u64,
    /// Trials in this process (1 when each trial gets its own process).
    pub trials: u32,
    /// Calls stamped one by one after each trial's loop (0: none).
    pub sample_calls: u64,
    /// The library's calling convention.
    #[serde(default, skip_serializing_if = "Abi::is_iccs")]
    pub abi: Abi,
}

/// Messages from the worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub(crate) enum TrialMessage {
    Ready {
        meta: Option<Box<NgccMeta>>,
        baseline_rss_bytes: u64,
        cycle_source: CycleSource,
        core_cycles: bool,
        perf_unavailable: Option<String>,
        /// The per-call counter (None when this machine has none).
        per_call_source: Option<CycleSource>,
        timer_overhead_ticks: f64,
    },
    Trial {
        measurements: u64,
        seconds: f64,
        cycles: u64,
        /// Nanoseconds the worker sat runnable but not running during the loop (preempted):
        /// time a reference counter counts although the candidate did not run.
        waited_ns: Option<u64>,
        /// Core and reference counts around the loop, where the hardware gives both.
        #[serde(default)]
        clock: Option<ClockPair>,
    },
    Samples {
        ticks: Vec<u64>,
    },
    /// The candidate misbehaved without dying: `CRYPTOFAIL` or `OVERFLOW`.
    Fault {
        status: FailureKind,
        detail: String,
    },
    Done {
        peak_rss_bytes: u64,
    },
    Error {
        message: String,
    },
}

/// Harness input: `msg[i] = (uint8_t)(i*131 + len)`.
pub(crate) fn harness_message(len: u64) -> GuardedBuffer {
    let mut msg = GuardedBuffer::new(len as usize);
    for (i, b) in msg.data_mut().iter_mut().enumerate() {
        *b = (i as u64).wrapping_mul(131).wrapping_add(len) as u8;
    }
    msg
}

/// How this worker witnesses the clock of a trial: the perf loop counter with the reference
/// counter read beside it, else APERF/MPERF of its CPU, else not at all.
enum Witness {
    PerfAndReference,
    AperfMperf(AperfMperf),
    None,
}

impl Witness {
    fn open(loop_counter: &LoopCounter, cpu: Option<usize>) -> Self {
        if loop_counter.source() == CycleSource::PerfUserCycles
            && counter::REFERENCE_SOURCE.is_some()
        {
            return Witness::PerfAndReference;
        }
        cpu.and_then(|c| AperfMperf::open(std::path::Path::new("/"), c).ok())
            .map_or(Witness::None, Witness::AperfMperf)
    }

    /// APERF/MPERF before the loop counter starts: a register read is a system call, which
    /// must stay outside a TSC-timed loop.
    #[inline]
    fn outer(&self) -> Option<(u64, u64)> {
        match self {
            Witness::AperfMperf(m) => m.read(),
            _ => None,
        }
    }

    /// The reference counter just inside perf's counting window (an `rdtsc`, a few cycles).
    #[inline]
    fn inner(&self) -> u64 {
        match self {
            Witness::PerfAndReference => counter::reference_now(),
            _ => 0,
        }
    }

    /// The trial's pair from the readings before it and the loop counter's count.
    fn pair(&self, outer: Option<(u64, u64)>, inner: (u64, u64), cycles: u64) -> Option<ClockPair> {
        match self {
            Witness::PerfAndReference => Some(ClockPair {
                kind: WitnessKind::PerfAndReference,
                core: cycles,
                reference: inner.1.wrapping_sub(inner.0),
            }),
            Witness::AperfMperf(m) => Some(aperf_mperf_pair(outer?, m.read()?)),
            Witness::None => None,
        }
    }
}

/// Runs `spec` (pinned to `cpu`, when given) and reports on `ch`. Returns the exit code.
pub(crate) fn run_in_worker(spec: &TrialSpec, cpu: Option<usize>, ch: &mut Channel) -> i32 {
    let lib = match HashLibrary::open_abi(&spec.library, spec.abi)
        .and_then(|l| l.check_digest_bits(spec.digest_bits).map(|()| l))
    {
        Ok(l) => l,
        Err(e) => {
            ch.send(&TrialMessage::Error {
                message: e.to_string(),
            });
            return 2;
        }
    };
    let msg = harness_message(spec.input_bytes);
    let mut digest = GuardedBuffer::new((spec.digest_bits as usize).div_ceil(8));
    let bits = 8 * spec.input_bytes;
    let baseline_rss_bytes = resident_bytes();
    let mut loop_counter = match LoopCounter::open() {
        Ok(c) => c,
        Err(e) => {
            ch.send(&TrialMessage::Error {
                message: format!("no cycle counter: {e}"),
            });
            return 2;
        }
    };
    let witness = Witness::open(&loop_counter, cpu);
    let overhead = counter::timer_overhead(counter::TIMER_OVERHEAD_REPETITIONS).ok();
    let overhead_ticks = overhead.map_or(0, |o| o.median);
    ch.send(&TrialMessage::Ready {
        meta: lib.meta().cloned().map(Box::new),
        baseline_rss_bytes,
        cycle_source: loop_counter.source(),
        core_cycles: loop_counter.source().counts_core_cycles(),
        perf_unavailable: loop_counter.perf_error().map(ToString::to_string),
        per_call_source: overhead.map(|o| o.source),
        timer_overhead_ticks: overhead_ticks as f64,
    });

    let mut call = lib.prepare(spec.digest_bits, &msg, bits, &mut digest);
    for _ in 0..spec.warmups {
        let rc = call.call();
        if let Some(code) = fault(ch, rc, &call, bits) {
            return code;
        }
    }
    for _ in 0..spec.trials {
        // The guide's loop: nothing but the calls between the two readings (the ABI is
        // chosen once, before the loop).
        let wait0 = runqueue_wait_ns();
        let t0 = counter::monotonic_raw_ns();
        let outer = witness.outer();
        loop_counter.start();
        let inner0 = witness.inner();
        let failed_rc = call.call_n(spec.iterations);
        let inner1 = witness.inner();
        let cycles = loop_counter.stop();
        let clock = witness.pair(outer, (inner0, inner1), cycles);
        let t1 = counter::monotonic_raw_ns();
        let waited_ns = runqueue_wait_ns()
            .zip(wait0)
            .map(|(b, a)| b.saturating_sub(a));
        if let Some(code) = fault(ch, failed_rc, &call, bits) {
            return code;
        }
        ch.send(&TrialMessage::Trial {
            measurements: spec.iterations,
            seconds: t1.saturating_sub(t0) as f64 / 1e9,
            cycles,
            waited_ns,
            clock,
        });
        if let Some(code) = sample_calls(ch, spec.sample_calls, overhead_ticks, &mut call, bits) {
            return code;
        }
    }
    ch.send(&TrialMessage::Done {
        peak_rss_bytes: peak_resident_bytes(),
    });
    0
}

/// The per-call phase: serialised stamps around each call, overhead subtracted, in batches.
fn sample_calls(
    ch: &mut Channel,
    calls: u64,
    overhead: u64,
    call: &mut PreparedCall<'_>,
    bits: u64,
) -> Option<i32> {
    let mut batch = Vec::with_capacity(BATCH_SAMPLES);
    let mut last_send = Instant::now();
    let mut bad_rc = 0;
    for _ in 0..calls {
        let t0 = counter::stamp_start();
        let rc = call.call();
        let t1 = counter::stamp_end();
        if rc != 0 {
            bad_rc = rc;
        }
        batch.push(t1.wrapping_sub(t0).saturating_sub(overhead).max(1));
        if batch.len() >= BATCH_SAMPLES || last_send.elapsed() >= BATCH_INTERVAL {
            ch.send(&TrialMessage::Samples {
                ticks: std::mem::take(&mut batch),
            });
            last_send = Instant::now();
        }
    }
    if !batch.is_empty() {
        ch.send(&TrialMessage::Samples { ticks: batch });
    }
    fault(ch, bad_rc, call, bits)
}

fn fault(ch: &mut Channel, rc: i32, call: &PreparedCall<'_>, bits: u64) -> Option<i32> {
    if !call.guards_intact() {
        return Some(overflow(ch, bits));
    }
    (rc != 0).then(|| cryptofail(ch, rc))
}

fn cryptofail(ch: &mut Channel, rc: i32) -> i32 {
    ch.send(&TrialMessage::Fault {
        status: FailureKind::Cryptofail,
        detail: format!("CryptHash returned {rc}"),
    });
    3
}

fn overflow(ch: &mut Channel, bits: u64) -> i32 {
    ch.send(&TrialMessage::Fault {
        status: FailureKind::Overflow,
        detail: format!("CryptHash wrote outside its buffers (msg_len={bits} bits)"),
    });
    3
}

/// Run-queue wait of this thread so far (`/proc/thread-self/schedstat`, second field, ns).
fn runqueue_wait_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn page_size() -> u64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()
        .map_or(4096, |v| v as u64)
}

/// Resident pages × page size, from `/proc/self/statm` (the harness's baseline RSS).
pub(crate) fn resident_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * page_size())
}

/// `VmHWM` from `/proc/self/status`, in bytes.
pub(crate) fn peak_resident_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))?
                .split_whitespace()
                .next()?
                .parse::<u64>()
                .ok()
        })
        .map_or(0, |kib| kib * 1024)
}

/// A measurement worker's whole life, for both entry points (`cyclescope worker measure` and
/// the `cyclescope-worker` companion): set the process up, run the spec, exit with its code.
pub fn serve(
    spec: &TrialSpec,
    cpu: Option<usize>,
    limits: crate::worker::Limits,
) -> std::process::ExitCode {
    match crate::worker::child::enter(cpu, limits) {
        Ok(mut ch) => std::process::ExitCode::from(run_in_worker(spec, cpu, &mut ch) as u8),
        Err(e) => {
            eprintln!("cyclescope worker: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_is_the_harness_pattern() {
        let m = harness_message(32);
        assert_eq!(m.data()[0], 32);
        assert_eq!(m.data()[1], 163);
        assert_eq!(m.data()[2], (262u64 + 32) as u8);
        assert!(m.guards_intact());
    }

    #[test]
    fn runqueue_wait_is_readable_and_monotonic() {
        let a = runqueue_wait_ns().expect("schedstat is available on Linux");
        let b = runqueue_wait_ns().unwrap();
        assert!(b >= a);
    }

    #[test]
    fn rss_figures_are_read() {
        assert!(resident_bytes() > 0);
        assert!(peak_resident_bytes() >= resident_bytes() / 2);
    }
}
