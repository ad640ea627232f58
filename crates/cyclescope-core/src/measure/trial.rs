//! What a measurement worker is asked and what it answers. The worker itself is
//! `cyclescope-worker`, the `no_std` program of `crates/cyclescope-worker` (its `trial` runs
//! the method): pinned to the measurement CPU it loads one library, prepares the harness's
//! message (`msg[i] = (u8)(131·i + len)`), records baseline RSS, runs the warm-ups, then per trial
//! (1) the guide's bare loop of ITERS calls timed by the loop counter and CLOCK_MONOTONIC_RAW —
//! nothing else inside it — and (2) a separate per-call phase with serialised stamps around
//! each call for the histogram, so the stamps can never bias the guide figure. Samples come in
//! batches, never one message per call. `verify` holds what the engine checks of such a report
//! before believing it.

pub(crate) mod verify;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::counter::witness::ClockPair;
use crate::counter::{CounterError, CycleSource};
use crate::plugin::Abi;

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
    /// The fresh-message probe (`measure::proof`): each call hashes its own pseudo-random
    /// message from this seed instead of the harness's message, and reports every digest.
    /// None: the guide's trials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fresh_seed: Option<u64>,
    /// The probe's second seed, for the first 8 bytes of each message: the go line, never on
    /// the command line (`companion::proof::Probe`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fresh_heads: Option<u64>,
    /// A layout of its own (`measure::layout`); None: the guide's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offsets: Option<super::layout::BufferOffsets>,
    /// An instruction count under valgrind (`counter::callgrind`) instead of timed trials.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub count: bool,
    /// The loop counter is the PMU's `instructions:u` (`--counter hw-instructions`): the
    /// worker refuses, named, where it does not open, and never times with another counter.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hardware_instructions: bool,
    /// The fresh-message probe's loop with no candidate in the process (a built-in function
    /// stands in, `cyclescope_worker::library`): what the loop itself costs a call, which the
    /// probe's rule allows for (`measure::proof`). The library is not handed over, nor loaded.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub loop_only: bool,
    /// The fresh-message probe's twin (with `fresh_seed`): the same process, seeds, go line,
    /// loop and digests, but every call hashes the harness's message at one address: what the
    /// probe's calls cost where nothing is fresh, timed beside it (`measure::proof`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub repeat: bool,
    /// A width the instance does not have (`digest_length`): the library's own declared width
    /// (`ngcc_meta`) is not held to it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub any_width: bool,
}

/// Which parts of its sandbox the worker put in force (`cyclescope_worker::sandbox`); under
/// valgrind Landlock is not among them (valgrind does not pass its system calls through).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxInForce {
    pub landlock: bool,
    pub seccomp: bool,
}

