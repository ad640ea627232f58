//! Proof that the timed calls did the work (the checks after the trials, beside the KAT gate):
//! the digest each trial's last call wrote must be the one a separate worker computed before
//! timing (`reference`), no trial may claim more bytes than a core can load (`floor`), and the
//! guide's figure on the harness's message may not be far below what the same library takes
//! on fresh messages (`probe_refusal`). The worker checks its message itself after every
//! phase (`cyclescope_worker::proof`). Pure judgements on what the workers reported; the campaign
//! runs the workers and decides what a refusal stops.

pub mod floor;
pub(crate) mod fresh;
pub mod reference;
pub(crate) mod twin;
pub(crate) mod uninterrupted;

use super::stats::Trial;
use crate::format;
use crate::vocabulary::{FailureKind, JobFailure};

/// The guide's figure is refused when its fastest trial is this many times faster per call
/// than the probe's fastest: a busy host only ever makes a trial slower, so each side's fastest
/// trial is the nearest to its cost, and one disturbed guide trial (seen: 40 and 430 cycles at
/// 64 B, a library that skips the work) cannot hide the difference. Fresh messages cost an
/// honest library at most some cache misses on top of the same work; four, because on a shared
/// VM the trials of one honest library were seen to swing by up to about three times
/// (pseudoXOF-512 at 32 B: 770 to 2400 TSC cycles per call, one process), and a refusal is
/// kept only when a second probe process confirms it (campaign::measure::proof).
pub const PROBE_FACTOR: f64 = 4.0;

/// Trials of one fresh-message probe process beside each job's guide trials, their warm-ups,
/// and the most probe processes the turns take (each after the first confirms a refusal or
/// settles a pass, on the fastest of them). Ten, because the host's spells slow whole
/// processes: on this 2-core VM the same SM3 calls in one process took 610 ns a call in most
/// 5 ms windows and up to 940 ns in spells of 5 to 50 ms (`bench/host_spells.py`), CPU time
/// included, which is more than the twin's line. With three pairs in turns, three probes in
/// spells beside one calm twin refused honest libraries about once a CI run (pseudoXOF-256 at
/// 128 B: 890 ns fresh, 634 ns twin); laid over 40 000 such windows, turns of three pairs
/// refused 22 times, six twins between seven probes never. The other way, twins in one long
/// spell beside a calm probe let a caching gain of 1.6 pass: over a quieter record 9 times in
/// 39 982 with seven probes, once with ten (`bench/twin_turns.py`, `docs/trust.md`). The turns
/// go on only while the probe is refused or its pass is not settled (`twin::settled`), which
/// an honest library's first pair mostly is.
pub(crate) const PROBE_TRIALS: u32 = 1;
pub(crate) const PROBE_PROCESSES: u32 = 10;
pub(crate) const PROBE_WARMUPS: u64 = 1;

/// The guide's figure is refused when the fresh-message probe's calls took this many times
/// its fastest trial's time per call, by the kernel's account of the probe process's CPU time
/// from the moment the engine sent its seed to its trial line (`worker::go_line`). CPU time is
/// not what a busy host inflates (a preempted process is not charged while it waits), nothing
/// in the worker can write it, and the threads a candidate starts are charged to it. The
/// window also holds the probe's one warm-up, XORing its messages' heads and folding its
/// digests — a few cycles a message. Fresh messages cost an honest library more than the
/// guide's one hot message, and more still while the other core is busy: on this 2-core VM
/// honest bundled libraries were seen at 1.54× (pseudoXOF-256, 64 KiB), 1.66× (pseudohash-512,
/// 64 KiB, a default run) and 1.74× (pseudoXOF-256, 1 KiB, CPU 0 of a CI run, fastest of three
/// probe processes). A factor of 1.5 refused those; two refuses a library that caches or
/// recognises the timing message by two or more. Most of that excess is likely not the fresh
/// messages but the host: the probe process and the guide's fastest trial run at different
/// moments, and between them the host's other tenants can slow SM3-like code by up to about
/// 1.5× for whole windows of 100 ms, preemption-free calls included (`bench/host_spells.py`;
/// what `report::compare::noise::HOST_RUN_STRAY` allows between two runs). The probe's twin
/// (`twin`), timed in turns with it on the timing message, shares those spells, and holds a
/// caching gain to 1.35×.
pub const PROBE_CPU_FACTOR: f64 = 2.0;

/// The count-mode probe's factor: instruction counts are exact, and fresh messages do not
/// change an honest library's count, so a caching gain of 1.5× or more is refused.
pub const PROBE_COUNT_FACTOR: f64 = 1.5;

