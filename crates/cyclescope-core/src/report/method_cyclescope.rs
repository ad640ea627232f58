//! The method page of a cyclescope run (a run directory whose campaign.json carries
//! cyclescope's request): what this tool actually did, from the campaign and the records —
//! counters and their overhead, planning, disturbance handling, the KAT gate, isolation,
//! memory proxies, accepted host problems. The harness's own page (`method_page`) describes
//! the harness and stays for its datasets. Never measures anything.

use serde_json::Value;

use super::dataset::Dataset;
use super::host_view::HostView;
use crate::format;
use crate::record::TimingRecord;

/// True when the dataset is a cyclescope run directory.
pub(crate) fn is_cyclescope_run(ds: &Dataset) -> bool {
    ds.campaign.contains_key("cyclescope")
}

pub(crate) fn render(host: &HostView, ds: &Dataset) -> String {
    let id = &host.system_id;
    let plan = ds.campaign.get("planning").cloned().unwrap_or(Value::Null);
    let num = |k: &str| plan.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let request = ds
        .campaign
        .get("cyclescope")
        .cloned()
        .unwrap_or(Value::Null);
    let records: Vec<_> = ds.records.iter().map(|(_, r)| r).collect();
    let additions: Vec<_> = records
        .iter()
        .filter_map(|r| r.cyclescope.as_ref())
        .collect();
    let first = records
        .iter()
        .find_map(|r| r.cyclescope.as_ref().map(|a| (*r, a)));
    let measured_by = first.map_or("the counter named in each record".to_string(), |(r, a)| {
        super::measured_by(&r.environment, a.cycle_source_name(), a.reference_cycles)
    });
    let overheads: Vec<f64> = additions.iter().map(|a| a.timer_overhead_ticks).collect();
    let overhead = crate::measure::stats::median(overheads);
    let retries: u32 = records.iter().map(|r| r.disturbed_retries).sum();
    let tui = additions.iter().filter(|a| a.tui_attached).count();
    let complete = records.iter().filter(|r| r.status.is_complete()).count();
    let adaptive = request.get("adaptive").filter(|a| !a.is_null());
    let problems: Vec<String> = ds
        .campaign
        .get("host_problems")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|p| p.as_str())
                .map(|p| crate::sanitize::markdown(p).into_owned())
                .collect()
        })
        .unwrap_or_default();

    let mut l = vec![
        format!("# Performance method and limitations — system {id}"),
        String::new(),
        format!(
            "Measured with cyclescope {} on system {id}, {}. The figures themselves are on the [summary](summary_{id}.md).",
            env!("CARGO_PKG_VERSION"),
            measuring_cores(host.cpu_model(), &additions)
        ),
        String::new(),
        "## Measurement".into(),
        String::new(),
        format!(
            "- {} records ({complete} complete). Counter: {}. Time from `CLOCK_MONOTONIC_RAW`.",
            records.len(),
            measured_by.trim_start_matches("cycles: ")
        ),
        "- The guide's figure comes from the **loop counter**: cycles over a bare loop of a fixed number of `CryptHash` calls per trial, nothing else inside it; mean cycles = Σ cycles / Σ calls. Reference cycles (TSC, `cntvct_el0`) tick at a constant rate whatever the core clock does; core cycles come from `perf_event` where the kernel provides them.".into(),
        format!(
            "- Per-call percentiles and histograms come from a separate phase after each trial's loop, with serialised timestamps around every call and the measured timer overhead (median {} ticks) subtracted; they never enter the guide's figure.",
            overhead.map_or(format::MISSING.to_string(), |o| format!("{o:.0}"))
        ),
        format!(
            "- Planning as the harness: one calibration call, then {} trials of `clamp(ceil({} s / t1), 20, {})` calls, 3/1/0 warm-ups, at most {} of measured time per instance and length; each trial in a fresh worker process pinned to the measurement CPU (fresh address-space layout).",
            num("trials"),
            num("trial_target_s"),
            num("max_iters_per_trial"),
            format::duration(
                std::time::Duration::try_from_secs_f64(num("op_budget_s").max(0.0))
                    .unwrap_or(std::time::Duration::MAX),
            )
        ),
    ];
    if let Some(a) = adaptive {
        l.push(format!(
            "- **Adaptive mode**: instead of a fixed number of trials, single-trial processes were added until the 95 % confidence interval of the mean per-call cycles was within {} of the mean (at least 3, at most {} trials); each record's `plan.trials` is the number run.",
            format::pct(a.get("precision").and_then(Value::as_f64)),
            a.get("max_trials").and_then(Value::as_u64).unwrap_or(0)
        ));
    }
    l.extend([
        format!(
            "- A trial was re-run (at most 3 attempts) when its clock ran below 95 % of the fixed clock (the harness's test) or when the worker waited more than 1 % of the trial for its CPU (`/proc/thread-self/schedstat`; a reference counter keeps counting while it waits). Re-runs in this run: {retries}."
        ),
        format!(
            "- KAT gate: before timing, a worker process ran the official ICCS KAT generators (KAT_2_12 and KAT_2_23) on every library and compared the output with its `kat.sha256` manifest. KAT status of the timed instances: {}; each candidate page links the KAT log.",
            super::method_page::kat_statuses(ds)
        ),
        "- Candidate code runs only in worker processes (no_new_privs, inherited descriptors closed, address-space limit); crashes, hangs, error returns and writes outside the buffers (guard bytes) fail the job, not the run.".into(),
        format!(
            "- {tui} of the {} records were measured with the workbench attached (its UI runs off the measurement CPU).",
            records.len()
        ),
        String::new(),
        "## Limitations".into(),
        String::new(),
        "- Memory: the static figure is the library's ELF `PT_LOAD` image; baseline RSS and VmHWM belong to the whole worker process, driver and libc included, so none of them isolates the algorithm.".into(),
        worker_footprint(&records),
    ]);
    if first.is_some_and(|(_, a)| a.reference_cycles) {
        l.push("- Cycles are reference cycles: they equal core cycles only when the core runs at the reference clock (turbo off, fixed frequency). Compare them with figures from other systems only with that in mind.".into());
    }
    if !problems.is_empty() {
        l.push(format!(
            "- The host was not fixed for cycle measurements; the run was allowed to measure anyway, with these problems: {}.",
            problems.join("; ")
        ));
    }
    l.push(String::new());
    l.join("\n")
}