/// Messages from the worker (JSON objects tagged by `t`, written by `cyclescope_worker::trial`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub(crate) enum TrialMessage {
    Ready {
        /// The bytes of the library's `ngcc_meta` block in hex (`""`: it returned NULL),
        /// decoded and checked by the engine (`plugin::meta_from_block`); None: no such
        /// export.
        meta_block: Option<String>,
        /// `ngcc_build_flags()` in hex, when the library exports it.
        build_flags: Option<String>,
        baseline_rss_bytes: u64,
        cycle_source: CycleSource,
        /// Why perf_event is not the loop counter (None when it is).
        perf_unavailable: Option<PerfRefusal>,
        /// The per-call counter (None when this machine has none).
        per_call_source: Option<CycleSource>,
        timer_overhead_ticks: u64,
        /// Absent from workers of earlier versions.
        #[serde(default)]
        sandbox: Option<SandboxInForce>,
    },
    Trial {
        measurements: u64,
        nanoseconds: u64,
        cycles: u64,
        /// Nanoseconds the worker sat runnable but not running during the loop (preempted):
        /// time a reference counter counts although the candidate did not run.
        waited_ns: Option<u64>,
        /// Core and reference counts around the loop, where the hardware gives both.
        clock: Option<ClockPair>,
        /// The digest the loop's last call wrote, in hex (checked by `measure::proof`).
        digest: String,
    },
    Samples {
        ticks: Vec<u64>,
    },
    /// The fresh-message probe's digests of its last trial, in call order, concatenated (a
    /// long trial sends several).
    Digests {
        hex: String,
    },
    /// `CryptHash` returned non-zero (the harness's CRYPTOFAIL).
    Cryptofail {
        rc: i32,
    },
    /// A guard byte around the message or digest changed (OVERFLOW); a table or chain job
    /// names which.
    Overflow {
        #[serde(default)]
        buffer: Option<String>,
    },
    /// A framed table's first change on one side of its buffers (`table::framed`): the record,
    /// the buffer (`message` or `digest`), the byte's offset from the buffer's start, what the
    /// record laid there and what was there after the call.
    Wrote {
        record: u64,
        buffer: String,
        offset: i64,
        expected: u8,
        found: u8,
    },
    /// The message was not the one prepared after a phase: the candidate wrote into its
    /// `const` input (TAMPERED), first at this offset.
    InputChanged {
        offset: u64,
    },
    /// Instruction pointers the sampled profile's event caught in a trial (`--sample-period`),
    /// with the candidate library's load address.
    IpSamples {
        event: String,
        base: u64,
        ips: Vec<u64>,
        lost: u64,
    },
    /// `--hw-instructions`: the hardware `instructions:u` event did not open or did not
    /// count, and the worker measured nothing (no other counter stands in for it).
    InstructionsUnavailable {
        refusal: PerfRefusal,
    },
    /// The loop counter's reading of a trial was no figure (`counter::perf_attr`): it
    /// counted zero, or ran for less time than it was enabled.
    CounterFault {
        fault: CounterFaultKind,
        enabled_ns: u64,
        running_ns: u64,
    },
    Done {
        peak_rss_bytes: u64,
    },
    /// The worker could not measure.
    Error {
        stage: LoadStage,
        /// The dynamic linker's or the worker's own words.
        detail: String,
    },
}

/// A counter fault as the worker names it (`perf_attr::CounterFault::name`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CounterFaultKind {
    Unread,
    Zero,
    Multiplexed,
}

impl CounterFaultKind {
    /// What the job's failure says of it.
    pub(crate) fn explain(self, enabled_ns: u64, running_ns: u64) -> String {
        match self {
            CounterFaultKind::Unread => {
                "the perf_event cycle counter could not be read after a trial".to_string()
            }
            CounterFaultKind::Zero => {
                "the perf_event cycle counter counted 0 over a trial of calls".to_string()
            }
            CounterFaultKind::Multiplexed => format!(
                "the perf_event cycle counter ran {running_ns} ns of the {enabled_ns} ns it was \
                 enabled (multiplexed with other events, or on a CPU of another core type): \
                 its count is not the trial's"
            ),
        }
    }
}

/// Why the worker did not use perf_event cycles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PerfRefusal {
    /// `perf_event_open` failed with this errno.
    Errno(i32),
    /// It opened but did not count.
    NoCount,
}

impl PerfRefusal {
    /// The engine's account of it (the same text the host check gives).
    pub(crate) fn explain(self) -> String {
        self.cause().to_string()
    }

    /// The job's failure when it is hardware instructions that did not open.
    pub(crate) fn explain_instructions(self) -> String {
        crate::counter::NoHardwareInstructions(self.cause()).to_string()
    }

    fn cause(self) -> CounterError {
        match self {
            PerfRefusal::Errno(e) => CounterError::from_open_errno(nix::errno::Errno::from_raw(e)),
            PerfRefusal::NoCount => CounterError::NoCount,
        }
    }
}

/// Where a worker stopped before measuring.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum LoadStage {
    /// `dlopen` failed.
    Load,
    /// The ABI's entry point is missing.
    Symbol,
    /// The buffers could not be allocated.
    Memory,
    /// No perf_event sampling event opens (the sampled profile).
    Sampler,
    /// The fresh-message probe's seed did not arrive after `ready`.
    Go,
    /// A table job's table is not what its words say (`measure::table`).
    Table,
}

#[cfg(test)]
mod tests;
