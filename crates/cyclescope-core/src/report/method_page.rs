//! The method page `performance/method_<ID>.md` of a harness dataset: the published page's
//! headings, with cyclescope's own sentences saying how the harness took the figures (system,
//! counter, clock control, builds, KAT gate, plan), assembled from campaign.json (planning,
//! flags, CPUs) and facts counted over the dataset (`MethodFacts`).
//! Facts that only a full campaign has (the profile tick counter, deferred instances) come in
//! through `MethodFacts` too. Never reads files.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::dataset::Dataset;
use super::host_view::HostView;
use crate::format;

/// How the harness finds the share of the ICCS helpers (its profiler), in our words.
const SHARE_METHOD: &str = "To find the share, the harness relinks each reference library with `-Wl,--wrap` wrappers for `pseudohash`, `pseudoXOF`, `sm3hash` and `get_random_number` (the DRNG). A wrapper reads the CPU tick counter around every call that goes from one object file into another and logs the call's input and output lengths; a wrapped call made from inside another one is counted once. The share is the time spent inside these functions over the operation's total, both taken in one process on the benchmark's own inputs. Each wrapper adds some tens of cycles to a call.";
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
    let description = host
        .description
        .clone()
        .unwrap_or_else(|| format!("{}, one core", host.cpu_model()));
    let mut l = vec![
        format!("# Performance method and limitations — system {id}"),
        String::new(),
        format!(
            "Measured on system {id} — {description}. The figures themselves are on the [summary](summary_{id}.md)."
        ),
        String::new(),
        "## Measurement".into(),
        String::new(),
    ];
    l.extend(measurement(host, ds, facts));
    l.push(String::new());
    l.push("## Share of the ICCS placeholder functions".into());
    l.push(String::new());
    let mut share = SHARE_METHOD.to_string();
    if let Some((source, hz)) = &facts.tick {
        share += &format!(
            " Here the tick counter is `{source}`, running at {} MHz: one tick is about {:.0} ns, coarser than a short call, but the rounding has no bias and cancels out across all the calls behind a share.",
            format::plain(hz / 1e6),
            1e9 / hz
        );
    }
    l.push(share);
    l.push(String::new());
    l.extend(ICCS_TIMED.lines().map(str::to_string));
    l.push("## Limitations".into());
    l.push(String::new());
    l.extend([
        "- Memory figures describe the process (ELF load size, VmHWM), not the algorithm on its own.".to_string(),
        "- The share counts the three ICCS helpers only: time a candidate spends in its own SHAKE, AES or SM3 code falls outside it (the survey lists such cases).".into(),
        "- Shares come from reference builds, because `--wrap` cannot be trusted once LTO is on.".into(),
        "- The full functional test vectors are not copied here; their digests identify them.".into(),
        "- An operation too slow for 100 timed calls shows the count it reached on its page; where only one call fitted, the calibration call is the measurement.".into(),
        cores_line(facts),
        "- The wall time of a single key-exchange step includes the system calls that start and stop the counter (about a microsecond at least); its user-mode cycles do not, and the whole-run `exchange` figure carries no such cost.".into(),
        String::new(),
    ]);
    l.join("\n") + "\n"
}

