//! Number formatting shared by the CLI, the TUI and the report pages (spec §6): one place, so
//! a figure reads the same everywhere and reproduces the published pages byte for byte. Never
//! formats anything but numbers and sizes.

/// The report's placeholder for a missing value (an en dash).
pub(crate) const MISSING: &str = "–";

/// `fmt_int`: `2323`, `17.9 k`, `1.13 M`, `2.01 G`; `–` for None.
pub fn int(x: Option<f64>) -> String {
    match x {
        None => MISSING.into(),
        Some(x) if x >= 1e9 => format!("{:.2} G", x / 1e9),
        Some(x) if x >= 1e6 => format!("{:.2} M", x / 1e6),
        Some(x) if x >= 1e4 => format!("{:.1} k", x / 1e3),
        Some(x) => py_round0(x),
    }
}

/// `fmt_time`: the first unit of s, ms, µs, ns in which the value is ≥ 1, with 3 significant
/// digits (`865 ns`, `6.63 µs`, `22 µs`, `2.68 ms`); below 1 ns → ns.
pub fn time(seconds: f64) -> String {
    for (factor, unit) in [(1.0, "s"), (1e3, "ms"), (1e6, "µs"), (1e9, "ns")] {
        if seconds * factor >= 1.0 {
            return format!("{} {unit}", g3(seconds * factor));
        }
    }
    format!("{} ns", g3(seconds * 1e9))
}

/// `pct`: `12%` from 0.095 up, else `3.4%`; `–` for None.
pub(crate) fn pct(x: Option<f64>) -> String {
    match x {
        None => MISSING.into(),
        Some(x) if x >= 0.095 => format!("{}%", py_round0(100.0 * x)),
        Some(x) => format!("{:.1}%", 100.0 * x),
    }
}

/// A profile's share of the cost, one decimal: `41.7 %` (0.417); `<0.1 %` above zero.
pub fn share(x: f64) -> String {
    if x > 0.0 && x < 0.0005 {
        return "<0.1 %".into();
    }
    format!("{:.1} %", 100.0 * x)
}

/// The shortest span over which a process's CPU time is given as a share of one core: over
/// less, the clock's and getrusage's granularity make the quotient meaningless (9 ms of CPU
/// over a few ms of wall time read `148.50 %`).
const CORE_SHARE_MIN_SPAN_S: f64 = 1.0;

/// CPU time used over a wall-clock span, with its share of one core when the span is long
/// enough to give one: `40 ms of CPU time over 12.3 s (0.3 % of one core)`.
pub fn core_share(cpu_s: f64, wall_s: f64) -> String {
    let used = format!("{} of CPU time over {}", time(cpu_s), time(wall_s));
    if wall_s >= CORE_SHARE_MIN_SPAN_S {
        format!("{used} ({} of one core)", share(cpu_s / wall_s))
    } else {
        format!("{used} (too short a span for a share of one core)")
    }
}

/// A clock rate in GHz with three decimals (`2.100`), as trial clocks are shown live.
pub fn ghz(hz: f64) -> String {
    format!("{:.3}", hz / 1e9)
}

/// An estimate with its 95 % confidence interval, `1107.3 [1101.4, 1113.2]`: decimals enough
/// to show the interval's half-width to two significant digits (at most four).
pub fn with_interval(value: f64, low: f64, high: f64) -> String {
    let half = ((high - low) / 2.0).abs();
    let decimals = if half > 0.0 && half.is_finite() {
        (1 - half.log10().floor() as i32).clamp(0, 4) as usize
    } else {
        1
    };
    format!("{value:.decimals$} [{low:.decimals$}, {high:.decimals$}]")
}

/// `size_text`: `4 KiB` when a whole number of KiB, else `100 B`.
pub fn size(bytes: u64) -> String {
    if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} B")
    }
}

