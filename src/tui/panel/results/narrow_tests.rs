//! The Results panel at 80×24 and 160×48 for every combination of a pinned baseline, A/B
//! rows and the counter: instance, message, the mean and `× pseudoXOF` always show; the run
//! column and Δ give way first; an A/B row stays in sight below the jobs, its verdict whole.

use crate::campaign::LiveComparison;
use crate::campaign::ab_result::{AbResult, AbSide};
use crate::counter::CycleSource;
use crate::measure::paired::{PairedRatio, RatioBasis};
use crate::tui::app::{App, JobState};
use crate::tui::demo;

/// `demo::rerun` with or without its pin, with or without an A/B result, counted in cycles
/// or in instructions.
fn state(pin: bool, ab: bool, instructions: bool) -> App {
    let mut app = demo::rerun();
    if !pin {
        app.baseline = None;
    }
    if ab {
        let side = |label: &str| AbSide {
            candidate: "iccs".into(),
            label: label.into(),
        };
        let length = LiveComparison {
            input_bytes: 32,
            a_mean_cycles: Some(1469.0),
            b_mean_cycles: Some(3009.0),
            ratio: Some(PairedRatio {
                pairs: 10,
                ratio: 2.048,
                ci95_low: 2.01,
                ci95_high: 2.09,
                basis: RatioBasis::Cycles,
            }),
            problem: None,
        };
        app.ab_results.push((
            1,
            AbResult {
                a: side("sm3hash-256"),
                b: side("pseudoXOF-512"),
                pairs_requested: 10,
                lengths: vec![length],
            },
        ));
    }
    if instructions {
        for job in &mut app.jobs {
            if let JobState::Done(s) = &mut job.state {
                s.cycle_source = Some(CycleSource::CallgrindInstructions);
            }
        }
    }
    app
}

#[test]
fn narrow_results_keep_the_figures_and_drop_the_run_column_first() {
    for pin in [false, true] {
        for ab in [false, true] {
            for instructions in [false, true] {
                let app = state(pin, ab, instructions);
                let name = format!(
                    "{}_{}_{}",
                    if pin { "pin" } else { "nopin" },
                    if ab { "ab" } else { "noab" },
                    if instructions { "instr" } else { "cycles" },
                );
                for (w, h) in [(80, 24), (160, 48)] {
                    let text = demo::text(&demo::render(&app, w, h));
                    let header = text
                        .lines()
                        .find(|l| l.contains(" instance ") && l.contains(" msg"))
                        .unwrap_or_else(|| panic!("{name} {w}×{h}: no header\n{text}"));
                    let mean = if instructions { "instr" } else { "cycles" };
                    assert!(header.contains(mean), "{name} {w}×{h}: {header}");
                    assert!(
                        header.contains("×XOF") || header.contains("× pseudoXOF"),
                        "{name} {w}×{h}: {header}"
                    );
                    // The A/B row stays in sight with its ratio and whole verdict.
                    if ab {
                        let row = text
                            .lines()
                            .find(|l| l.contains("= ") && l.contains("pseudoXOF-512"))
                            .unwrap_or_else(|| panic!("{name} {w}×{h}: no A/B row\n{text}"));
                        assert!(
                            row.contains("B/A 2.048") && row.contains("B slower"),
                            "{name} {w}×{h}: {row}"
                        );
                    }
                    insta::assert_snapshot!(format!("{name}_{w}x{h}"), text);
                }
            }
        }
    }
}
