//! The fresh-message probe's twin: a process like the probe's in every way the candidate can
//! see but one, its messages. The same program, job words, seeds, go line, loop, calls and
//! digest copies; but every call hashes the harness's timing message, at one address, as the
//! guide's trials do. Its CPU time per call, by the kernel's clock like the probe's, is what
//! the probe's calls cost where nothing is fresh. The two run one after the other, in turns,
//! so the host's spells (the other core's load, a slower clock for a while) fall on both
//! alike, which the guide's trials, timed seconds earlier, do not share; and both carry the
//! loop's own costs, so no allowance is needed for them. A library that caches or recognises
//! the timing message gains there and not on fresh messages: from 1.5× on it is refused.

use crate::format;
use crate::vocabulary::{FailureKind, JobFailure};

/// The probe's CPU time per call may not reach this many times its twin's (the fastest of
/// each, over the processes run in turns), plus an allowance for where a fresh message lies.
/// An honest library's cost does not depend on what the message holds, so the two differ only
/// by that: a fresh one is read from the pool (the caches' second or third level), the twin's
/// from the first. That difference is a few nanoseconds a call, which counts only for the
/// cheapest calls: a toy library of 21 ns a call read 1.39× (30 ns fresh). So a refusal on the
/// factor alone is judged again with the probe's loop measured on its own (`loop_ns`, which
/// holds those reads and more) allowed once. Measured on this 2-core VM over the bundled
/// libraries at 8 B to 64 KiB: see `docs/trust.md`. A caching gain of 1.5× reads 1.5 here.
pub const PROBE_TWIN_FACTOR: f64 = 1.35;

/// A pass that ends the turns early must sit this far inside the line: the probe's fastest
/// CPU time a call under this many times its twin's fastest. The host's spells cut both ways:
/// a twin in a spell of 1.1× beside a calm probe lets a caching gain of 1.6 under the line
/// (`proof_cache_slight` at 64 B: 297 ns fresh, its twin 204 ns in a spell where it takes 184
/// calm, 1.35 × 204 + 23 = 299), which one CI run in about ten saw. Honest libraries read 0.88 to
/// 1.12 over two default runs of three bundled instances on a quiet host (64 jobs), 1.17 and
/// 1.20 where a spell fell on a probe; a pass in between runs more turns, and the last probe
/// decides on the line. A caching gain of 1.6 ends the turns early only beside twins all at
/// least 1.33 times their calm cost, which `TWIN_CALM_FACTOR` then refuses.
pub const PROBE_TWIN_SETTLED_FACTOR: f64 = 1.2;

/// A twin a pass that ends the turns early may rest on: the fastest twin's CPU time a call at
/// most this many times the guide's fastest trial, plus `TWIN_CALM_NS`. Over a default run of
/// three bundled instances (32 jobs, 32 B to 64 KiB) honest twins read 1.01–1.10 times the
/// guide's fastest, 1.15 to 1.30 at 32 B (the loop's own 40–50 ns a call), and 1.31 to 1.53
/// where the host's spells fell on them. A library that caches the timing message is as cheap
/// in its guide trials as in a calm twin.
pub const TWIN_CALM_FACTOR: f64 = 1.15;

/// What `TWIN_CALM_FACTOR` allows on top, ns a call: the twin's loop (a read of each line
/// of the pool's message, the digest's copy) which the guide's trials do not run.
pub const TWIN_CALM_NS: f64 = 40.0;

/// Whether the probe's `figure` has a calm twin (`TWIN_CALM_FACTOR`): one a pass may rest on.
/// True where there is no twin or no guide figure to hold it against.
pub(crate) fn calm(figure: &super::ProbeFigure) -> bool {
    let guide = figure.guide_fastest_ns_per_call;
    match figure.twin_ns_per_call {
        Some(twin) if twin > 0.0 && guide > 0.0 => twin <= guide * TWIN_CALM_FACTOR + TWIN_CALM_NS,
        _ => true,
    }
}

