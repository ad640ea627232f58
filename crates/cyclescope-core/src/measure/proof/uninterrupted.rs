//! The uninterrupted-call figure (`measure::robust`) rests on per-call samples the worker
//! reports, which the candidate can write itself (it shares the worker's memory, the session
//! token and the protocol pipe). Before the engine believes it, the figure meets the same two
//! bounds from outside as the guide's trials: the physical floor (no more bytes a nanosecond
//! than a core can load) and the fresh-message probe's CPU time, which the kernel counts for
//! the probe process and nothing in a worker can write. The samples are converted to time with
//! the run's own trials: their nanoseconds over their loop-counter cycles.

use super::floor::Floor;
use super::{PROBE_FACTOR, ProbeFigure, loop_allowance_ns};
use crate::format;
use crate::measure::robust::Robust;
use crate::measure::stats::Trial;
use crate::vocabulary::{FailureKind, JobFailure};

/// Nanoseconds a loop-counter cycle lasted over `trials` (None when no trial counted cycles).
fn ns_per_cycle(trials: &[Trial]) -> Option<f64> {
    let counted = trials.iter().filter(|t| t.cycles > 0);
    let cycles: u64 = counted.clone().map(|t| t.cycles).sum();
    let ns: f64 = counted.map(|t| t.seconds * 1e9).sum();
    (cycles > 0 && ns > 0.0).then(|| ns / cycles as f64)
}

/// Why the uninterrupted-call figure `robust` of a job at `input_bytes` is not believed: more
/// bytes a nanosecond than `floor` allows (IMPLAUSIBLE), or a call `PROBE_FACTOR` (4) times
/// (plus the allowance for the probe loop's own cost, `loop_allowance_ns`) faster than the
/// fresh-message probe's CPU time says a call costs (PROBEFAIL). Four, not the guide's 1.5:
/// the samples are warm calls stamped one by one after the loop, below the guide's own
/// per-call figure, while a probe of few long calls carries the first touch of its fresh
/// messages — an honest library at 2 MiB read 559 µs a sample against 1.38 ms for the probe's
/// one call (2.5×). A forged figure is far below either: 1 ns against 276 ns at 64 B.
pub(crate) fn refusal(
    robust: &Robust,
    trials: &[Trial],
    probe: Option<&ProbeFigure>,
    floor: &Floor,
    input_bytes: u64,
) -> Option<JobFailure> {
    let claimed_ns = robust.mean_cycles * ns_per_cycle(trials)?;
    let per_ns = input_bytes as f64 / claimed_ns.max(f64::MIN_POSITIVE);
    if input_bytes > 0 && per_ns > floor.bytes_per_ns() {
        return Some(JobFailure::new(
            FailureKind::Implausible,
            format!(
                "the uninterrupted calls' per-call samples claim {per_ns:.0} bytes per nanosecond, \
                 more than the {:.0} this CPU can load: the samples are not the library's own",
                floor.bytes_per_ns()
            ),
        ));
    }
    let probe = probe?;
    let allowance = loop_allowance_ns(probe.loop_ns_per_call);
    if claimed_ns * PROBE_FACTOR + allowance > probe.cpu_ns_per_call {
        return None;
    }
    Some(JobFailure::new(
        FailureKind::Probefail,
        format!(
            "on {input_bytes}-byte fresh messages each call took {} ns of CPU time by the kernel's \
             clock ({} calls in a process of their own), but the uninterrupted calls' per-call \
             samples claim {} ns per call ({:.1}× less): the samples are not the library's own",
            format::int(Some(probe.cpu_ns_per_call)),
            probe.calls,
            format::int(Some(claimed_ns)),
            probe.cpu_ns_per_call / claimed_ns.max(f64::MIN_POSITIVE),
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn robust(mean_cycles: f64) -> Robust {
        Robust {
            mean_cycles,
            ci95_low: None,
            ci95_high: None,
            statistic: crate::measure::robust::STATISTIC.to_string(),
            trials: 2,
            calls: 100,
            excluded: 0,
        }
    }

    /// Two trials of 1000 calls at 2 cycles a nanosecond, 3000 cycles a call (1500 ns).
    fn trials() -> Vec<Trial> {
        vec![
            Trial {
                measurements: 1000,
                seconds: 1.5e-3,
                cycles: 3_000_000,
            };
            2
        ]
    }

    fn probe(cpu_ns_per_call: f64) -> ProbeFigure {
        ProbeFigure {
            cpu_ns_per_call,
            calls: 1024,
            guide_fastest_ns_per_call: 1500.0,
            ratio: cpu_ns_per_call / 1500.0,
            factor: crate::measure::proof::PROBE_CPU_FACTOR,
            loop_ns_per_call: None,
            twin_ns_per_call: None,
        }
    }

    fn floor() -> Floor {
        Floor::of_this_host(Some(2e9))
    }

    #[test]
    fn honest_samples_near_the_guide_pass_both_lines() {
        // 2900 cycles = 1450 ns against a probe of 1600 ns a call.
        assert_eq!(
            refusal(
                &robust(2900.0),
                &trials(),
                Some(&probe(1600.0)),
                &floor(),
                1024
            ),
            None
        );
        // Without a probe only the floor applies.
        assert_eq!(
            refusal(&robust(2900.0), &trials(), None, &floor(), 1024),
            None
        );
    }

    #[test]
    fn samples_far_below_the_probes_cpu_time_are_probefail() {
        // 400 cycles = 200 ns; 200 × 4 + 150 = 950 ≤ 1600.
        let f = refusal(
            &robust(400.0),
            &trials(),
            Some(&probe(1600.0)),
            &floor(),
            1024,
        )
        .expect("refused");
        assert_eq!(f.kind, FailureKind::Probefail, "{f:?}");
        assert!(f.detail.contains("per-call samples claim 200 ns"), "{f:?}");
        // 800 cycles = 400 ns: 400 × 4 + 150 = 1750 > 1600, inside the line: kept.
        assert_eq!(
            refusal(
                &robust(800.0),
                &trials(),
                Some(&probe(1600.0)),
                &floor(),
                1024
            ),
            None
        );
    }

    #[test]
    fn warm_samples_of_a_long_message_against_a_probe_of_one_cold_call_are_kept() {
        // Seen on a loaded CI run, an honest library at 2 MiB: 559 µs a sample, 1.38 ms for
        // the probe's one call on a fresh message (2.5×).
        assert_eq!(
            refusal(
                &robust(2.0 * 558_700.0),
                &trials(),
                Some(&probe(1_380_000.0)),
                &floor(),
                2 << 20
            ),
            None
        );
    }

    #[test]
    fn samples_beyond_what_a_core_can_load_are_implausible() {
        // 2 cycles = 1 ns for 64 KiB.
        let f = refusal(&robust(2.0), &trials(), None, &floor(), 65536).expect("refused");
        assert_eq!(f.kind, FailureKind::Implausible, "{f:?}");
    }

    #[test]
    fn no_counted_trial_no_judgement() {
        let t = vec![Trial {
            measurements: 10,
            seconds: 1e-3,
            cycles: 0,
        }];
        assert_eq!(
            refusal(&robust(1.0), &t, Some(&probe(1600.0)), &floor(), 1024),
            None
        );
    }
}
