//! The clock check on witness pairs from `tests/fixtures/clock/trial-pairs.toml`: every
//! fixture trial's verdict must follow from its pair and its host's probe, and the band must be
//! the harness's 5 % unless the probe's own spread is wider.

use std::path::Path;

use serde::Deserialize;

use super::*;

#[derive(Deserialize)]
struct Fixture {
    host: Vec<Host>,
    trial: Vec<FixtureTrial>,
}

#[derive(Deserialize)]
struct Host {
    name: String,
    fixed_clock_hz: f64,
    probe_min_hz: f64,
    probe_max_hz: f64,
    probe_median_hz: f64,
    reference_hz: f64,
}

#[derive(Deserialize)]
struct FixtureTrial {
    host: String,
    what: String,
    kind: WitnessKind,
    core: u64,
    reference: u64,
    seconds: f64,
    expect: String,
}

fn fixture() -> Fixture {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/clock/trial-pairs.toml");
    toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn recorded_pairs_give_their_verdicts() {
    let f = fixture();
    assert!(f.trial.len() >= 8);
    for t in &f.trial {
        let h = f.host.iter().find(|h| h.name == t.host).unwrap();
        let spread = (h.probe_max_hz - h.probe_min_hz) / h.probe_median_hz;
        let band = ClockBand::new(h.fixed_clock_hz, Some(spread));
        let pair = ClockPair {
            kind: t.kind,
            core: t.core,
            reference: t.reference,
        };
        let hz = effective_hz(&pair, Some(h.reference_hz), t.seconds).unwrap();
        let got = match drift(hz, &band) {
            None => "steady",
            Some(ClockDrift::Slow) => "slow",
            Some(ClockDrift::Fast) => "fast",
        };
        assert_eq!(
            got,
            t.expect,
            "{}: {} at {:.3} GHz",
            t.host,
            t.what,
            hz / 1e9
        );
        assert_eq!(drift_reason(hz, &band).is_some(), got != "steady");
    }
}

#[test]
fn the_band_is_five_percent_or_the_probes_spread() {
    let tight = ClockBand::new(2.1e9, Some(0.0002));
    assert!(
        (tight.low_hz - 0.95 * 2.1e9).abs() < 1.0 && (tight.high_hz - 1.05 * 2.1e9).abs() < 1.0
    );
    let wide = ClockBand::new(2.0e9, Some(0.10));
    assert!((wide.low_hz - 1.8e9).abs() < 1.0 && (wide.high_hz - 2.2e9).abs() < 1.0);
    assert_eq!(
        ClockBand::new(2.0e9, None),
        ClockBand::new(2.0e9, Some(f64::NAN))
    );
}

#[test]
fn effective_clock_needs_counts_and_a_rate() {
    let pair = |kind, core, reference| ClockPair {
        kind,
        core,
        reference,
    };
    let perf = WitnessKind::PerfAndReference;
    assert_eq!(effective_hz(&pair(perf, 0, 100), Some(1e9), 1.0), None);
    // Without the probed reference rate, perf cycles over the trial's seconds.
    assert_eq!(
        effective_hz(&pair(perf, 2_000, 1_000), None, 1e-6),
        Some(2e9)
    );
    assert_eq!(
        effective_hz(&pair(WitnessKind::AperfMperf, 2, 1), None, 1.0),
        None
    );
    assert!(
        ClockVerification::Unavailable {
            reason: "no PMU".into()
        }
        .notice()
        .unwrap()
        .contains("no PMU")
    );
    assert_eq!(ClockVerification::PerTrial { witness: perf }.notice(), None);
}
