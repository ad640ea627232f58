//! The Curve panel drawn into a buffer: one line per instance and its reference, the axis
//! that turns logarithmic, the readout and hidden series, and the unit it names.

use super::*;
use crate::tui::demo;

#[test]
fn draws_one_line_per_instance_and_the_reference_when_measured() {
    let mut app = demo::finished();
    let text = demo::draw_text(70, 16, |f| {
        render(f, f.area(), &app);
    });
    assert!(
        text.contains("sm3hash-256") && text.contains("pseudoXOF-512"),
        "{text}"
    );
    assert!(text.contains("32 B") && text.contains("1 KiB"), "{text}");
    assert!(
        !text.contains("(ref)"),
        "pseudoXOF-256 was not measured: {text}"
    );
    // Measure the reference of sm3hash-256's width, unselected: it is drawn dashed.
    for bytes in [32, 1024] {
        app.apply(crate::vocabulary::EngineEvent::JobFinished {
            job: crate::vocabulary::JobKey {
                candidate: "iccs".into(),
                label: "pseudoXOF-256".into(),
                input_bytes: bytes,
            },
            #[allow(clippy::useless_conversion)]
            summary: demo::summary(1536.0 * bytes as f64 / 32.0, bytes).into(),
            record: "r.json".into(),
            snapshot: None,
        });
    }
    let series = app.curves();
    assert_eq!(
        series.last().map(|s| (s.label.as_str(), s.reference)),
        Some(("pseudoXOF-256", true))
    );
    let text = demo::draw_text(70, 16, |f| {
        render(f, f.area(), &app);
    });
    assert!(text.contains("pseudoXOF-256 (ref)"), "{text}");
    let empty = demo::draw_text(70, 8, |f| render(f, f.area(), &demo::idle()));
    assert!(empty.contains("appears as lengths finish"), "{empty}");
}

/// Adds a slow instance (2100 cycles/byte, like uHash) to the finished demo.
fn with_a_slow_series() -> App {
    let mut app = demo::finished();
    app.selected.insert("pseudohash-1024".into());
    for bytes in [32, 1024] {
        app.apply(crate::vocabulary::EngineEvent::JobFinished {
            job: crate::vocabulary::JobKey {
                candidate: "iccs".into(),
                label: "pseudohash-1024".into(),
                input_bytes: bytes,
            },
            summary: Box::new(demo::summary(2100.0 * bytes as f64, bytes)),
            record: "r.json".into(),
            snapshot: None,
        });
    }
    app
}

#[test]
fn series_apart_by_more_than_ten_times_get_a_log_axis_the_operator_can_change() {
    use crate::tui::action::Action;
    let app = demo::finished();
    assert!(!app.curve_is_log(), "45 against 94 c/B: linear");
    let mut app = with_a_slow_series();
    assert!(app.curve_is_log());
    let text = demo::draw_text(70, 16, |f| render(f, f.area(), &app));
    assert!(text.contains("cycles/byte (log)"), "{text}");
    // Whole decades: the fast series are not flattened on the bottom row.
    assert!(text.contains("10.0") && text.contains("10000"), "{text}");
    app.act(Action::CurveScale);
    assert!(!app.curve_is_log());
    let text = demo::draw_text(70, 16, |f| render(f, f.area(), &app));
    assert!(!text.contains("(log)"), "{text}");
}

#[test]
fn in_instruction_mode_the_curve_says_instructions_per_byte() {
    use crate::counter::{CycleSource, RunCounter};
    let mut app = demo::idle();
    app.counter = RunCounter::Instructions;
    let empty = demo::draw_text(70, 8, |f| render(f, f.area(), &app));
    assert!(empty.contains("Curve · instructions/byte vs"), "{empty}");
    assert!(
        empty.contains("instructions/byte per length appears"),
        "{empty}"
    );
    assert!(!empty.contains("cycles"), "{empty}");
    app.selected.insert("sm3hash-256".into());
    for bytes in [32, 1024] {
        let mut summary = demo::summary(900.0 * bytes as f64, bytes);
        summary.cycle_source = Some(CycleSource::CallgrindInstructions);
        app.apply(crate::vocabulary::EngineEvent::JobFinished {
            job: crate::vocabulary::JobKey {
                candidate: "iccs".into(),
                label: "sm3hash-256".into(),
                input_bytes: bytes,
            },
            summary: Box::new(summary),
            record: "r.json".into(),
            snapshot: None,
        });
    }
    // The counts name the unit, whatever the next run is set to count.
    app.counter = RunCounter::Cycles;
    let text = demo::draw_text(70, 16, |f| render(f, f.area(), &app));
    assert!(text.contains("Curve · instructions/byte vs"), "{text}");
    assert!(!text.contains("cycles/byte"), "{text}");
    let timed = demo::draw_text(70, 16, |f| render(f, f.area(), &demo::finished()));
    assert!(timed.contains("Curve · cycles/byte vs"), "{timed}");
}

#[test]
fn the_readout_names_each_visible_value_and_series_can_be_hidden() {
    use crate::tui::action::Action;
    let mut app = with_a_slow_series();
    app.focus = Panel::Curve;
    let r = readout(&app).unwrap();
    assert_eq!(
        r,
        "1 KiB: sm3hash-256 22.5 · pseudohash-1024 2100 · pseudoXOF-512 45.1"
    );
    app.act(Action::CurvePrev);
    assert!(readout(&app).unwrap().starts_with("32 B: sm3hash-256 45.9"));
    // ↓ to pseudohash-1024, Space hides it: gone from the readout, marked in the legend,
    // and the axis goes back to linear.
    app.act(Action::Down);
    app.act(Action::ToggleSeries);
    assert!(!readout(&app).unwrap().contains("pseudohash-1024"));
    assert!(!app.curve_is_log());
    let text = demo::draw_text(70, 16, |f| render(f, f.area(), &app));
    assert!(text.contains("▸(hidden) pseudohash-1024"), "{text}");
    app.act(Action::ToggleSeries);
    assert!(readout(&app).unwrap().contains("pseudohash-1024"));
}
