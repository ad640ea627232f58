//! Deterministic demo states, built the only way state is ever built: a fixed catalog, fixed
//! host rows, and a script of engine events with histograms filled from a seeded generator.
//! Used by the screen snapshots, the panel tests and `cyclescope screenshots`; the figures
//! are the published x86_1 baselines (spec §8), not measurements of this machine.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crossterm::event::KeyCode;
use hdrhistogram::Histogram;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;

use super::app::{App, HostRow, Mode};
use crate::catalog::{self, Catalog};
use crate::counter::CycleSource;
use crate::host::Status as CheckStatus;
use crate::kat::KatStatus;
use crate::measure::stats::{new_histogram, per_call};
use crate::vocabulary::{
    EngineEvent, FailureKind, HistogramSnapshot, JobFailure, JobKey, JobSummary, RecordStatus,
};
use script::{disturbed_job, kat_pass, plan_all, run_job, start};

const CONFIG: &str = include_str!("../../config.toml");
const CLOCK_HZ: f64 = 2.1e9;

/// The demo states, by the names the snapshots and screenshots use.
pub const STATES: [&str; 15] = [
    "idle",
    "measuring",
    "finished",
    "fault",
    "too-small",
    "help",
    "help-end",
    "help-filter",
    "rerun",
    "refused",
    "nokat",
    "log-scrolled",
    "bad-manifest",
    "waiting-cpu",
    "ab-builds",
];

/// The catalog of the repository's `config.toml`, with the bundled baselines beside it.
pub fn catalog() -> Catalog {
    let mut c = catalog::parse_config(CONFIG, Path::new("config.toml"), Path::new("."))
        .unwrap_or_else(|e| panic!("the bundled config.toml must parse: {e}"));
    c.add_baselines(catalog::OnClash::Refuse)
        .unwrap_or_else(|e| panic!("the bundled baselines must fit config.toml: {e}"));
    c
}

pub fn key(label: &str, bytes: u64) -> JobKey {
    JobKey {
        candidate: "iccs".into(),
        label: label.into(),
        input_bytes: bytes,
    }
}

/// A per-call histogram around `center` ticks: a bell from a fixed xorshift stream, a right
/// tail, and a few far outliers (interrupts), like a real trial.
pub fn synthetic_histogram(center: f64, samples: u64, seed: u64) -> Histogram<u64> {
    let mut s = seed | 1;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut h = new_histogram();
    for _ in 0..samples {
        let bell = (next() + next() + next() + next() - 2.0) * 0.035 * center;
        let r = next();
        let v = if r < 0.001 {
            center * (6.0 + 10.0 * next())
        } else if r < 0.03 {
            center * (1.05 + 0.08 * next())
        } else {
            center + bell
        };
        // Values are far inside the histogram's bounds.
        let _ = h.record(v.max(1.0) as u64);
    }
    h
}

/// A job's histogram so far: `samples` per-call values about `center`, its loop mean `loop_mean`.
pub fn snapshot(center: f64, samples: u64, seed: u64, loop_mean: f64) -> HistogramSnapshot {
    let h = synthetic_histogram(center, samples, seed);
    HistogramSnapshot {
        per_call: per_call(&h),
        histogram: Arc::new(h),
        loop_mean_cycles: Some(loop_mean),
        timer_overhead_ticks: 96.0,
        per_call_source: "tsc (reference cycles)".into(),
    }
}

/// A complete job summary for `cycles` per call at `bytes` on the demo clock.
pub fn summary(cycles: f64, bytes: u64) -> JobSummary {
    let secs = cycles / CLOCK_HZ;
    JobSummary {
        status: RecordStatus::Complete,
        kat: KatStatus::Pass.into(),
        mean_cycles: Some(cycles),
        mean_seconds: secs,
        throughput_mb_per_second: bytes as f64 / secs / 1e6,
        measurements: 100_000,
        trials: 5,
        iterations_per_trial: 20_000,
        cycle_source: Some(CycleSource::PerfUserCycles),
        per_call: None,
        disturbed_retries: 0,
        ci95_relative: Some(0.004),
        robust: None,
        doubts: vec![],
        layouts: None,
        cpu_wait: None,
    }
}

