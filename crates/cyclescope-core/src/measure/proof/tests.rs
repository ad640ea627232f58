//! The judgements of `proof` on made-up trials: each refusal names its kind and evidence,
//! and figures an honest library gives pass.

use super::*;

fn trial(measurements: u64, seconds: f64, cycles: u64) -> Trial {
    Trial {
        measurements,
        seconds,
        cycles,
    }
}

#[test]
fn a_digest_unlike_the_reference_is_a_cryptofail_naming_trial_and_byte() {
    let expected = [1u8, 2, 3, 4];
    assert_eq!(
        check_digests(&expected, &["01020304".into(), "01020304".into()], 32),
        Ok(())
    );
    let f = check_digests(&expected, &["01020304".into(), "01020904".into()], 32).unwrap_err();
    assert_eq!(f.kind, FailureKind::Cryptofail);
    assert!(f.detail.contains("after trial 2"), "{}", f.detail);
    assert!(f.detail.contains("first at byte 2"), "{}", f.detail);
    let f = check_digests(&expected, &["zz".into()], 32).unwrap_err();
    assert!(f.detail.contains("first at byte 0"), "{}", f.detail);
}

#[test]
fn the_floor_refuses_more_bytes_than_a_core_can_load() {
    // 64 KiB in 14 cycles and 5 ns per call: the 11.8 TB/s.
    let fast = [trial(20_000, 20_000.0 * 5e-9, 20_000 * 14)];
    let f = floor::check(&fast, 65_536, true, &floor::Floor::ANY_CORE).unwrap_err();
    assert_eq!(f.kind, FailureKind::Implausible);
    assert!(f.detail.contains("bytes per core cycle"), "{}", f.detail);
    // With a reference counter the time bound refuses it.
    let f = floor::check(&fast, 65_536, false, &floor::Floor::ANY_CORE).unwrap_err();
    assert!(f.detail.contains("bytes per nanosecond"), "{}", f.detail);
    // SM3-like speed (about 10 cycles/byte at 3 GHz) passes both.
    let honest = [trial(100, 100.0 * 220e-6, 100 * 655_360)];
    assert_eq!(
        floor::check(&honest, 65_536, true, &floor::Floor::ANY_CORE),
        Ok(())
    );
    assert_eq!(
        floor::check(&honest, 65_536, false, &floor::Floor::ANY_CORE),
        Ok(())
    );
    // The empty message claims nothing.
    assert_eq!(
        floor::check(&[trial(10, 1e-9, 0)], 0, true, &floor::Floor::ANY_CORE),
        Ok(())
    );
    assert_eq!(
        floor::MAX_BYTES_PER_NS,
        floor::MAX_BYTES_PER_CORE_CYCLE * floor::MAX_CORE_CLOCK_HZ / 1e9
    );
}

#[test]
fn a_guide_figure_far_below_the_probes_is_refused_with_the_probes_figure() {
    let guide = [trial(1000, 1e-3, 14_000), trial(1000, 1e-3, 15_000)];
    let probe = [trial(500, 1e-3, 1_000_000), trial(500, 1e-3, 1_100_000)];
    let f = probe_refusal(&guide, &probe, 32).unwrap_err();
    assert_eq!(f.kind, FailureKind::Probefail);
    assert!(
        f.detail.contains("probe's figure is 2100 cycles/call"),
        "{}",
        f.detail
    );
    assert!(f.detail.contains("(65.6 cycles/byte)"), "{}", f.detail);
    // The probe's fastest within the factor of the guide's fastest: no refusal.
    let near = [trial(500, 1e-3, 10_000_000), trial(500, 1e-3, 27_000)];
    assert_eq!(probe_refusal(&guide, &near, 32), Ok(()));
    let slower_guide = [trial(1000, 1e-3, 600_000)];
    assert_eq!(probe_refusal(&slower_guide, &probe, 32), Ok(()));
    // One disturbed guide trial (ten times its other) hides nothing: each side's fastest
    // trial is what it costs.
    let disturbed = [trial(1000, 1e-3, 40_000), trial(1000, 1e-3, 430_000)];
    let f = probe_refusal(&disturbed, &probe, 64).unwrap_err();
    assert!(
        f.detail.contains("as little as 40 cycles each"),
        "{}",
        f.detail
    );
    assert_eq!(probe_refusal(&guide, &[], 32), Ok(()));
}