/// What the probe's loop itself may add to each call on top of the factor, where its cost
/// could not be measured (`loop_allowance_ns`), ns: stepping
/// through a 1 MiB pool of messages, copying each digest out into a buffer of its own, folding
/// the digests (every byte of it touched first inside the window) and the page faults of those
/// buffers. At 32 B an honest pseudoXOF-512 was seen at 538 ns a call on fresh messages
/// against 330 ns on the harness's one (+208 ns, fastest of three processes, with other tests
/// running); 30 ns refused it. With the allowance A and the loop's own cost O, an honest
/// library passes while O < G + A (G its cost a call), and a cache gain of 2× is still
/// refused while O ≥ A: the allowance stays below what the loop was seen to add.
pub const PROBE_CALL_ALLOWANCE_NS: f64 = 150.0;

/// The probe's loop is measured on its own (`TrialSpec::loop_only`: the same loop, messages
/// and digest width around a built-in function that reads one byte per cache line of each
/// message and writes the digest, in a process with no candidate) and allowed for this many
/// times over. A candidate's own code and tables compete with the loop's buffers for the
/// caches, which the loop-only process does not show: an honest pseudoXOF-512 at 32 B was once
/// seen 208 ns a call over its guide figure of 330 ns (fastest of three probe processes, other
/// tests running), where the loop alone costs 20 to 30 ns; a margin of three keeps it 50 ns
/// inside the line. A cache gain of about 3.5× at 64 B (`proof_cache_modest`: 77 ns a cached
/// call, 265 ns a fresh one, a loop of 21 to 23 ns) stays some 85 ns past it.
pub const PROBE_LOOP_MARGIN: f64 = 3.0;

/// What the probe's rule allows for the loop's own cost a call, ns: `PROBE_LOOP_MARGIN` times
/// the loop-only process's, or the fixed `PROBE_CALL_ALLOWANCE_NS` where none was measured.
pub(crate) fn loop_allowance_ns(loop_ns: Option<f64>) -> f64 {
    loop_ns.map_or(PROBE_CALL_ALLOWANCE_NS, |ns| PROBE_LOOP_MARGIN * ns)
}

/// What the fresh-message probe measured, as records keep it: its CPU time per call (the
/// kernel's clock on the probe process, from its seed to its trial line) beside the guide's
/// fastest trial's time per call, and the rule's factor.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ProbeFigure {
    pub cpu_ns_per_call: f64,
    pub calls: u64,
    pub guide_fastest_ns_per_call: f64,
    /// `cpu_ns_per_call / guide_fastest_ns_per_call`.
    pub ratio: f64,
    pub factor: f64,
    /// The probe's loop on its own, CPU time per call in a process with no candidate
    /// (`TrialSpec::loop_only`); present when the rule needed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_ns_per_call: Option<f64>,
    /// The probe's twin, CPU time per call: the same process and loop on the timing message
    /// at one address, timed beside the probe (`twin`); the fastest of its processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub twin_ns_per_call: Option<f64>,
}

impl ProbeFigure {
    /// The figure of a probe that took `probe_cpu` for `probe_calls` calls, against the guide's
    /// fastest trial. A trial's time per call counts only the time it ran: the nanoseconds it
    /// waited for the CPU (`waits`, per trial where known) are taken off first. On a busy
    /// CPU every guide trial can wait most of its time (89 % was seen in CI), which made the
    /// fastest claim ten times the calls' cost and let a library that caches the timing
    /// message pass. The wait is the worker's report: one that says more than it waited
    /// only lowers the line its own probe must stay under.
    pub(crate) fn new(
        guide: &[Trial],
        waits: &[Option<u64>],
        probe_cpu: std::time::Duration,
        probe_calls: u64,
    ) -> Self {
        let guide_fastest_ns_per_call = guide
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let ns = t.seconds * 1e9;
                let waited = waits.get(i).copied().flatten().map_or(0.0, |w| w as f64);
                let ran = if waited < ns { ns - waited } else { ns };
                ran / t.measurements.max(1) as f64
            })
            .fold(f64::NAN, f64::min);
        let cpu_ns_per_call = probe_cpu.as_secs_f64() * 1e9 / probe_calls.max(1) as f64;
        Self {
            cpu_ns_per_call,
            calls: probe_calls,
            guide_fastest_ns_per_call,
            ratio: cpu_ns_per_call / guide_fastest_ns_per_call.max(f64::MIN_POSITIVE),
            factor: PROBE_CPU_FACTOR,
            loop_ns_per_call: None,
            twin_ns_per_call: None,
        }
    }
}