/// The `## Measurement` bullets: where, with which counter, under which clock control, how
/// built, the KAT gate, the plan and the metric.
fn measurement(host: &HostView, ds: &Dataset, facts: &MethodFacts) -> Vec<String> {
    let plan = ds.campaign.get("planning").cloned().unwrap_or(Value::Null);
    let num = |k: &str| plan.get(k).and_then(Value::as_f64);
    let show = |x: Option<f64>| x.map_or(format::MISSING.to_string(), format::plain);
    let cpu = host.cpu.map_or(String::new(), |c| format!(", CPU {c}"));
    let clock = host.clock_text();
    let counter = if host.harness {
        "the user-mode hardware cycle counter, read through `perf_event_open`".to_string()
    } else {
        ds.records
            .first()
            .and_then(|(_, r)| r.cyclescope.as_ref())
            .map_or("the counter each record names".to_string(), |a| {
                format!("`{}`", a.cycle_source_name())
            })
    };
    let mut l = vec![
        format!(
            "- Where: a single {} core{cpu}, {clock}. Each of the {} timing records stores this host state.",
            host.cpu_model(),
            facts.records
        ),
        format!("- Counter: cycles from {counter}; wall time from `CLOCK_MONOTONIC_RAW`."),
    ];
    if let Some(ghz) = clock
        .strip_prefix("fixed ")
        .and_then(|c| c.split(' ').next())
    {
        l.push(format!(
            "- Clock control: {ghz} GHz held on every core cluster used for timing (governor `performance` with equal minimum and maximum frequency); boost and SMT were off and the cycle counter was readable. A trial whose clock fell under 95 % of this value was run again, at most twice."
        ));
    }
    let arch = ds.campaign.get("arch_config");
    match (
        arch.and_then(|a| a.get("reference")).and_then(Value::as_str),
        ds.campaign.get("harness_additions").and_then(Value::as_str),
    ) {
        (Some(reference), Some(additions)) => l.push(format!(
            "- Builds: reference libraries were compiled with the guide's `{reference}`, to which the harness adds `{additions}` (needed for shared objects and for code written before C99). When an instance did not build, or failed its KATs, with those flags, the harness rebuilt it with its own defaults and its page notes that. Optimised variants use the guide's performance flags."
        )),
        _ => l.push("- Builds: cyclescope times each library as it was handed over (it builds nothing); every record keeps the build flags the library declares.".into()),
    }
    l.push(format!(
        "- KAT gate: before timing, each library's KAT output was compared with the vectors submitted with it. KAT status of the timed instances: {}. An instance whose submitted code does not reproduce its own vectors was timed anyway and carries ⚠, with the cause on its candidate page (from `performance/kat_issues.csv`); instances that lack their own reference code were left out. Inputs: the DRNG starts from the seed bytes 00..2f, signatures sign a 64-byte message, hashes take the guide's S1–S8 lengths.",
        kat_statuses(ds)
    ));
    l.push(format!(
        "- Plan: one calibration call per operation, then {} trials, each a fixed number of back-to-back calls sized for about {} s and together at least {} calls. An operation whose plan would take longer than {} minutes gets fewer calls, down to one per trial; no operation is ever stopped by a time limit. Each trial normally has a process of its own (so a fresh address-space layout); when setup takes more than {} s, one process runs all of them.",
        show(num("trials")),
        show(num("trial_target_s")),
        show(num("min_total")),
        show(num("op_budget_s").map(|s| s / 60.0)),
        show(num("separate_process_setup_s")),
    ));
    l.push("- Metric: the guide's figure, total cycles over total timed calls. The median of the per-trial means is stored as well, as a check against outliers.".into());
    l.push("- Key exchange: `exchange` times one whole protocol run from the two set-ups through all message passes to the two derived keys, with no network in between; single steps are timed one call at a time.".into());
    l
}

/// `15 PASS, 1 NOKAT`: how many instances (candidate and label) had each KAT status.
pub(crate) fn kat_statuses(ds: &Dataset) -> String {
    let mut by_instance: BTreeMap<(&str, &str), String> = BTreeMap::new();
    for (_, r) in &ds.records {
        by_instance.insert(
            (&r.candidate, &r.label),
            crate::sanitize::markdown(&r.kat.to_string()).into_owned(),
        );
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for kat in by_instance.values() {
        *counts.entry(kat.as_str()).or_default() += 1;
    }
    if counts.is_empty() {
        return format::MISSING.to_string();
    }
    counts
        .iter()
        .map(|(kat, n)| format!("{n} {kat}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn cores_line(f: &MethodFacts) -> String {
    if f.cores.len() <= 1 {
        return format!(
            "- Timing used core {} only; each record names its CPU.",
            list(&f.cores)
        );
    }
    let mut text = format!("- Timing used cores {} in parallel.", list(&f.cores));
    if f.shard_cores == f.cores {
        text.pop();
        text += ", the instances shared out among them by expected run time.";
    } else if !f.shard_cores.is_empty() {
        text += &format!(
            " Cores {} shared the instances out, balanced by expected run time",
            list(&f.shard_cores)
        );
        if f.deferred.is_empty() {
            text += ".";
        } else {
            text += &format!(
                "; the slowest ({}) were given another core.",
                f.deferred.join(", ")
            );
        }
    }
    text + " An instance kept one core for all its operations and each record names its CPU; the cores are identical, so their cycle counts compare directly."
}
