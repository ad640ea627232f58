//! The timing record, schema 2 (spec §5.1): field names and order exactly as the harness
//! writes them, so its validator and report generator read ours; cyclescope's additions live
//! in one trailing `cyclescope` object that the harness ignores. Reading a harness record with
//! this type works too (the additions are absent).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::counter::CycleSource;
use crate::kat::KatVerdict;
use crate::measure::TrialPlan;
use crate::measure::stats::{PerCall, Trial, TrialSpread};
use crate::vocabulary::{JobFailure, JobSummary, ProcessStatus, RecordStatus};

pub const SCHEMA: u32 = 2;

/// One driver process of a record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessRecord {
    pub(crate) status: ProcessStatus,
    pub exit_code: i32,
    /// META pairs of the driver, values as strings.
    pub meta: Map<String, Value>,
    pub(crate) trials: Vec<Trial>,
    pub stderr: String,
    pub(crate) command: Vec<String>,
    pub(crate) wall_s: f64,
    pub(crate) disturbed_retries: u32,
}

#[allow(non_snake_case)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimingRecord {
    pub(crate) schema: u32,
    pub status: RecordStatus,
    pub candidate: String,
    pub label: String,
    pub(crate) instance: String,
    pub(crate) variant: String,
    pub(crate) flags: String,
    pub(crate) operation: String,
    pub input_bytes: u64,
    pub plan: TrialPlan,
    pub kat: KatVerdict,
    pub(crate) kat_not_passed: bool,
    pub(crate) disturbed_retries: u32,
    pub(crate) library: String,
    pub(crate) library_sha256: String,
    pub(crate) kat_log: Option<String>,
    pub(crate) kat_log_sha256: Option<String>,
    pub(crate) started_utc: String,
    pub(crate) ended_utc: String,
    pub(crate) load_average_start: [f64; 3],
    pub(crate) load_average_end: [f64; 3],
    pub environment: Map<String, Value>,
    pub processes: Vec<ProcessRecord>,
    pub trials: Vec<Trial>,
    pub(crate) measurements: u64,
    pub(crate) guide_100_measurements_met: bool,
    pub(crate) mean_seconds: Option<f64>,
    pub(crate) median_trial_seconds: Option<f64>,
    pub(crate) min_trial_seconds: Option<f64>,
    pub(crate) max_trial_seconds: Option<f64>,
    pub mean_cycles: Option<f64>,
    pub(crate) median_trial_cycles: Option<f64>,
    pub(crate) operations_per_second: Option<f64>,
    pub(crate) throughput_MB_per_second: Option<f64>,
    pub(crate) sizes: Map<String, Value>,
    pub(crate) kex: Map<String, Value>,
    pub(crate) build_flags: String,
    pub(crate) baseline_rss_bytes: u64,
    pub(crate) peak_rss_bytes: u64,
    pub(crate) timing_scope: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cyclescope: Option<Additions>,
}

impl Additions {
    /// Loop-counter units per per-call tick: 1 for the same counter, core cycles per
    /// reference tick otherwise; None when the two cannot be compared.
    pub(crate) fn per_call_scale(&self) -> Option<f64> {
        if self.per_call_source == self.cycle_source {
            Some(1.0)
        } else if !self.reference_cycles {
            self.ref_to_core_ratio
        } else {
            None
        }
    }
}