/// Which cores measured: "one <model> core", or for a run on several CPUs their number, the
/// CPUs and whether the engine had to share them.
fn measuring_cores(model: &str, additions: &[&crate::record::Additions]) -> String {
    let mut cpus: Vec<usize> = additions.iter().map(|a| a.measurement_cpu).collect();
    cpus.sort_unstable();
    cpus.dedup();
    let shared = additions.iter().any(|a| a.engine_shared_cpu);
    let mut text = match cpus.len() {
        0 | 1 => format!("one {model} core"),
        n => format!(
            "{n} {model} cores (CPUs {}, one trial process at a time on each); each record names its CPU",
            crate::host::format_cpu_list(&cpus.iter().copied().collect())
        ),
    };
    if shared {
        text.push_str(
            " (no CPU was left for the engine and the UI: they ran on the measuring CPUs, and the records say so)",
        );
    }
    text
}

/// The baseline RSS of this run's trial processes (the worker's share of every memory figure)
/// beside the harness's C driver's, as its published uHash records on arm_1 give it.
fn worker_footprint(records: &[&TimingRecord]) -> String {
    let mut baselines: Vec<u64> = records
        .iter()
        .filter(|r| r.status.is_complete() && r.baseline_rss_bytes > 0)
        .map(|r| r.baseline_rss_bytes)
        .collect();
    baselines.sort_unstable();
    let measured = match (baselines.first(), baselines.last()) {
        (Some(lo), Some(hi)) => format!(
            "trial processes of this run (`cyclescope-worker`, which links only the C library) started at {}–{} (median {}), library and buffers loaded",
            lo / 1024,
            format::kib(*hi),
            format::kib(baselines[baselines.len() / 2])
        ),
        _ => "no complete record of this run carries a baseline RSS".to_string(),
    };
    format!(
        "- Worker footprint: {measured}; the harness's C driver starts at {C_DRIVER_BASELINE} in its published uHash records (arm_1, another machine and other libraries), so compare baselines only between runs of one tool on one machine."
    )
}

/// The baseline RSS range of the harness's own driver in its published uHash records
/// (`hash-05` on arm_1, tests/fixtures/reference).
const C_DRIVER_BASELINE: &str = "1404–1468 KiB";

#[cfg(test)]
mod tests {
    use super::*;

    fn published(name: &str) -> TimingRecord {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/reference/harness-data/performance/data/arm_1/records/hash-05")
            .join(name);
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn the_worker_footprint_line_gives_the_run_s_range_beside_the_c_driver_s() {
        let a = published("uHash-1024__hash_1024.json");
        let b = published("uHash-1024__hash_128.json");
        let c = published("uHash-1024__hash_16384.json");
        let line = worker_footprint(&[&a, &b, &c]);
        assert!(
            line.contains("started at 1404–1416 KiB (median 1408 KiB)"),
            "{line}"
        );
        assert!(line.contains("C driver starts at 1404–1468 KiB"), "{line}");
        let none = worker_footprint(&[]);
        assert!(none.contains("no complete record"), "{none}");
    }

    fn additions(cpu: usize, shared: bool) -> crate::record::Additions {
        serde_json::from_value(serde_json::json!({
            "version": "0.1.0", "mode": "guide", "cycle_source": "tsc",
            "reference_cycles": true, "per_call_source": "tsc",
            "timer_overhead_ticks": 40.0, "per_call": null, "per_call_by_process": [],
            "trial_spread": null, "preempted_ns_by_trial": [], "histogram_v2_base64": null,
            "elf_load_bytes": null, "measurement_cpu": cpu, "engine_shared_cpu": shared,
            "worker": "cyclescope-worker", "tui_attached": false, "host_problems": [],
            "failure": null
        }))
        .unwrap()
    }

    #[test]
    fn a_run_on_several_cpus_names_them_all() {
        let (a, b, c) = (additions(1, false), additions(1, false), additions(0, true));
        assert_eq!(measuring_cores("EPYC", &[&a, &b]), "one EPYC core");
        let both = measuring_cores("EPYC", &[&a, &c, &b]);
        assert!(
            both.starts_with("2 EPYC cores (CPUs 0-1, one trial process at a time on each)"),
            "{both}"
        );
        assert!(both.contains("no CPU was left for the engine"), "{both}");
    }

    #[test]
    fn the_c_driver_range_is_the_published_uhash_records_range() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "../../tests/fixtures/reference/harness-data/performance/data/arm_1/records/hash-05",
        );
        let kib: Vec<u64> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| published(e.unwrap().file_name().to_str().unwrap()))
            .map(|r| r.baseline_rss_bytes / 1024)
            .collect();
        let range = format!(
            "{}–{} KiB",
            kib.iter().min().unwrap(),
            kib.iter().max().unwrap()
        );
        assert_eq!(range, C_DRIVER_BASELINE);
    }
}
