//! The cycles/byte figure of the published arm_1 hash-05 dataset, parsed as SVG: its legend
//! sits where no line passes (plotters' box in the upper right once covered the uHash-1024
//! line from 8 KiB to 64 KiB) and still names every line.

mod common;

use cyclescope_core::report::{ReportOptions, build_pages, write_pages};

/// A box: left, top, right, bottom (pixels).
type Area = (f64, f64, f64, f64);

fn number(n: &roxmltree::Node, name: &str) -> f64 {
    n.attribute(name)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{name} of {n:?}"))
}

fn points(n: &roxmltree::Node) -> Vec<(f64, f64)> {
    n.attribute("points")
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| {
            let (x, y) = p.split_once(',')?;
            Some((x.parse().ok()?, y.parse().ok()?))
        })
        .collect()
}

fn inside((x, y): (f64, f64), (l, t, r, b): Area) -> bool {
    x > l && x < r && y > t && y < b
}

/// True when the segment from `a` to `z` passes through the box (checked every half pixel).
fn crosses(a: (f64, f64), z: (f64, f64), area: Area) -> bool {
    let steps = ((z.0 - a.0).abs().max((z.1 - a.1).abs()) * 2.0)
        .ceil()
        .max(1.0) as usize;
    (0..=steps).any(|i| {
        let t = i as f64 / steps as f64;
        inside((a.0 + t * (z.0 - a.0), a.1 + t * (z.1 - a.1)), area)
    })
}

#[test]
fn the_cycles_per_byte_legend_covers_no_line_of_the_arm_1_hash_05_figure() {
    let opts = ReportOptions {
        system: Some("arm_1".into()),
        side_dir: Some(common::harness_data().join("performance")),
        candidates: Some(common::reference_dir().join("candidates.csv")),
        method_facts: None,
        figures: true,
        baseline: None,
        published: None,
    };
    let pages = build_pages(&common::arm_1(), &opts).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    write_pages(tmp.path(), &pages).unwrap();
    let svg = std::fs::read_to_string(tmp.path().join("hash-05/figures/cpb_arm_1.svg")).unwrap();
    let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
    // The legend's box: the one unfilled rectangle with a border.
    let boxes: Vec<Area> = doc
        .descendants()
        .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some("none"))
        .map(|n| {
            let (x, y) = (number(&n, "x"), number(&n, "y"));
            (x, y, x + number(&n, "width"), y + number(&n, "height"))
        })
        .collect();
    assert_eq!(boxes.len(), 1, "{boxes:?}\n{svg}");
    let legend = boxes[0];
    // Every line is named inside it.
    for name in [
        "uHash-512",
        "uHash-768",
        "uHash-1024",
        "pseudoXOF-512 (baseline)",
        "pseudoXOF-768 (baseline)",
        "pseudoXOF-1024 (baseline)",
    ] {
        let text = doc
            .descendants()
            .find(|n| n.has_tag_name("text") && n.text().map(str::trim) == Some(name))
            .unwrap_or_else(|| panic!("{name} is not named"));
        assert!(
            inside((number(&text, "x"), number(&text, "y")), legend),
            "{name} is named outside the legend {legend:?}"
        );
    }
    // No line passes through it; the legend's own samples (two points, wholly inside) aside.
    let mut series = 0;
    for line in doc.descendants().filter(|n| n.has_tag_name("polyline")) {
        let pts = points(&line);
        if pts.len() == 2 && pts.iter().all(|&p| inside(p, legend)) {
            continue;
        }
        series += usize::from(pts.len() >= 8);
        for w in pts.windows(2) {
            assert!(
                !crosses(w[0], w[1], legend),
                "a line passes under the legend {legend:?}: {pts:?}"
            );
        }
    }
    assert!(series >= 6, "{series} lines of 8 lengths drawn");
}
