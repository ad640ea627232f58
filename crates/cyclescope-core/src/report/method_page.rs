//! The method page `performance/method_<ID>.md`: how the figures were taken, assembled from
//! campaign.json (planning, flags, CPUs) and facts counted over the dataset (`MethodFacts`).
//! Facts that only a full campaign has (the profile tick counter, deferred instances) come in
//! through `MethodFacts` too. Never reads files.

use std::collections::BTreeSet;

use serde_json::Value;

use super::dataset::Dataset;
use super::host_view::HostView;
use crate::format;

/// The ICCS-share section's fixed text (the profiling method of the harness).
const SHARE_INTRO: &str = "Each reference library is relinked with link-time wrappers (`-Wl,--wrap`) around `pseudohash`, `pseudoXOF`, `sm3hash` and the DRNG's `get_random_number`. Every call that crosses an object-file boundary is timed with the CPU tick counter and recorded with its input and output length; nested calls are not counted twice. The reported share is the time inside these functions divided by the time of the whole operation, measured in the same process on the same inputs as the benchmark. The wrappers cost a few tens of cycles per call.";
const ICCS_TIMED: &str = include_str!("method_iccs.md");

/// Counted facts behind the method page.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodFacts {
    pub records: usize,
    /// Every CPU a record was timed on, plus the shard CPUs.
    pub cores: BTreeSet<u64>,
    pub shard_cores: BTreeSet<u64>,
    /// `<cand> <label>` of instances timed off the shard CPUs, in natural order.
    pub deferred: Vec<String>,
    /// The profiler's tick counter and its frequency (Hz), from profile records.
    pub tick: Option<(String, f64)>,
}

impl MethodFacts {
    pub(crate) fn count(ds: &Dataset) -> Self {
        let shard_cores: BTreeSet<u64> = ds
            .campaign
            .get("shard_cpus")
            .and_then(Value::as_object)
            .map(|m| m.values().filter_map(Value::as_u64).collect())
            .unwrap_or_default();
        let mut cores = shard_cores.clone();
        let mut deferred = Vec::new();
        for (_, r) in &ds.records {
            if let Some(cpu) = r.environment.get("cpu_number").and_then(Value::as_u64) {
                cores.insert(cpu);
                let name = format!("{} {}", r.candidate, r.label);
                if !shard_cores.is_empty()
                    && !shard_cores.contains(&cpu)
                    && !deferred.contains(&name)
                {
                    deferred.push(name);
                }
            }
        }
        deferred.sort_by(|a, b| super::dataset::natural_cmp(a, b));
        Self {
            records: ds.records.len(),
            cores,
            shard_cores,
            deferred,
            tick: None,
        }
    }
}