/// Whether the probe's passing `figure` may end the turns: it sits inside
/// `PROBE_TWIN_SETTLED_FACTOR`, and its twin is calm. True where there is no twin.
pub(crate) fn settled(figure: &super::ProbeFigure) -> bool {
    match figure.twin_ns_per_call {
        Some(twin) if twin > 0.0 => {
            figure.cpu_ns_per_call < twin * PROBE_TWIN_SETTLED_FACTOR && calm(figure)
        }
        _ => true,
    }
}

/// PROBEFAIL when the probe's fastest CPU time per call is `PROBE_TWIN_FACTOR` times its
/// twin's fastest, plus `allowance_ns`, or more.
pub(crate) fn refusal(
    probe_ns: f64,
    twin_ns: f64,
    allowance_ns: f64,
    input_bytes: u64,
) -> Result<(), JobFailure> {
    // NaN (no figure on a side) compares false: no refusal.
    if !(twin_ns > 0.0 && probe_ns >= twin_ns * PROBE_TWIN_FACTOR + allowance_ns) {
        return Ok(());
    }
    Err(JobFailure::new(
        FailureKind::Probefail,
        format!(
            "on {input_bytes}-byte fresh messages each call took {} ns of CPU time by the \
             kernel's clock, {:.2}× the {} ns of the same calls on the timing message in a twin \
             process timed in turns with it (the line: {PROBE_TWIN_FACTOR}×, plus {} ns a call \
             for where a fresh message lies): the library caches or recognises the timing \
             message",
            format::int(Some(probe_ns)),
            probe_ns / twin_ns,
            format::int(Some(twin_ns)),
            format::int(Some(allowance_ns)),
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gain_of_one_and_a_half_is_refused_and_an_honest_spread_is_not() {
        assert!(refusal(1500.0, 1000.0, 0.0, 64).is_err());
        let f = refusal(1350.0, 1000.0, 0.0, 64).unwrap_err();
        assert_eq!(f.kind, FailureKind::Probefail);
        assert!(f.detail.contains("1.35×"), "{}", f.detail);
        assert!(refusal(1300.0, 1000.0, 0.0, 64).is_ok());
        // The cheapest calls: a fresh message's reads are allowed for.
        assert!(refusal(30.0, 21.0, 0.0, 32).is_err());
        assert!(refusal(30.0, 21.0, 15.0, 32).is_ok());
        assert!(refusal(274.0, 158.0, 21.0, 64).is_err());
        // No twin figure: nothing to judge.
        assert!(refusal(1500.0, f64::NAN, 0.0, 64).is_ok());
        assert!(refusal(1500.0, 0.0, 0.0, 64).is_ok());
    }

    #[test]
    fn a_pass_ends_the_turns_only_well_inside_the_line_beside_a_calm_twin() {
        let figure =
            |probe: f64, twin: Option<f64>, guide: f64| crate::measure::proof::ProbeFigure {
                cpu_ns_per_call: probe,
                calls: 1000,
                guide_fastest_ns_per_call: guide,
                ratio: probe / guide,
                factor: 2.0,
                loop_ns_per_call: None,
                twin_ns_per_call: twin,
            };
        // Honest, seen: 1.12 at 32 B with its twin 1.03 times the guide; 0.99 at 32 B with the
        // twin's loop 1.25 times; 1.00 at 64 KiB.
        assert!(settled(&figure(1507.0, Some(1342.0), 1307.0)));
        assert!(settled(&figure(202.0, Some(203.6), 184.4)));
        assert!(settled(&figure(345760.0, Some(346106.0), 330569.0)));
        // The CI run's escape: a caching gain of 1.6 beside a twin in a spell of 1.11.
        assert!(!settled(&figure(297.3, Some(204.5), 165.5)));
        // Inside the line, but its twin 1.5 times its cached guide figure: a spell.
        assert!(!settled(&figure(300.0, Some(276.0), 184.0)));
        assert!(!settled(&figure(17000.0, Some(17247.0), 10517.0)));
        // An honest probe in a spell: not settled, the turns go on.
        assert!(!settled(&figure(211000.0, Some(168800.0), 163900.0)));
        // Nothing to hold it against.
        assert!(settled(&figure(300.0, None, 184.0)));
        assert!(settled(&figure(300.0, Some(276.0), f64::NAN)));
        assert!(!settled(&figure(400.0, Some(276.0), f64::NAN)));
    }
}