fn host_rows() -> Vec<HostRow> {
    let row = |name: &str, status, value: &str, hint: Option<&str>| HostRow {
        check: None,
        name: name.into(),
        status,
        value: value.into(),
        hint: hint.map(Into::into),
    };
    vec![
        row("architecture", CheckStatus::Pass, "x86_64", None),
        row(
            "cycle counter",
            CheckStatus::Warn,
            "perf_event_paranoid 4: tsc",
            Some("sysctl kernel.perf_event_paranoid=2 for user-mode core cycles"),
        ),
        row("turbo / boost", CheckStatus::Pass, "off", None),
        row(
            "governor",
            CheckStatus::Unknown,
            "no cpufreq (virtual machine)",
            Some("set the governor to performance where cpufreq exists"),
        ),
        row("SMT", CheckStatus::Pass, "CPU 1 alone in its core", None),
        row("cpuset", CheckStatus::Pass, "CPU 1 usable", None),
        row(
            "clock",
            CheckStatus::Fail,
            "not steady: IQR 1.2 % of 2.10 GHz",
            Some("pin the clock (cpufreq min = max) or measure on an idle host"),
        ),
    ]
}

/// The figures the demo measures: (label, bytes, mean cycles).
const FIGURES: [(&str, u64, f64); 4] = [
    ("pseudoXOF-512", 32, 3009.0),
    ("pseudoXOF-512", 1024, 46_200.0),
    ("sm3hash-256", 32, 1469.0),
    ("sm3hash-256", 1024, 23_000.0),
];

/// Selection made, host checked, nothing run yet.
pub fn idle() -> App {
    let cat = catalog();
    let mut app = App::new(cat.candidates, &cat.settings, 2);
    app.cpu = 1;
    app.selected.insert("pseudoXOF-512".into());
    app.selected.insert("sm3hash-256".into());
    app.lengths = vec![32, 1024];
    app.set_host(host_rows());
    app.cursor = app
        .tree_rows()
        .iter()
        .position(|r| matches!(r, super::app::TreeRow::Instance(0, 6)))
        .unwrap_or(0);
    app.log.clear();
    app
}

/// A run in flight: KATs passed, one job done, the second in its third trial.
pub fn measuring() -> App {
    let mut app = idle();
    start(&mut app, &["pseudoXOF-512", "sm3hash-256"]);
    kat_pass(&mut app, "pseudoXOF-512");
    kat_pass(&mut app, "sm3hash-256");
    plan_all(&mut app);
    run_job(&mut app, FIGURES[0], 7);
    let k = key("sm3hash-256", 32);
    app.apply(EngineEvent::JobStarted {
        job: k.clone(),
        cpu: Some(1),
    });
    app.apply(EngineEvent::TrialRetried {
        job: k.clone(),
        trial: 2,
        reason: "clock 1.71 GHz < 95 % of 2.10 GHz".into(),
        cpu_wait: None,
    });
    app.apply(EngineEvent::TrialProgress {
        job: k,
        trial: 3,
        trials: 5,
        calls_done: 40_000,
        calls_total: 100_000,
        snapshot: snapshot(1469.0 * 1.02, 48_000, 11, 1471.0),
    });
    app
}

/// Every job done; the histogram shows the last one, the curve all of them.
pub fn finished() -> App {
    let mut app = idle();
    start(&mut app, &["pseudoXOF-512", "sm3hash-256"]);
    kat_pass(&mut app, "pseudoXOF-512");
    kat_pass(&mut app, "sm3hash-256");
    plan_all(&mut app);
    for (i, f) in FIGURES.into_iter().enumerate() {
        if i == 1 {
            disturbed_job(&mut app, 8);
        } else {
            run_job(&mut app, f, 7 + i as u64);
        }
    }
    app.apply(EngineEvent::RunFinished {
        cancelled: false,
        wall: Duration::from_secs(27),
        finished: 4,
        failed: 0,
    });
    app
}

