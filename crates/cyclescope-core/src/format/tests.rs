use super::*;

#[test]
fn a_share_of_one_core_is_given_only_over_a_span_long_enough() {
    assert_eq!(
        core_share(0.009, 0.006),
        "9 ms of CPU time over 6 ms (too short a span for a share of one core)"
    );
    assert_eq!(
        core_share(0.04, 12.3),
        "40 ms of CPU time over 12.3 s (0.3 % of one core)"
    );
    assert!(core_share(0.02, 1.0).ends_with("(2.0 % of one core)"));
}

#[test]
fn intervals_show_two_digits_of_their_half_width() {
    assert_eq!(
        with_interval(1107.3, 1101.4, 1113.2),
        "1107.3 [1101.4, 1113.2]"
    );
    assert_eq!(with_interval(612.0, 540.0, 684.0), "612 [540, 684]");
    assert_eq!(
        with_interval(17.3021, 17.2512, 17.353),
        "17.302 [17.251, 17.353]"
    );
}

#[test]
fn int_matches_the_published_pages() {
    for (x, want) in [
        (2323.0, "2323"),
        (9043.0, "9043"),
        (17_900.0, "17.9 k"),
        (15_100.4, "15.1 k"),
        (1_130_000.0, "1.13 M"),
        (962_600.0, "962.6 k"),
        (2_010_000_000.0, "2.01 G"),
        (9999.5, "10000"),
    ] {
        assert_eq!(int(Some(x)), want, "{x}");
    }
    assert_eq!(int(None), "–");
}

#[test]
fn time_picks_the_first_unit_at_or_above_one() {
    for (s, want) in [
        (865e-9, "865 ns"),
        (6.63099948e-6, "6.63 µs"),
        (22e-6, "22 µs"),
        (2.68e-3, "2.68 ms"),
        (1.5, "1.5 s"),
        (0.5e-9, "0.5 ns"),
        (999.6e-9, "1e+03 ns"),
    ] {
        assert_eq!(time(s), want, "{s}");
    }
}

#[test]
fn pct_size_ratio() {
    assert_eq!(pct(Some(0.12)), "12%");
    assert_eq!(pct(Some(0.034)), "3.4%");
    assert_eq!(pct(None), "–");
    assert_eq!(size(4096), "4 KiB");
    assert_eq!(size(100), "100 B");
    assert_eq!(size(1500), "1500 B");
    assert_eq!(bytes(512), "512 B");
    assert_eq!(bytes(1_040_384), "1016 KiB");
    assert_eq!(bytes(4_009_112), "3.8 MiB");
    assert_eq!(ratio(Some(3.0), Some(2.0)), "1.50×");
    assert_eq!(ratio(Some(3.0), None), "(ratio –)");
    assert_eq!(cycles_per_byte(17_900.0, 1024), "17.5");
}

#[test]
fn clock_text_per_architecture() {
    let arm = ClockState {
        arch: "aarch64",
        governor: Some("performance"),
        min_khz: Some(2_707_200),
        max_khz: Some(2_707_200),
        boost: Some(false),
        smt: Some("notsupported"),
    };
    assert_eq!(
        clock(&arm),
        "fixed 2.71 GHz (governor performance, minimum = maximum), boost off, SMT none"
    );
    let unpinned = ClockState {
        min_khz: Some(300_000),
        ..arm
    };
    assert_eq!(
        clock(&unpinned),
        "max 2.71 GHz, governor performance, boost off, SMT none"
    );
    let x86 = ClockState {
        arch: "x86_64",
        governor: Some("performance"),
        min_khz: Some(800_000),
        max_khz: Some(2_100_000),
        boost: Some(false),
        smt: Some("off"),
    };
    assert_eq!(
        clock(&x86),
        "max 2.10 GHz, governor performance, turbo off, SMT off"
    );
    let turbo = ClockState {
        boost: Some(true),
        smt: Some("on"),
        ..x86
    };
    assert_eq!(
        clock(&turbo),
        "max 2.10 GHz, governor performance, turbo on, SMT on"
    );
    let vm = ClockState {
        arch: "x86_64",
        smt: Some("notsupported"),
        ..Default::default()
    };
    assert_eq!(
        clock(&vm),
        "no cpufreq (clock not reported), SMT notsupported"
    );
    assert_eq!(kib(1_437_696), "1404 KiB");
    assert_eq!(kib(1500), "1 KiB");
    assert_eq!(plain(0.5), "0.5");
    assert_eq!(plain(60.0), "60");
}

#[test]
fn a_cpu_wait_names_the_holder_escaped_and_its_end_the_time() {
    let t = |s| Some(std::time::Duration::from_secs(s));
    assert_eq!(
        cpu_waiting(1, "4242 (cyclescope run x, writing runs/a)", t(12)),
        "waiting for CPU 1 — held by PID 4242 (cyclescope run x, writing runs/a) for 12 s"
    );
    // The note is another process's text: its control bytes never reach the terminal.
    let shown = cpu_waiting(0, "(not yet named)\x1b[2J", None);
    assert!(shown.starts_with("waiting for CPU 0 — held by a process (not yet named)"));
    assert!(!shown.contains('\x1b'), "{shown}");
    assert_eq!(
        cpu_free_after(1, std::time::Duration::from_secs(14)),
        "CPU 1 free after 14 s"
    );
}