/// What cyclescope measures beyond the harness.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Additions {
    pub(crate) version: String,
    /// `guide` (the harness's fixed trials) or `adaptive` (trials until the CI is tight).
    #[serde(default)]
    pub mode: String,
    /// The adaptive mode's target: relative 95 % CI half-width.
    #[serde(default)]
    pub adaptive_precision: Option<f64>,
    /// What the loop counter counted (`perf_event:cpu-cycles:u`, `tsc`, …).
    #[serde(with = "crate::counter::source_or_empty")]
    pub cycle_source: Option<CycleSource>,
    /// True when `mean_cycles` are reference (TSC/cntvct) ticks, not core cycles.
    pub reference_cycles: bool,
    /// Core cycles per reference tick from the clock probe, when both were available.
    pub(crate) ref_to_core_ratio: Option<f64>,
    /// The per-call counter and its measured overhead (subtracted from every sample).
    #[serde(with = "crate::counter::source_or_empty")]
    pub per_call_source: Option<CycleSource>,
    pub timer_overhead_ticks: f64,
    pub per_call: Option<PerCall>,
    /// Per-call figures of each trial process, in order.
    pub(crate) per_call_by_process: Vec<PerCall>,
    pub trial_spread: Option<TrialSpread>,
    /// The protections the measuring workers were under, read from outside
    /// (`worker::observed`), with what any gap lets a candidate do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protections: Option<crate::worker::observed::Observed>,
    /// The figure preemption cannot move (`measure::robust`), in the loop counter's units.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub robust: Option<crate::measure::robust::Robust>,
    /// Per kept trial, nanoseconds the worker waited for the CPU during the loop.
    pub(crate) preempted_ns_by_trial: Vec<Option<u64>>,
    /// The per-call hdrhistogram, V2 serialisation, base64.
    pub histogram_v2_base64: Option<String>,
    pub elf_load_bytes: Option<u64>,
    /// The entry point measured, when not the ICCS `CryptHash` (`supercop`: `crypto_hash`).
    #[serde(default, skip_serializing_if = "crate::plugin::Abi::is_iccs")]
    pub abi: crate::plugin::Abi,
    pub(crate) measurement_cpu: usize,
    /// True when cyclescope's own threads ran on the measurement CPUs too (no other CPU was
    /// left to them, e.g. `--cpus 0-1` on two cores).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) engine_shared_cpu: bool,
    /// The program that hosted the trials (`cyclescope-worker` or `cyclescope worker`).
    pub(crate) worker: String,
    pub(crate) tui_attached: bool,
    /// Host problems accepted with `--allow-unfixed-host`.
    pub(crate) host_problems: Vec<String>,
    /// Why the record is not complete.
    pub failure: Option<JobFailure>,
    /// True for a baseline job the run added so that "× pseudoXOF" has a denominator (its
    /// instance was not selected); absent otherwise, so records of earlier versions read as is.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reference_job: bool,
    /// Whether each trial's clock was checked (with which witness), or why it could not be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_verification: Option<crate::measure::clock::ClockVerification>,
    /// Effective core clock of each kept trial, Hz (null where no witness measured it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clock_hz_by_trial: Vec<Option<f64>>,
    /// The KAT gate's conformance checks (`conform`), with the version of their rules; absent
    /// in records of earlier versions and where the KAT was carried over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conformance: Option<crate::conform::RecordedChecks>,
    /// The figure at each buffer layout of `run --layouts`, and their spread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layouts: Option<crate::measure::layout::LayoutSpread>,
    /// The fresh-message probe as the engine judged it (`measure::proof::ProbeFigure`): its
    /// CPU time per call by the kernel's clock beside the guide's fastest trial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fresh_probe: Option<crate::measure::proof::ProbeFigure>,
    /// The instruction count under valgrind (`cycle_source` `valgrind:callgrind:Ir`, where
    /// `mean_cycles` holds instructions per call): calls, instructions, simulated cache misses,
    /// the cycle estimate and its formula, and what the sandbox gave up under valgrind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<crate::counter::callgrind::InstructionCount>,
    /// The most memory any of the job's worker processes held, by its control group's account
    /// (read from outside: `jail::cgroup`); absent where the workers ran without one. The
    /// harness's `peak_rss_bytes` beside it is the trial worker's own report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_memory_bytes: Option<u64>,
    /// The CPU time, seconds, of all the job's worker processes: every process and thread
    /// that ran in their control groups (what the candidate forked or started included), by
    /// the groups' account (`jail::cgroup`); absent where a worker had no CPU account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_time_s: Option<f64>,
    /// The KAT worker's account, by its control group, where this run ran the KAT (absent
    /// for a pass carried over or reused from the journal, or without a group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kat_worker: Option<WorkerAccount>,
}

/// What a worker's control group counted of it, read from outside.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WorkerAccount {
    /// The most memory it and all it started held at once, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_memory_bytes: Option<u64>,
    /// The CPU time of every thread and process in its group, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_time_s: Option<f64>,
}

impl WorkerAccount {
    /// The account of a worker with `peak` memory and `cpu` time; None when neither is known.
    pub fn of(peak: Option<u64>, cpu: Option<std::time::Duration>) -> Option<Self> {
        (peak.is_some() || cpu.is_some()).then(|| Self {
            peak_memory_bytes: peak,
            cpu_time_s: cpu.map(|d| d.as_secs_f64()),
        })
    }
}

