//! The protocol lines a trial sends the engine (`measure::trial` reads them): `ready`, each
//! trial's figures, a probe's digests, and the faults and errors that end a job with their
//! exit code. Writing only; what goes into a line is decided by the trial.

use core::ffi::c_int;

use super::{EXIT_ERROR, EXIT_FAULT};
use crate::counter::{self, LoopCounter, PerfRefusal};
use crate::json::{Channel, Line};
use crate::library::{self, MetaBlock};
use crate::perf_attr::CounterFault;
use crate::sandbox::InForce;
use crate::text::Lossy;

/// Lets a message be finished by a closure in the middle of a chain.
trait Pipe: Sized {
    fn pipe(self, f: impl FnOnce(Self) -> Self) -> Self {
        f(self)
    }
}
impl Pipe for Line {}

/// One trial's figures, and the digest its loop's last call wrote.
pub struct TrialFigures<'a> {
    pub iterations: u64,
    pub nanoseconds: u64,
    pub cycles: u64,
    pub waited_ns: Option<u64>,
    pub clock: Option<(&'a str, u64, u64)>,
    pub digest: &'a [u8],
}

pub fn send_trial(ch: &Channel, t: TrialFigures<'_>) {
    ch.message("trial")
        .number("measurements", t.iterations)
        .number("nanoseconds", t.nanoseconds)
        .number("cycles", t.cycles)
        .optional("waited_ns", t.waited_ns)
        .pipe(|line| match t.clock {
            Some((kind, core, reference)) => line.object("clock", |o| {
                o.name("kind", kind)
                    .number("core", core)
                    .number("reference", reference)
            }),
            None => line.null("clock"),
        })
        .hex("digest", t.digest)
        .send();
}

pub fn send_ready(
    ch: &Channel,
    lib: &library::Library,
    baseline_rss_bytes: u64,
    loop_counter: &LoopCounter,
    refusal: Option<PerfRefusal>,
    overhead: Option<u64>,
    in_force: InForce,
) {
    ch.message("ready")
        .pipe(|line| match &lib.meta {
            MetaBlock::Absent => line.null("meta_block"),
            MetaBlock::Null => line.hex("meta_block", &[]),
            MetaBlock::Bytes(bytes, len) => line.hex("meta_block", &bytes[..*len]),
        })
        .pipe(|line| match lib.build_flags {
            Some(flags) => line.hex("build_flags", flags),
            None => line.null("build_flags"),
        })
        .number("baseline_rss_bytes", baseline_rss_bytes)
        .name("cycle_source", loop_counter.source().name())
        .pipe(|line| match refusal {
            None => line.null("perf_unavailable"),
            Some(PerfRefusal::Errno(e)) => {
                line.object("perf_unavailable", |o| o.number("errno", e))
            }
            Some(PerfRefusal::NoCount) => line.name("perf_unavailable", "no_count"),
        })
        .pipe(|line| match (overhead, counter::REFERENCE_SOURCE) {
            (Some(_), Some(source)) => line.name("per_call_source", source.name()),
            _ => line.null("per_call_source"),
        })
        .number("timer_overhead_ticks", overhead.unwrap_or(0))
        .object("sandbox", |o| {
            o.boolean("landlock", in_force.landlock)
                .boolean("seccomp", in_force.seccomp)
        })
        .send();
}

/// Every digest of a probe trial, in order, whole digests of at most `BYTES_PER_LINE` bytes a
/// line (the engine takes lines of up to 1 MiB, and hex doubles them).
pub(super) fn send_digests(ch: &Channel, all: &[u8], digest_len: usize) {
    const BYTES_PER_LINE: usize = 128 << 10;
    let per_line = (BYTES_PER_LINE / digest_len.max(1)).max(1) * digest_len.max(1);
    for chunk in all.chunks(per_line) {
        ch.message("digests").hex("hex", chunk).send();
    }
}

/// A guard byte changed: the candidate wrote outside its buffers.
pub fn send_overflow(ch: &Channel) {
    ch.message("overflow").send();
}

/// A guard byte of `buffer` (`message`, `digest`) changed.
pub(crate) fn send_overflow_of(ch: &Channel, buffer: &str) {
    ch.message("overflow").name("buffer", buffer).send();
}

/// The message is not the one the worker prepared: the candidate wrote into its input.
pub fn send_input_changed(ch: &Channel, offset: u64) {
    ch.message("input_changed").number("offset", offset).send();
}

/// `--hw-instructions` and the event does not open or count: the worker measures nothing.
pub(crate) fn send_instructions_unavailable(ch: &Channel, why: PerfRefusal) -> c_int {
    ch.message("instructions_unavailable")
        .pipe(|line| match why {
            PerfRefusal::Errno(e) => line.object("refusal", |o| o.number("errno", e)),
            PerfRefusal::NoCount => line.name("refusal", "no_count"),
        })
        .send();
    EXIT_FAULT
}

/// The loop counter's reading is no figure (zero, multiplexed, unread): the job ends with
/// it named.
pub fn send_counter_fault(ch: &Channel, fault: CounterFault) -> c_int {
    let (enabled, running) = match fault {
        CounterFault::Multiplexed {
            enabled_ns,
            running_ns,
        } => (enabled_ns, running_ns),
        _ => (0, 0),
    };
    ch.message("counter_fault")
        .name("fault", fault.name())
        .number("enabled_ns", enabled)
        .number("running_ns", running)
        .send();
    EXIT_FAULT
}

/// The candidate returned non-zero.
pub fn send_cryptofail(ch: &Channel, rc: c_int) {
    ch.message("cryptofail").number("rc", rc).send();
}

/// Reports that the process could not measure.
pub fn error(ch: &Channel, stage: &str, detail: &[u8]) -> c_int {
    ch.message("error")
        .name("stage", stage)
        .text("detail", Lossy(detail))
        .send();
    EXIT_ERROR
}
