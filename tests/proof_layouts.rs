//! `run --layouts` on the proof fixtures (`tests/fixtures/hostile/proof_*.c`), through the real
//! binary: an honest library gets the spread of its figures over eight message and digest
//! offsets beside the guide figure, and one that is wrong off a 16-byte boundary is refused at
//! the first layout where it is wrong. Statuses and words are asserted, never timings.

mod common;
use common::hostile as support;
use common::proof::{bound, records};

use support::*;

/// `run --layouts` on `name`: its record and output.
fn layouts_run(name: &str) -> (serde_json::Value, String) {
    let tmp = tempfile::tempdir().unwrap();
    let lib = build_fixture(name, tmp.path());
    let out = tmp.path().join("run");
    let args = labelled_run(
        path_str(&lib),
        name,
        path_str(&out),
        &["--no-baselines", "--no-reference-jobs", "--layouts"],
    );
    let m = marker(name);
    let _sweep = Sweep(m.clone());
    let (o, _) = run_bounded(command(&args, &m, &[]), bound());
    let records = records(&out.join("records"));
    assert_eq!(records.len(), 1, "{}", text(&o));
    let r = serde_json::from_slice(&std::fs::read(&records[0]).unwrap()).unwrap();
    assert_none_left(&m);
    (
        r,
        String::from_utf8_lossy(&o.stdout).into_owned() + &text(&o),
    )
}

#[test]
fn layouts_give_the_spread_of_eight_offsets_beside_the_guide_figure() {
    let (r, out) = layouts_run("proof_honest");
    assert_eq!(r["status"], "complete", "{r}\n{out}");
    let l = &r["cyclescope"]["layouts"];
    let offsets = l["offsets"].as_array().unwrap();
    assert_eq!(offsets.len(), 8, "{l}");
    assert_eq!(offsets[7], serde_json::json!({"message": 7, "digest": 56}));
    let (min, median, max) = (
        l["min"].as_f64().unwrap(),
        l["median"].as_f64().unwrap(),
        l["max"].as_f64().unwrap(),
    );
    assert!(0.0 < min && min <= median && median <= max, "{l}");
    assert!(
        out.contains("layouts `proof_honest` 64 B: ")
            && out.contains("lowest / median / highest of 8 message and digest offsets"),
        "{out}"
    );
}

#[test]
fn a_library_wrong_off_a_16_byte_boundary_is_caught_at_its_layout() {
    let (r, out) = layouts_run("proof_misaligned");
    let failure = r["cyclescope"]["failure"].as_str().unwrap_or_default();
    assert!(
        failure.starts_with(
            "CRYPTOFAIL: at the layout with the message 1 and the digest 8 bytes past a 64-byte boundary"
        ),
        "{failure}\n{out}"
    );
    assert_ne!(r["status"], "complete", "{r}");
}