impl Additions {
    /// The loop counter's name as pages print it (empty when the record names none).
    pub fn cycle_source_name(&self) -> &'static str {
        self.cycle_source.map_or("", CycleSource::name)
    }
}

impl TimingRecord {
    /// `records/<candidate>/<label>__hash_<bytes>.json`, relative to the run directory.
    pub(crate) fn relative_path(
        candidate: &str,
        label: &str,
        input_bytes: u64,
    ) -> std::path::PathBuf {
        std::path::Path::new("records")
            .join(candidate)
            .join(format!("{label}__hash_{input_bytes}.json"))
    }

    /// The KAT log, relative to the run directory, when the run wrote one.
    pub fn kat_log(&self) -> Option<&str> {
        self.kat_log.as_deref()
    }

    /// The output width, from `sizes.digest_bytes` (hash records carry it).
    pub fn digest_bits(&self) -> Option<u32> {
        let bytes = self.sizes.get("digest_bytes")?.as_u64()?;
        u32::try_from(bytes * 8).ok()
    }

    /// The job this record measured.
    pub fn job_key(&self) -> crate::vocabulary::JobKey {
        crate::vocabulary::JobKey {
            candidate: self.candidate.clone(),
            label: self.label.clone(),
            input_bytes: self.input_bytes,
        }
    }

    /// The figures a frontend shows for this record (the engine's `JobFinished` summary).
    pub fn summary(&self) -> JobSummary {
        let add = self.cyclescope.as_ref();
        JobSummary {
            status: self.status,
            kat: self.kat.clone(),
            mean_cycles: self.mean_cycles,
            mean_seconds: self.mean_seconds.unwrap_or(0.0),
            throughput_mb_per_second: self.throughput_MB_per_second.unwrap_or(0.0),
            measurements: self.measurements,
            trials: self.plan.trials,
            iterations_per_trial: self.plan.iterations_per_trial,
            cycle_source: add.and_then(|a| a.cycle_source),
            per_call: add.and_then(|a| a.per_call),
            disturbed_retries: self.disturbed_retries,
            ci95_relative: add.and_then(|a| a.trial_spread).map(|s| s.ci95_relative),
            robust: add.and_then(|a| a.robust.clone()),
            doubts: crate::measure::doubt::doubts(&self.evidence()),
            layouts: add.and_then(|a| a.layouts.clone()).map(Box::new),
            cpu_wait: add.and_then(|a| {
                let seconds: Vec<f64> = self.trials.iter().map(|t| t.seconds).collect();
                crate::vocabulary::RunQueueWait::of_trials(&seconds, &a.preempted_ns_by_trial)
            }),
        }
    }

    /// What the doubt rule reads from this record.
    fn evidence(&self) -> crate::measure::doubt::Evidence<'_> {
        let add = self.cyclescope.as_ref();
        // Loop units per per-call tick: the same counter, or core cycles per reference tick.
        let per_call_scale = add.and_then(Additions::per_call_scale);
        crate::measure::doubt::Evidence {
            status: &self.status,
            kat: &self.kat,
            measurements: self.measurements,
            mean_cycles: self.mean_cycles,
            trials: &self.trials,
            preempted_ns: add.map_or(&[], |a| &a.preempted_ns_by_trial),
            fixed_clock_hz: crate::host::fixed_clock_hz(&self.environment),
            per_call: add.and_then(|a| a.per_call),
            per_call_scale,
            ci95_relative: add.and_then(|a| a.trial_spread).map(|s| s.ci95_relative),
            exact: add.is_some_and(|a| a.cycle_source.is_some_and(|c| c.is_exact())),
            failed_check: add
                .and_then(|a| a.conformance.as_ref())
                .and_then(|c| crate::conform::first_failure(&c.checks))
                .map(|r| r.check),
            fresh_probe: add.and_then(|a| a.fresh_probe.as_ref()),
        }
    }
}

/// The `sizes` object of a hash record.
pub(crate) fn hash_sizes(input_bytes: u64, digest_bytes: u64) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("input_bytes".into(), input_bytes.into());
    for k in [
        "pk_bytes",
        "sk_bytes",
        "ct_bytes",
        "ss_bytes",
        "signature_bytes",
    ] {
        m.insert(k.into(), 0.into());
    }
    m.insert("digest_bytes".into(), digest_bytes.into());
    m
}