#[test]
fn the_reference_message_is_the_one_the_trial_worker_prepares() {
    for len in [0u64, 1, 32, 257] {
        let mut worker = vec![0u8; len as usize];
        crate::companion::trial::fill_harness_message(&mut worker, len);
        assert_eq!(reference::harness_message(len), worker);
    }
}

#[test]
fn the_probes_cpu_time_is_judged_with_the_loops_measured_cost() {
    // The guide claims 77 ns a call (1000 calls in 77 µs); the probe took 265 ns of CPU time.
    let guide = [trial(1000, 77e-6, 200_000)];
    let figure = ProbeFigure::new(&guide, &[], std::time::Duration::from_nanos(265_000), 1000);
    // The fixed allowance puts the line at 154 + 150 ns: not refused.
    assert_eq!(loop_allowance_ns(None), PROBE_CALL_ALLOWANCE_NS);
    assert_eq!(
        probe_cpu_refusal(&figure, 64, loop_allowance_ns(None)),
        Ok(())
    );
    // A loop measured at 21 ns a call puts it at 154 + 63 ns: refused, the allowance named.
    assert_eq!(loop_allowance_ns(Some(21.0)), PROBE_LOOP_MARGIN * 21.0);
    let f = probe_cpu_refusal(&figure, 64, loop_allowance_ns(Some(21.0))).unwrap_err();
    assert_eq!(f.kind, FailureKind::Probefail);
    assert!(
        f.detail
            .contains("(3.4× less; 63 ns a call allowed for the probe's own loop)"),
        "{}",
        f.detail
    );
    // An honest library whose fresh calls cost the loop's allowance more is not refused.
    let honest = ProbeFigure::new(&guide, &[], std::time::Duration::from_nanos(170_000), 1000);
    assert_eq!(
        probe_cpu_refusal(&honest, 64, loop_allowance_ns(Some(21.0))),
        Ok(())
    );
}

#[test]
fn a_guide_trial_counts_only_the_time_it_ran_not_its_wait_for_the_cpu() {
    // Both trials waited 90 % of their time for the CPU: 770 ns a call by the clock, 77 ns of
    // it run. The probe's 265 ns of CPU time a call is refused against what the calls ran.
    let guide = [
        trial(1000, 770e-6, 2_000_000),
        trial(1000, 800e-6, 2_000_000),
    ];
    let waits = [Some(693_000), Some(720_000)];
    let allowance = loop_allowance_ns(Some(21.0));
    let cpu = std::time::Duration::from_nanos(265_000);
    let figure = ProbeFigure::new(&guide, &waits, cpu, 1000);
    assert!(
        (figure.guide_fastest_ns_per_call - 77.0).abs() < 1e-6,
        "{figure:?}"
    );
    let f = probe_cpu_refusal(&figure, 64, allowance).unwrap_err();
    assert_eq!(f.kind, FailureKind::Probefail);
    // Taken at the clock's word, the waits hid it.
    let blind = ProbeFigure::new(&guide, &[], cpu, 1000);
    assert_eq!(probe_cpu_refusal(&blind, 64, allowance), Ok(()));
    // A wait reported longer than the trial is not taken off.
    let odd = ProbeFigure::new(&guide[..1], &[Some(900_000)], cpu, 1000);
    assert!(
        (odd.guide_fastest_ns_per_call - 770.0).abs() < 1e-6,
        "{odd:?}"
    );
}
