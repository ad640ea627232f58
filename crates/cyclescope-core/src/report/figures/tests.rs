//! The per-call histogram figure, parsed as SVG: bins never finer than the counter's step, and
//! an off-scale loop mean named once.

use super::*;

/// A record of `label` at 32 B whose per-call histogram holds `values` (ticks) and whose loop
/// mean is `mean`, counted by the TSC.
fn record(values: &[u64], mean: f64) -> TimingRecord {
    let mut h = crate::measure::stats::new_histogram();
    for &v in values {
        h.record(v).unwrap();
    }
    let additions = serde_json::json!({
        "version": "0.1.0", "mode": "guide", "cycle_source": "tsc",
        "reference_cycles": true, "per_call_source": "tsc",
        "timer_overhead_ticks": 40.0, "per_call": null, "per_call_by_process": [],
        "trial_spread": null, "preempted_ns_by_trial": [],
        "histogram_v2_base64": crate::record::histogram::encode(&h),
        "elf_load_bytes": null, "measurement_cpu": 1, "worker": "cyclescope-worker",
        "tui_attached": false, "host_problems": [], "failure": null
    });
    let mut json = serde_json::json!({
        "schema": 2, "status": "complete", "candidate": "c", "label": "x", "instance": "x",
        "variant": "reference", "flags": "guide", "operation": "hash", "input_bytes": 32,
        "plan": {"iterations_per_trial": 1000, "warmups": 3, "trials": 1,
                 "separate_processes": true, "estimated_s": 0.0, "timeout_per_process_s": 1.0},
        "kat": "PASS", "kat_not_passed": false, "disturbed_retries": 0, "library": "l",
        "library_sha256": "", "kat_log": null, "kat_log_sha256": null,
        "started_utc": "", "ended_utc": "", "load_average_start": [0.0, 0.0, 0.0],
        "load_average_end": [0.0, 0.0, 0.0], "environment": {}, "processes": [],
        "trials": [], "measurements": values.len(), "guide_100_measurements_met": true,
        "mean_seconds": 1e-6, "median_trial_seconds": 1e-6, "min_trial_seconds": 1e-6,
        "max_trial_seconds": 1e-6, "mean_cycles": mean, "median_trial_cycles": mean,
        "operations_per_second": 1.0, "throughput_MB_per_second": 1.0, "sizes": {}, "kex": {},
        "build_flags": "", "baseline_rss_bytes": 0, "peak_rss_bytes": 0, "timing_scope": "loop"
    });
    json["cyclescope"] = additions;
    serde_json::from_value(json).unwrap()
}

/// `record` with per-call quantiles.
fn with_quantiles(mut r: TimingRecord, p50: u64, p90: u64, p99: u64) -> TimingRecord {
    let pc = serde_json::json!({
        "samples": 1000, "mean": p50 as f64, "stdev": 1.0, "p1": p50, "p50": p50, "p90": p90,
        "p99": p99, "max": p99, "outliers": 0
    });
    if let Some(add) = r.cyclescope.as_mut() {
        add.per_call = Some(serde_json::from_value(pc).unwrap());
    }
    r
}

/// A TSC that steps by 26 ticks: every value a multiple of 26 between about 1300 and 1900,
/// most near 1500 (as this VM's counter reads a 32 B call).
fn stepped_values() -> Vec<u64> {
    let mut out = Vec::new();
    for k in 50u64..73 {
        let centre = 57i64;
        let n = 400 / (1 + (k as i64 - centre).unsigned_abs());
        out.extend(std::iter::repeat_n(26 * k, n as usize));
    }
    out
}

fn attr(n: &roxmltree::Node, name: &str) -> f64 {
    n.attribute(name)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{name} of {n:?}"))
}

/// Pixels per tick of the x axis, from two of its labels (the numbers that share one row).
fn pixels_per_tick(doc: &roxmltree::Document) -> f64 {
    let mut rows: std::collections::BTreeMap<String, Vec<(f64, f64)>> = Default::default();
    for t in doc.descendants().filter(|n| n.has_tag_name("text")) {
        let text: String = t
            .text()
            .unwrap_or_default()
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        if let Ok(v) = text.parse::<f64>() {
            rows.entry(t.attribute("y").unwrap_or("").to_string())
                .or_default()
                .push((attr(&t, "x"), v));
        }
    }
    let axis = rows
        .into_values()
        .filter(|r| r.len() >= 2)
        .find(|r| r[0].0 != r[1].0)
        .expect("an x axis with two labels");
    (axis[1].0 - axis[0].0) / (axis[1].1 - axis[0].1)
}

#[test]
fn histogram_bins_are_at_least_one_counter_step_wide_and_leave_no_comb() {
    let r = record(&stepped_values(), 1500.0);
    let svg = per_call_histogram(&r).unwrap().expect("a figure");
    let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
    let bins: Vec<(f64, f64)> = doc
        .descendants()
        .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some("#0000FF"))
        .map(|n| (attr(&n, "width"), attr(&n, "height")))
        .collect();
    assert!(bins.len() >= 5, "{} bins:\n{svg}", bins.len());
    let step_px = 26.0 * pixels_per_tick(&doc);
    for &(w, _) in &bins {
        // Plotters rounds each edge to a pixel.
        assert!(
            w + 1.0 >= step_px,
            "a bin {w} px wide, the step is {step_px} px"
        );
    }
    // Every value between the smallest and the largest was recorded: no bin among them is
    // empty (a comb would leave every other one so).
    let filled: Vec<bool> = bins.iter().map(|&(_, h)| h >= 1.0).collect();
    let first = filled.iter().position(|&f| f).unwrap();
    let last = filled.iter().rposition(|&f| f).unwrap();
    assert!(filled[first..=last].iter().all(|&f| f), "{filled:?}");
}

#[test]
fn an_off_scale_loop_mean_is_named_with_its_value_once() {
    let r = record(&stepped_values(), 2860.0);
    let svg = per_call_histogram(&r).unwrap().expect("a figure");
    let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .map(str::trim)
        .collect();
    let value = crate::format::int(Some(2860.0));
    let label = format!("◆ loop mean {value} ›");
    assert!(
        texts.contains(&label.as_str()),
        "{label:?} not in {texts:?}"
    );
    assert_eq!(
        texts.iter().filter(|t| t.contains(&value)).count(),
        1,
        "{texts:?}"
    );
    // Within the body: the value alone, no arrow.
    let r = record(&stepped_values(), 1500.0);
    let svg = per_call_histogram(&r).unwrap().expect("a figure");
    let within = format!("◆ loop mean {}\n<", crate::format::int(Some(1500.0)));
    assert!(svg.contains(&within), "{svg}");
}

#[test]
fn quantiles_on_one_value_share_one_label() {
    // A coarse counter: p50 and p90 read the same tick count.
    let r = with_quantiles(record(&stepped_values(), 1500.0), 1482, 1482, 1690);
    let svg = per_call_histogram(&r).unwrap().expect("a figure");
    let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
    let labels: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .map(str::trim)
        .filter(|t| t.starts_with('▲'))
        .collect();
    assert_eq!(labels, ["▲ p50 p90", "▲ p99"]);
}
