//! `cyclescope run`: the headless frontend of the engine — KAT gate, host check, plan,
//! measurement, with live progress on stderr (bar, current job, ETA) and the report's §4 table
//! at the end. `--resume RUN_DIR` finishes a run from its campaign.json alone.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::Context;
use clap::Args;

mod progress;
#[cfg(test)]
mod same_request;

use progress::Progress;

use super::{InstanceArgs, arg_value};
use crate::campaign::{self, RequestOverrides, RunRequest};
use crate::record::run_dir::read_campaign;
use crate::vocabulary::{EngineEvent, JobKey, JobSummary};

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub select: InstanceArgs,
    /// Message lengths in bytes (default: the config's, the guide's 32…65536).
    #[arg(long, value_delimiter = ',', value_name = "BYTES", value_parser = arg_value::length)]
    pub lengths: Option<Vec<u64>>,
    /// Measurement CPU (default: the config's, else the highest-numbered online CPU).
    #[arg(long, value_parser = arg_value::cpu, conflicts_with = "cpus")]
    pub cpu: Option<usize>,
    /// Several measurement CPUs (`2-7`, `0,2,4`): one worker each, jobs of whole instances
    /// dealt out to them; SMT siblings are refused.
    #[arg(long, value_name = "LIST", value_parser = arg_value::cpus)]
    pub cpus: Option<arg_value::CpuList>,
    /// Measure only slice K of N of the instances (1-based), for one of N machines or
    /// processes; `cyclescope merge` joins the slices.
    #[arg(long, value_name = "K/N", value_parser = arg_value::shard, conflicts_with = "resume")]
    pub shard: Option<crate::campaign::Shard>,
    /// Balance the shards by the wall time of each instance's records in these earlier runs
    /// (the harness's prior costs); without it each instance counts alike.
    #[arg(long, value_name = "RUN_DIR", requires = "shard", num_args = 1..)]
    pub costs_from: Vec<PathBuf>,
    /// Run directory to create (default: <runs_dir>/<hostname>-<UTC time>).
    #[arg(long, value_name = "RUN_DIR")]
    pub out: Option<PathBuf>,
    /// Seconds one trial aims at (the guide: 1.0).
    #[arg(long, value_name = "S", value_parser = arg_value::trial_target)]
    pub trial_target: Option<f64>,
    /// Trials per job (the guide: 5).
    #[arg(long, value_name = "K", value_parser = arg_value::trials)]
    pub trials: Option<u32>,
    /// Seconds of measured time allowed per job.
    #[arg(long, value_name = "S", value_parser = arg_value::op_budget)]
    pub op_budget: Option<f64>,
    /// Adaptive mode: add trials until the 95 % CI of the mean is within this fraction of it
    /// (e.g. 0.01), instead of the guide's fixed trials; pair it with a short --trial-target.
    #[arg(long, value_name = "FRACTION", value_parser = arg_value::fraction)]
    pub adaptive: Option<f64>,
    /// Most trials per job in adaptive mode.
    #[arg(long, value_name = "K", default_value_t = 30, requires = "adaptive", value_parser = arg_value::max_trials)]
    pub max_trials: u32,
    /// Seconds before a KAT worker is killed.
    #[arg(long, value_name = "S", value_parser = arg_value::kat_timeout)]
    pub kat_timeout: Option<f64>,
    /// Measure even if the host check finds problems (they are stored with the run).
    #[arg(long)]
    pub allow_unfixed_host: bool,
    /// Time instances whose KAT did not pass (records are flagged kat_not_passed).
    #[arg(long)]
    pub allow_kat_fail: bool,
    /// Continue the run in RUN_DIR (same instances, lengths, CPU and planning).
    #[arg(long, value_name = "RUN_DIR", conflicts_with_all = ["out", "lengths"])]
    pub resume: Option<PathBuf>,
    /// Print the results as JSON on stdout instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Address-space limit of each trial process, MiB (RLIMIT_AS; default 8192).
    #[arg(long, value_name = "MIB", value_parser = arg_value::address_space_mib)]
    pub max_address_space_mib: Option<u64>,
    /// CPU-time limit of each trial process, seconds (RLIMIT_CPU; default none).
    #[arg(long, value_name = "S", value_parser = arg_value::cpu_seconds)]
    pub max_cpu_seconds: Option<u64>,
    /// Kill any worker after S seconds, whatever the plan allows (tests).
    #[arg(long, hide = true, value_name = "S", value_parser = arg_value::timeout_cap)]
    pub timeout_cap: Option<f64>,
    /// Read sysfs/procfs below DIR for the host check (fixture trees).
    #[arg(long, hide = true, value_name = "DIR")]
    pub host_root: Option<PathBuf>,
}