/// PROBEFAIL when the probe's CPU time per call is `PROBE_CPU_FACTOR` times (or more) the
/// guide's fastest trial's claimed time per call, plus `allowance_ns` for the loop's own cost
/// (`loop_allowance_ns`).
pub(crate) fn probe_cpu_refusal(
    figure: &ProbeFigure,
    input_bytes: u64,
    allowance_ns: f64,
) -> Result<(), JobFailure> {
    let fastest_guide_ns = figure.guide_fastest_ns_per_call;
    let probe_ns = figure.cpu_ns_per_call;
    let probe_calls = figure.calls;
    // NaN (no guide trial) compares false: no refusal.
    let marked = fastest_guide_ns * PROBE_CPU_FACTOR + allowance_ns <= probe_ns;
    if !marked {
        return Ok(());
    }
    Err(JobFailure::new(
        FailureKind::Probefail,
        format!(
            "on {input_bytes}-byte fresh messages each call took {} ns of CPU time by the kernel's \
             clock ({probe_calls} calls in a process of their own), but the guide's fastest trial \
             claims {} ns per call ({:.1}× less; {} ns a call allowed for the probe's own \
             loop): the library caches or recognises the timing message, or its trial reports \
             are not its own",
            format::int(Some(probe_ns)),
            format::int(Some(fastest_guide_ns)),
            probe_ns / fastest_guide_ns.max(f64::MIN_POSITIVE),
            format::int(Some(allowance_ns)),
        ),
    ))
}

/// PROBEFAIL when the instructions a call executes on fresh messages are `PROBE_COUNT_FACTOR`
/// times (or more) those of a call on the harness's message: exact counts, no allowance.
pub(crate) fn probe_count_refusal(
    guide: f64,
    fresh: f64,
    input_bytes: u64,
) -> Result<(), JobFailure> {
    if fresh < guide * PROBE_COUNT_FACTOR {
        return Ok(());
    }
    Err(JobFailure::new(
        FailureKind::Probefail,
        format!(
            "on {input_bytes}-byte fresh messages each call executed {} instructions, on the \
             harness's message {} ({:.1}× fewer): the library caches or recognises the timing \
             message, so its count is not the cost of hashing a message",
            format::int(Some(fresh)),
            format::int(Some(guide)),
            fresh / guide.max(f64::MIN_POSITIVE)
        ),
    ))
}

/// CRYPTOFAIL when a trial's last digest is not `expected` (the first differing byte named).
pub(crate) fn check_digests(
    expected: &[u8],
    digests: &[String],
    input_bytes: u64,
) -> Result<(), JobFailure> {
    for (i, got) in digests.iter().enumerate() {
        let got = hex::decode(got).unwrap_or_default();
        if got == expected {
            continue;
        }
        let at = got
            .iter()
            .zip(expected)
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(expected.len()));
        return Err(JobFailure::new(
            FailureKind::Cryptofail,
            format!(
                "after trial {} the digest of the {input_bytes}-byte timed message differs from the \
                 one a separate worker computed before timing, first at byte {at} (the library \
                 answered the timing loop with a digest it did not compute)",
                i + 1
            ),
        ));
    }
    Ok(())
}

/// Mean cycles per call of one trial.
fn per_call(t: &Trial) -> f64 {
    t.cycles as f64 / t.measurements.max(1) as f64
}

/// PROBEFAIL when the guide's fastest trial is markedly faster than the probe's fastest
/// (`PROBE_FACTOR`); the detail gives the probe's figure in place of the guide's.
pub(crate) fn probe_refusal(
    guide: &[Trial],
    probe: &[Trial],
    input_bytes: u64,
) -> Result<(), JobFailure> {
    let fastest_guide = guide.iter().map(per_call).fold(f64::NAN, f64::min);
    let fastest_probe = probe.iter().map(per_call).fold(f64::NAN, f64::min);
    // NaN (no trials on a side) compares false: no refusal.
    let marked = fastest_guide * PROBE_FACTOR < fastest_probe;
    if !marked {
        return Ok(());
    }
    let calls: u64 = probe.iter().map(|t| t.measurements).sum();
    let probe_mean = probe.iter().map(|t| t.cycles).sum::<u64>() as f64 / calls.max(1) as f64;
    let per_byte = if input_bytes > 0 {
        format!(
            " ({} cycles/byte)",
            format::cycles_per_byte(probe_mean, input_bytes)
        )
    } else {
        String::new()
    };
    Err(JobFailure::new(
        FailureKind::Probefail,
        format!(
            "on the harness's message the calls took as little as {} cycles each, on fresh messages of \
             the same length at least {} ({:.1}× more): the library recognises or caches the timing \
             message; the probe's figure is {} cycles/call{per_byte}, {} fresh messages in {} trials",
            format::int(Some(fastest_guide)),
            format::int(Some(fastest_probe)),
            fastest_probe / fastest_guide.max(f64::MIN_POSITIVE),
            format::int(Some(probe_mean)),
            calls,
            probe.len()
        ),
    ))
}

#[cfg(test)]
mod tests;