/// Python's `f"{x:.3g}"`: three significant digits, trailing zeros removed, exponent form
/// when the rounded exponent is below -4 or at least 3.
pub fn g3(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    // `{:.2e}` rounds to 3 significant digits exactly as Python does; its exponent is the
    // one after rounding, which is what %g decides on.
    let sci = format!("{x:.2e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let e: i32 = exp.parse().unwrap_or(0);
    if !(-4..3).contains(&e) {
        let mant = trim_zeros(mant);
        return format!("{mant}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    }
    let decimals = (2 - e) as usize;
    trim_zeros(&format!("{x:.decimals$}")).to_string()
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// Python's `f"{x:.0f}"`: round half to even (Rust's `{:.0}` does the same on the binary value,
/// which is what Python formats too).
fn py_round0(x: f64) -> String {
    format!("{x:.0}")
}

/// A byte count for messages about space: `512 B`, `1016 KiB`, `3.8 MiB`, `12.5 GiB`.
pub(crate) fn bytes(n: u64) -> String {
    const KIB: f64 = 1024.0;
    match n {
        0..1024 => format!("{n} B"),
        1024..1_048_576 => format!("{:.0} KiB", n as f64 / KIB),
        1_048_576..1_073_741_824 => format!("{:.1} MiB", n as f64 / KIB / KIB),
        _ => format!("{:.1} GiB", n as f64 / KIB / KIB / KIB),
    }
}

/// Cycles per byte with one decimal, as the report's §4 table.
pub(crate) fn cycles_per_byte(mean_cycles: f64, bytes: u64) -> String {
    format!("{:.1}", mean_cycles / bytes as f64)
}

/// `own / base`, when both are there, the base is positive and the quotient finite.
pub fn ratio_value(own: Option<f64>, base: Option<f64>) -> Option<f64> {
    match (own, base) {
        (Some(v), Some(b)) if b > 0.0 && v.is_finite() => Some(v / b),
        _ => None,
    }
}

/// Ratio to a baseline: `1.52×`, or `(ratio –)` when unavailable.
pub fn ratio(value: Option<f64>, baseline: Option<f64>) -> String {
    match ratio_value(value, baseline) {
        Some(r) => format!("{r:.2}×"),
        None => format!("(ratio {MISSING})"),
    }
}

/// A wall-clock duration for progress lines: `42 s`, `3 min 05 s`, `2 h 07 min`.
pub fn duration(d: std::time::Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{:.0} s", d.as_secs_f64())
    } else if s < 3600 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{} h {:02} min", s / 3600, (s % 3600) / 60)
    }
}

/// A run queueing for a busy CPU, as both frontends show it: `waiting for CPU 1 — held by
/// PID 4242 (cyclescope run …, writing runs/a) for 12 s` (without the time when not known).
/// The holder is what another process wrote into its lock note: escaped here.
pub fn cpu_waiting(cpu: usize, holder: &str, waited: Option<std::time::Duration>) -> String {
    let holder = crate::sanitize::terminal(holder);
    let who = if holder.starts_with(|c: char| c.is_ascii_digit()) {
        format!("PID {holder}")
    } else {
        format!("a process {holder}")
    };
    let since = waited.map_or(String::new(), |w| format!(" for {}", duration(w)));
    format!("waiting for CPU {cpu} — held by {who}{since}")
}

/// The end of that wait: `CPU 1 free after 14 s`.
pub fn cpu_free_after(cpu: usize, waited: std::time::Duration) -> String {
    format!("CPU {cpu} free after {}", duration(waited))
}

/// A trial process running far past its plan, as both frontends show it:
/// `trial 2/5: 12 s, expected 42 ms`.
pub fn overdue(
    trial: u32,
    trials: u32,
    elapsed: std::time::Duration,
    expected: std::time::Duration,
) -> String {
    format!(
        "trial {trial}/{trials}: {}, expected {}",
        duration(elapsed),
        time(expected.as_secs_f64())
    )
}

/// `bytes//1024 KiB`, as the report's RSS columns (truncating, unlike `size`).
pub(crate) fn kib(bytes: u64) -> String {
    format!("{} KiB", bytes / 1024)
}

/// A planning figure as Python's `str(float)` would read in prose: `0.5`, `60`, `0.01`.
pub(crate) fn plain(x: f64) -> String {
    format!("{x}")
}

/// The clock state of the measuring CPU as the report's environment table writes it (spec §6):
/// x86 `max 2.10 GHz, governor performance, turbo off, SMT off`; aarch64 with minimum =
/// maximum `fixed 2.71 GHz (governor performance, minimum = maximum), boost off, SMT none`.
/// Unknown values read `unknown`; without cpufreq the text says so instead of a frequency.
pub(crate) fn clock(c: &ClockState<'_>) -> String {
    let governor = c.governor.unwrap_or("unknown");
    let boost = match c.boost {
        Some(true) => "on",
        Some(false) => "off",
        None => "unknown",
    };
    let smt = match c.smt {
        None => "unknown",
        Some("notsupported" | "notimplemented") if c.arch == "aarch64" => "none",
        Some(s) => s,
    };
    let Some(max) = c.max_khz else {
        return format!("no cpufreq (clock not reported), SMT {smt}");
    };
    let ghz = max as f64 / 1e6;
    if c.arch == "aarch64" {
        if c.min_khz == Some(max) {
            format!(
                "fixed {ghz:.2} GHz (governor {governor}, minimum = maximum), boost {boost}, SMT {smt}"
            )
        } else {
            format!("max {ghz:.2} GHz, governor {governor}, boost {boost}, SMT {smt}")
        }
    } else {
        format!("max {ghz:.2} GHz, governor {governor}, turbo {boost}, SMT {smt}")
    }
}

/// The sysfs facts `clock` reads; `boost` is turbo/boost on (x86: `intel_pstate/no_turbo` = 0
/// or `cpufreq/boost` = 1).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ClockState<'a> {
    pub(crate) arch: &'a str,
    pub(crate) governor: Option<&'a str>,
    pub(crate) min_khz: Option<u64>,
    pub(crate) max_khz: Option<u64>,
    pub(crate) boost: Option<bool>,
    pub(crate) smt: Option<&'a str>,
}

#[cfg(test)]
mod tests;