pub fn run(config: Option<&Path>, args: &RunArgs) -> anyhow::Result<ExitCode> {
    let req = build_request(config, args)?;
    let cancel = Arc::new(AtomicBool::new(false));
    // Ctrl-C or a `kill` stops the workers, writes the cancelled state, and leaves a run that
    // `--resume` continues.
    crate::interrupt::stop_on_signals(&cancel).context("installing the signal handlers")?;
    let mut progress = Progress::new();
    let mut results: Vec<Row> = Vec::new();
    let outcome = campaign::run(
        &req,
        &mut |ev| {
            if let EngineEvent::JobFinished {
                job,
                summary,
                record,
                ..
            } = &ev
            {
                results.push(Row::from(job, summary, &req.run_dir, record));
            }
            progress.show(&ev);
        },
        &cancel,
    )?;
    progress.clear();
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&results)?);
    } else {
        out!("{}", results_table(&results));
    }
    eprintln!(
        "run directory: {}  ({} measured, {} failed, {} not measured for their KAT, {} already complete)",
        crate::catalog::display_path(&req.run_dir),
        outcome.finished,
        outcome.failed,
        outcome.kat_blocked,
        outcome.skipped
    );
    if outcome.cancelled {
        eprintln!(
            "cancelled: `cyclescope run --resume {}` continues it",
            crate::catalog::display_path(&req.run_dir)
        );
    }
    Ok(
        if outcome.failed == 0 && outcome.kat_blocked == 0 && !outcome.cancelled {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        },
    )
}

/// The run request of these arguments: the one builder, settings first, flags on top.
fn build_request(config: Option<&Path>, args: &RunArgs) -> anyhow::Result<RunRequest> {
    let base = super::select::load_catalog(config)?;
    let req = match &args.resume {
        Some(dir) => {
            let c = read_campaign(dir)?;
            RunRequest::resume(&base.settings, c, dir.clone(), overrides(args))?
        }
        None => {
            let (catalog, instances) = args.select.resolve(config, false)?;
            let out = args
                .out
                .clone()
                .unwrap_or_else(|| default_run_dir(&catalog.settings.runs_dir));
            if out.join("campaign.json").exists() {
                anyhow::bail!(
                    "{} already holds a run; use --resume {} to continue it",
                    out.display(),
                    out.display()
                );
            }
            RunRequest::build(&catalog.settings, instances, out, overrides(args))?
        }
    };
    std::fs::create_dir_all(&req.run_dir)
        .with_context(|| format!("creating {}", req.run_dir.display()))?;
    Ok(req)
}

/// What the flags set on top of the settings.
fn overrides(args: &RunArgs) -> RequestOverrides {
    RequestOverrides {
        lengths: args.lengths.clone(),
        cpu: args.cpu,
        cpus: args.cpus.clone().map(|c| c.0),
        shard: args.shard,
        shard_costs: prior_costs(&args.costs_from),
        trials: args.trials,
        trial_target_s: args.trial_target,
        op_budget_s: args.op_budget,
        adaptive: args.adaptive.map(|p| (p, args.max_trials)),
        kat_timeout_s: args.kat_timeout,
        max_address_space_mib: args.max_address_space_mib,
        max_cpu_seconds: args.max_cpu_seconds,
        timeout_cap_s: args.timeout_cap,
        host_root: args.host_root.clone(),
        allow_unfixed_host: args.allow_unfixed_host,
        allow_kat_fail: args.allow_kat_fail,
        tui_attached: false,
        kat_passed: Default::default(),
    }
}

/// Seconds of measurement per instance (`candidate/label`): Σ of its records' process wall
/// times over `runs`, as the harness balances its shards.
fn prior_costs(runs: &[PathBuf]) -> std::collections::BTreeMap<String, f64> {
    let mut costs = std::collections::BTreeMap::new();
    for run in runs {
        for (key, s) in crate::record::run_dir::instance_wall_seconds(run) {
            *costs.entry(key).or_insert(0.0) += s;
        }
    }
    costs
}

fn default_run_dir(runs_dir: &Path) -> PathBuf {
    let host = sysinfo::System::host_name().unwrap_or_else(|_| "host".to_string());
    runs_dir.join(format!(
        "{host}-campaign-{}",
        chrono::Utc::now().format("%Y%m%dT%H%M%SZ")
    ))
}

/// One finished job, as `--json` prints it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    #[serde(flatten)]
    pub job: JobKey,
    #[serde(flatten)]
    pub summary: JobSummary,
    /// What measured it (counter, clock, CPU), from the record.
    pub measured_by: String,
}

impl Row {
    fn from(job: &JobKey, s: &JobSummary, run_dir: &Path, record: &Path) -> Self {
        let source = s.cycle_source.map_or("", crate::counter::CycleSource::name);
        let measured_by = std::fs::read(run_dir.join(record))
            .ok()
            .and_then(|b| serde_json::from_slice::<crate::record::TimingRecord>(&b).ok())
            .map(|r| {
                let reference = r.cyclescope.as_ref().is_some_and(|a| a.reference_cycles);
                crate::report::measured_by(&r.environment, source, reference)
            })
            .unwrap_or_else(|| format!("cycles: {source}"));
        Row {
            job: job.clone(),
            summary: s.clone(),
            measured_by,
        }
    }
}

/// The report's §4 table of the finished jobs, by instance and length, with the counter named.
pub fn results_table(rows: &[Row]) -> String {
    let mut rows = rows.to_vec();
    rows.sort_by(|a, b| (&a.job.label, a.job.input_bytes).cmp(&(&b.job.label, b.job.input_bytes)));
    let mut out = crate::report::perf_table(
        rows.iter()
            .map(|r| crate::report::perf_cells(&r.job, Some(&r.summary), None)),
    );
    // Why a figure carries ⚠ (the core's doubt rule), one line each.
    let notes = crate::report::doubt_notes(rows.iter().map(|r| (&r.job, &r.summary)));
    if !notes.is_empty() {
        out.push('\n');
        for note in notes {
            out += &format!("{note}\n");
        }
    }
    if let Some(first) = rows.first() {
        out += &format!("\n{}\n", first.measured_by);
    }
    out
}