/// A KAT failure and a crashing worker: the run ends with faults, the records that were
/// written stay.
pub fn fault() -> App {
    let mut app = idle();
    app.selected.insert("pseudohash-512".into());
    start(
        &mut app,
        &["pseudoXOF-512", "sm3hash-256", "pseudohash-512"],
    );
    kat_pass(&mut app, "pseudoXOF-512");
    kat_pass(&mut app, "sm3hash-256");
    app.apply(EngineEvent::KatFinished {
        label: "pseudohash-512".into(),
        status: KatStatus::Mismatch,
        detail: "vector 17 of ShortMsgKAT_512.txt differs".into(),
        log: None,
        check: None,
        findings: Vec::new(),
    });
    app.apply(EngineEvent::Warning {
        message: "pseudohash-512 skipped: KAT MISMATCH (allow with --allow-kat-fail)".into(),
    });
    plan_all(&mut app);
    run_job(&mut app, FIGURES[0], 7);
    let k = key("sm3hash-256", 32);
    app.apply(EngineEvent::JobStarted {
        job: k.clone(),
        cpu: Some(1),
    });
    app.apply(EngineEvent::JobFailed {
        job: k,
        reason: JobFailure::new(FailureKind::Crash, "worker killed by SIGSEGV"),
        stderr_tail:
            "loading libsm3hash.so\nsm3: digest buffer overrun by 32 bytes\nSegmentation fault"
                .into(),
        record: None,
    });
    app.apply(EngineEvent::RunFinished {
        cancelled: false,
        wall: Duration::from_secs(9),
        finished: 1,
        failed: 1,
    });
    app
}

mod ab_builds;
mod runs;
mod script;

pub use ab_builds::ab_builds;
pub use runs::{bad_manifest, log_scrolled, nokat, refused, rerun, waiting_cpu};

/// The demo state called `name`, with the terminal size it is meant for (`too-small` is
/// the idle state on a terminal below the minimum).
pub fn state(name: &str) -> Option<App> {
    Some(match name {
        "idle" | "too-small" => idle(),
        "measuring" => measuring(),
        "finished" => finished(),
        "fault" => fault(),
        "rerun" => rerun(),
        "refused" => refused(),
        "waiting-cpu" => waiting_cpu(),
        "nokat" => nokat(),
        "log-scrolled" => log_scrolled(),
        "bad-manifest" => bad_manifest(),
        "ab-builds" => ab_builds(),
        "help" => help(&[]),
        // Scrolled to its end (a page of 80×24), and narrowed to the CPU lines while typing.
        "help-end" => help(&[KeyCode::End]),
        "help-filter" => help(&[KeyCode::Char('/'), KeyCode::Char('C'), KeyCode::Char('p')]),
        _ => return None,
    })
}

/// The idle screen with the help opened by its key, then `keys` pressed.
fn help(keys: &[KeyCode]) -> App {
    let mut app = idle();
    let press = |app: &mut App, code| {
        app.on_key(crossterm::event::KeyEvent::new(
            code,
            crossterm::event::KeyModifiers::NONE,
        ))
    };
    press(&mut app, KeyCode::Char('?'));
    for &k in keys {
        press(&mut app, k);
    }
    debug_assert_eq!(app.mode, Mode::Help);
    app
}

/// Draws with `draw` on an off-screen terminal of `width`×`height`.
pub fn draw_buffer(width: u16, height: u16, draw: impl FnOnce(&mut ratatui::Frame)) -> Buffer {
    let mut terminal =
        Terminal::new(TestBackend::new(width, height)).unwrap_or_else(|e| match e {});
    let _ = terminal.draw(draw);
    terminal.backend().buffer().clone()
}

/// The whole screen of `app` off-screen.
pub fn render(app: &App, width: u16, height: u16) -> Buffer {
    draw_buffer(width, height, |f| {
        super::screen::draw(f, app);
    })
}

/// Text drawn by `draw` off-screen (panel tests).
#[cfg(test)]
pub fn draw_text(width: u16, height: u16, draw: impl FnOnce(&mut ratatui::Frame)) -> String {
    text(&draw_buffer(width, height, draw))
}

/// The buffer's text, one line per row, trailing spaces kept (as a snapshot shows it).
pub fn text(buf: &Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in 0..area.height {
        let mut skip = 0;
        for x in 0..area.width {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let sym = buf[(x, y)].symbol();
            skip = unicode_width(sym).saturating_sub(1);
            out.push_str(sym);
        }
        out.push('\n');
    }
    out
}

fn unicode_width(s: &str) -> usize {
    use ratatui::text::Span;
    Span::raw(s).width().max(1)
}
