use super::*;
use crate::counter::CycleSource;
use crate::measure::robust::{Robust, STATISTIC};

/// A figure of five trials: its mean (±1 % CI), maybe doubtful, maybe with a robust figure
/// of ±`robust_ci` relative half-width.
fn fig(mean: f64, doubt: Option<&str>, robust: Option<(f64, f64)>) -> Figure {
    Figure {
        mean_cycles: mean,
        ci95_half_width: Some(0.01 * mean),
        process_sd_relative: Some(0.01 * 5f64.sqrt() / 2.776),
        processes: 5,
        doubt: doubt.map(Into::into),
        source: Some(CycleSource::Tsc),
        robust: robust.map(|(m, ci)| Robust {
            mean_cycles: m,
            ci95_low: Some(m * (1.0 - ci)),
            ci95_high: Some(m * (1.0 + ci)),
            statistic: STATISTIC.into(),
            trials: 5,
            calls: 5000,
            excluded: 50,
        }),
    }
}

const DISTURBED: &str = "5 kept trial(s) disturbed";

#[test]
fn a_doubtful_mean_is_judged_on_both_uninterrupted_call_means() {
    // FEILIAN512 at 32 B, quiet against a busy loop on its CPU: the mean doubled, the calls
    // did not move.
    let quiet = fig(1964.0, None, Some((1638.0, 0.01)));
    let loaded = fig(3791.0, Some(DISTURBED), Some((1664.0, 0.01)));
    let (v, w) = judge_with(&quiet, &loaded, None);
    assert_eq!(v, Verdict::WithinNoise);
    let (w, on) = w.unwrap();
    assert_eq!(on, JudgedOn::RobustMean);
    assert!((w.ratio() - 1664.0 / 1638.0).abs() < 1e-9, "{w:?}");
    // A build 4.9× slower is called so, loaded on either side.
    let slow = fig(
        2.0 * 4.9 * 1964.0,
        Some(DISTURBED),
        Some((4.9 * 1638.0, 0.01)),
    );
    assert_eq!(judge(&quiet, &slow), Verdict::Slower);
    assert_eq!(judge(&slow, &loaded), Verdict::Faster);
    // Two runs' robust figures stray with the host whatever their trials say
    // (`noise::HOST_RUN_STRAY`): 1.46× apart with ±0.2 % intervals (as a CI run saw) is no
    // difference, 2× is.
    let tight = |m| fig(2.0 * m, Some(DISTURBED), Some((m, 0.002)));
    assert_eq!(
        judge(&tight(1638.0), &tight(1.46 * 1638.0)),
        Verdict::WithinNoise
    );
    assert_eq!(judge(&tight(1638.0), &tight(2.0 * 1638.0)), Verdict::Slower);
}

#[test]
fn without_a_sound_robust_figure_on_both_sides_a_doubt_stays_a_doubt() {
    let quiet = fig(1964.0, None, Some((1638.0, 0.01)));
    for (b, why) in [
        (fig(3791.0, Some(DISTURBED), None), "no robust figure"),
        (
            fig(3791.0, Some(DISTURBED), Some((1664.0, 0.3))),
            "not tight enough",
        ),
        (
            Figure {
                source: Some(CycleSource::PerfUserCycles),
                ..fig(3791.0, Some(DISTURBED), Some((1664.0, 0.01)))
            },
            "two counters",
        ),
    ] {
        let Verdict::Doubtful(Side::B, text) = judge(&quiet, &b) else {
            panic!("{why}: {:?}", judge(&quiet, &b))
        };
        assert!(text.starts_with(DISTURBED) && text.contains(why), "{text}");
    }
    // Clean means are judged on the means, whatever their robust figures say.
    let clean = fig(1000.0, None, Some((2000.0, 0.01)));
    let (_, w) = judge_with(&clean, &fig(1001.0, None, Some((900.0, 0.01))), None);
    assert_eq!(w.unwrap().1, JudgedOn::MeanCycles);
}