fn list(set: &BTreeSet<u64>) -> String {
    set.iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn render(host: &HostView, ds: &Dataset, facts: &MethodFacts) -> String {
    let id = &host.system_id;
    let plan = ds.campaign.get("planning").cloned().unwrap_or(Value::Null);
    let num = |k: &str| plan.get(k).and_then(Value::as_f64);
    let description = host
        .description
        .clone()
        .unwrap_or_else(|| format!("{}, one core", host.cpu_model()));
    let cpu = host.cpu.map_or(String::new(), |c| format!("CPU {c}; "));
    let clock = host.clock_text();
    let pinned = clock.starts_with("fixed ");
    let mut l = vec![
        format!("# Performance method and limitations — system {id}"),
        String::new(),
        format!("System {id}: {description}. [Summary](summary_{id}.md)."),
        String::new(),
        "## Measurement".into(),
        String::new(),
    ];
    let counter = if host.harness {
        "Cycles come from the hardware counter (`perf_event_open`, user mode); time from `CLOCK_MONOTONIC_RAW`.".to_string()
    } else {
        let source = ds
            .records
            .first()
            .and_then(|(_, r)| r.cyclescope.as_ref())
            .map_or("an unknown counter".to_string(), |a| {
                format!("`{}`", a.cycle_source_name())
            });
        format!(
            "Cycles come from {source} (as stored in each record); time from `CLOCK_MONOTONIC_RAW`."
        )
    };
    let state = if pinned {
        let ghz = clock
            .trim_start_matches("fixed ")
            .split(' ')
            .next()
            .unwrap_or("");
        format!(
            "clock pinned at {ghz} GHz on the clusters of the timing cores: `performance` governor with minimum = maximum frequency, below the level at which the firmware's thermal limiter intervenes; boost off; no SMT; hardware cycle counter available"
        )
    } else {
        clock.clone()
    };
    l.push(format!(
        "- One {} core ({cpu}{clock}). {counter} All {} timing records were taken in this state ({state}), as stored in each record. A trial that ran below 95% of that clock was repeated, up to twice.",
        host.cpu_model(),
        facts.records
    ));
    let arch = ds.campaign.get("arch_config");
    match (
        arch.and_then(|a| a.get("reference")).and_then(Value::as_str),
        ds.campaign.get("harness_additions").and_then(Value::as_str),
    ) {
        (Some(reference), Some(additions)) => l.push(format!(
            "- Reference builds use the guide's flags `{reference}` plus `{additions}` for shared libraries and pre-C99 declarations; an instance that fails to build or to pass its KATs that way is rebuilt with the harness defaults, and its page says so. Optimized builds use the guide's performance flags."
        )),
        _ => l.push("- Libraries are timed as given (cyclescope does not build them); each record states the build flags the library reports.".into()),
    }
    l.push("- Every library is checked against the submitted KAT vectors before timing. Instances whose vectors are not reproduced by the submitted code are still timed and are marked ⚠, with the identified cause on their candidate page (`performance/kat_issues.csv`); an instance without a reference source of its own is not timed. The DRNG is seeded with bytes 00..2f; signatures use a 64-byte message; hash inputs are the guide's S1–S8 lengths.".into());
    let show = |x: Option<f64>| x.map_or(format::MISSING.to_string(), format::plain);
    l.push(format!(
        "- Each operation is calibrated with one call, then measured in {} trials. Trials normally run in separate processes (fresh address-space layout); if setup takes more than {} s, the trials share one process. Each trial runs a fixed number of calls, targeting {} s and at least {} calls in total; if that would exceed {} minutes, fewer calls are used, but never fewer than one per trial. No operation is cut short by a time limit.",
        show(num("trials")),
        show(num("separate_process_setup_s")),
        show(num("trial_target_s")),
        show(num("min_total")),
        show(num("op_budget_s").map(|s| s / 60.0)),
    ));
    l.push("- Reported cycles are the arithmetic mean over all timed calls (the guide's metric); the median of the trial means is also recorded as a robustness check.".into());
    l.push("- Key exchange: `exchange` covers both initialisations, every pass and both key derivations of one protocol run (no network time); single steps are timed call by call.".into());
    l.push(String::new());
    l.push("## Share of the ICCS placeholder functions".into());
    l.push(String::new());
    let mut share = SHARE_INTRO.to_string();
    if let Some((source, hz)) = &facts.tick {
        share += &format!(
            " On this system the tick counter is `{source}` at {} MHz, so a single short call is resolved only to about {:.0} ns; the rounding is unbiased and averages out over the many calls that make up a share.",
            format::plain(hz / 1e6),
            1e9 / hz
        );
    }
    l.push(share);
    l.push(String::new());
    l.extend(ICCS_TIMED.lines().map(str::to_string));
    l.push("## Limitations".into());
    l.push(String::new());
    l.push("- Static and peak memory are process-level proxies (ELF image, VmHWM), not isolated algorithm memory.".into());
    l.push("- The ICCS share covers only the three helper functions; candidates that implement their own SHAKE/AES/SM3 show that time as non-symmetric (see the survey).".into());
    l.push("- Link-time wrapping is not reliable with LTO, so shares are measured on reference builds.".into());
    l.push("- The complete functional test vectors are referenced by digest, not embedded.".into());
    l.push("- Very slow operations have fewer than 100 timed calls; their pages say how many. Operations too slow for more than one call use their calibration call as the measurement.".into());
    l.push(cores_line(facts));
    l.push("- A single key-exchange step is timed around each call, so its wall time includes the counter start/stop system calls (a floor of roughly a microsecond); its user-mode cycle count does not. The `exchange` figure has no such overhead.".into());
    l.push(String::new());
    l.join("\n") + "\n"
}

fn cores_line(f: &MethodFacts) -> String {
    if f.cores.len() <= 1 {
        return format!(
            "- Timing ran on core {}; each record states its CPU.",
            list(&f.cores)
        );
    }
    let mut text = format!("- Timing ran in parallel on cores {}.", list(&f.cores));
    if !f.shard_cores.is_empty() {
        text += &format!(
            " The instances were divided among cores {} by expected run time",
            list(&f.shard_cores)
        );
        if f.deferred.is_empty() {
            text += ".";
        } else {
            text += &format!(
                "; the slowest instances ({}) ran on a further core.",
                f.deferred.join(", ")
            );
        }
    }
    text + " All operations of one instance ran on the same core, and each record states its CPU. Cycle counts are comparable across these identical cores."
}
