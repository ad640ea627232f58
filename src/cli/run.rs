//! `cyclescope run`: the headless frontend of the engine — KAT gate, host check, plan,
//! measurement, with live progress on stderr (bar, current job, ETA) and the report's §4 table
//! at the end. `--resume RUN_DIR` finishes a run from its campaign.json alone.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::Context;
use clap::Args;

pub(super) mod progress;
mod results;
#[cfg(test)]
mod same_request;

use progress::Progress;
pub use results::{Row, measured_by, results_table};

use super::{InstanceArgs, arg_value};
use crate::campaign::{self, RequestOverrides, RunRequest};
use crate::record::run_dir::read_campaign;
use crate::vocabulary::EngineEvent;

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub select: InstanceArgs,
    /// Message lengths in bytes (default: the config's, the guide's 32…65536).
    #[arg(long, value_delimiter = ',', value_name = "BYTES", value_parser = arg_value::length)]
    pub lengths: Option<Vec<u64>>,
    /// Measurement CPU (default: the config's, else the highest-numbered CPU this process may
    /// use).
    #[arg(long, value_parser = arg_value::cpu, conflicts_with = "cpus")]
    pub cpu: Option<usize>,
    /// Several measurement CPUs (`2-7`, `0,2,4`): one worker each, jobs of whole instances
    /// dealt out to them; SMT siblings are refused. `allowed`: one CPU per core of the CPUs
    /// this process may use (a taskset, a Slurm allocation), the first core left to cyclescope.
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
    /// Run a plan out of proportion: more than 1000 jobs (instances × lengths), or a message
    /// longer than 1 MiB
    #[arg(long)]
    pub allow_large_plan: bool,
    /// Time each job again with the message at 0…7 and the digest at 0, 8, …, 56 bytes past a
    /// 64-byte boundary, and show the lowest, median and highest figure beside the guide's
    #[arg(long)]
    pub layouts: bool,
    /// What each job counts: `cycles` (the guide's timed trials), `instructions` (the
    /// candidate's instructions per call, exact, from one process under valgrind, with a
    /// cache-simulated cycle estimate beside it) or `hw-instructions` (the PMU's retired
    /// `instructions:u` through perf_event, in the guide's timed trials; refused where the
    /// event does not open)
    #[arg(long, value_enum, default_value_t = CounterArg::Cycles)]
    pub counter: CounterArg,
    /// Continue the run in RUN_DIR (same instances, lengths, CPU and planning).
    #[arg(long, value_name = "RUN_DIR", conflicts_with_all = ["out", "lengths"])]
    pub resume: Option<PathBuf>,
    #[command(flatten)]
    pub output: super::output::OutputFormat,
    /// The candidate whose pseudoXOF-<bits> the `× pseudoXOF` column divides by, measured as a
    /// reference job when the selection lacks it (default: the config's `baseline`, `iccs`;
    /// `iccs-c`: the official C helpers).
    #[arg(long, value_name = "CANDIDATE", value_parser = arg_value::name)]
    pub baseline: Option<String>,
    /// Measure only the selection: no reference job for a missing baseline (its × pseudoXOF
    /// stays empty).
    #[arg(long)]
    pub no_reference_jobs: bool,
    /// Address-space limit of each worker, MiB (RLIMIT_AS; default:
    /// $CYCLESCOPE_MAX_ADDRESS_SPACE_MIB, else settings max_address_space_mib, else 2048).
    #[arg(long, value_name = "MIB", value_parser = arg_value::address_space_mib)]
    pub max_address_space_mib: Option<u64>,
    /// CPU-time limit of each trial process, seconds (RLIMIT_CPU; default none).
    #[arg(long, value_name = "S", value_parser = arg_value::cpu_seconds)]
    pub max_cpu_seconds: Option<u64>,
    /// Kill any worker after S seconds, whatever the plan allows (tests).
    #[arg(long, hide = true, value_name = "S", value_parser = arg_value::timeout_cap)]
    pub timeout_cap: Option<f64>,
    /// Apply `cyclescope tune`'s plan for the measurement CPU before measuring (root only) and
    /// restore it when the run ends, however it ends.
    #[arg(long)]
    pub tune: bool,
    /// Read sysfs/procfs below DIR for the host check (fixture trees).
    #[arg(long, hide = true, value_name = "DIR")]
    pub host_root: Option<PathBuf>,
}

pub fn run(config: Option<&Path>, args: &RunArgs) -> anyhow::Result<ExitCode> {
    let req = build_request(config, args)?;
    // Restored when this value drops: at the end of the run, on an error, after a signal.
    let _tuning = if args.tune {
        Some(tune_for(&req)?)
    } else {
        None
    };
    let cancel = Arc::new(AtomicBool::new(false));
    // Ctrl-C or a `kill` stops the workers, writes the cancelled state, and leaves a run that
    // `--resume` continues.
    crate::interrupt::stop_on_signals(&cancel).context("installing the signal handlers")?;
    let mut progress = Progress::new(&req);
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
                results.push(Row::from(&req, job, summary, record));
            }
            progress.show(&ev);
        },
        &cancel,
    )?;
    progress.clear();
    // The whole run's table: a resumed run's earlier jobs too.
    results::add_from_folder(&req, &mut results);
    results::with_ratios(&mut results, &req.baseline);
    let missing = results::missing_line(&req, &results);
    match args.output.format() {
        super::output::Format::Json => outln!("{}", serde_json::to_string_pretty(&results)?),
        super::output::Format::Csv => out!("{}", results::csv(&results)),
        super::output::Format::Markdown => {
            out!(
                "{}",
                results_table(&results, &req.baseline, Some(&req.run_dir))
            );
            if let Some(line) = &missing {
                outln!("{line}");
            }
        }
    }
    if let Some(line) = missing
        .as_ref()
        .filter(|_| args.output.format() != super::output::Format::Markdown)
    {
        eprintln!("cyclescope: {line}");
    }
    eprintln!(
        "run directory: {}  ({} measured, {} failed, {} not measured for their KAT, {} already complete)",
        crate::sanitize::terminal_path(&req.run_dir),
        outcome.finished,
        outcome.failed,
        outcome.kat_blocked,
        outcome.skipped
    );
    if outcome.cancelled {
        eprintln!(
            "cancelled: `cyclescope run --resume {}` continues it",
            crate::sanitize::shell_path(&req.run_dir)
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

/// Applies the tuning plan for the run's CPU on its host root, owned by this process.
fn tune_for(req: &RunRequest) -> anyhow::Result<super::tune::HeldTuning> {
    let root = crate::host::HostRoot::new(req.host_root.clone());
    if !root.is_system() {
        super::tune::recover_at_start(&root);
    }
    if req.cpus.len() > 1 {
        anyhow::bail!(
            "--tune holds one CPU's tuning; for a run on CPUs {:?}, tune each first with \
             `cyclescope tune --cpu N --apply` (and `tune --restore` after)",
            req.cpus
        );
    }
    let plan = crate::tune::plan(&root, req.cpu(), std::process::id())?;
    for line in plan.lines() {
        eprintln!("cyclescope: tune: {line}");
    }
    let (held, lines) = super::tune::HeldTuning::apply(&plan)?;
    for line in lines {
        eprintln!("cyclescope: {line}");
    }
    Ok(held)
}

/// The run request of these arguments: the one builder, settings first, flags on top.
fn build_request(config: Option<&Path>, args: &RunArgs) -> anyhow::Result<RunRequest> {
    let base = super::select::load_catalog(config)?;
    let req = match &args.resume {
        Some(dir) => {
            let c = read_campaign(dir)?;
            RunRequest::resume(
                &base.settings,
                c,
                dir.clone(),
                RequestOverrides {
                    journal: crate::journal::JournalTarget::of_setting(
                        base.settings.journal.as_deref(),
                    ),
                    ..overrides(args)
                },
            )?
        }
        None => {
            let (catalog, instances) = args.select.resolve(config, true)?;
            let src = &args.select.source;
            if args.select.labels.is_empty()
                && src.lib.is_none()
                && src.scan.is_none()
                && src.src.is_none()
            {
                eprintln!(
                    "cyclescope: no label given: measuring the whole catalog ({} instances; name labels to pick some, see `cyclescope list`)",
                    instances.len()
                );
            }
            let pool = if args.no_reference_jobs {
                Vec::new()
            } else {
                reference_pool(&catalog, config)
            };
            let out = args
                .out
                .clone()
                .unwrap_or_else(|| default_run_dir(&catalog.settings.runs_dir));
            if out.join("campaign.json").exists() {
                anyhow::bail!(
                    "{} already holds a run; `cyclescope run --resume {}` continues it",
                    crate::sanitize::terminal_path(&out),
                    crate::sanitize::shell_path(&out)
                );
            }
            let o = RequestOverrides {
                reference_pool: pool,
                // `run sm3hash-256` alone measures pseudoXOF-256 too: its ratio divides by it.
                // Not in a shard: a campaign's helpers go together, and the same reference job
                // in two shards would collide when they are merged.
                helper_reference_jobs: args.shard.is_none(),
                journal: crate::journal::JournalTarget::of_setting(
                    catalog.settings.journal.as_deref(),
                ),
                ..overrides(args)
            };
            let req = RunRequest::build(&catalog.settings, instances, out, o)?;
            // With the reference jobs added, a width still without its baseline has none in
            // any catalog: say so once instead of leaving an unexplained empty column.
            let (_, unknown) = req.baseline.missing(&req.instances, &[]);
            if !unknown.is_empty() && !args.no_reference_jobs {
                let widths: Vec<String> = unknown.iter().map(u32::to_string).collect();
                eprintln!(
                    "note: candidate `{}` has no pseudoXOF of width {}: {} stays empty there",
                    req.baseline.candidate,
                    widths.join(", "),
                    crate::baseline::COLUMN
                );
            }
            req
        }
    };
    crate::owned::create_run_folder(&req.run_dir)
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
        allow_large_plan: args.allow_large_plan,
        layouts: args.layouts,
        counter: args.counter.into(),
        tui_attached: false,
        kat_passed: Default::default(),
        baseline: args.baseline.clone(),
        reference_pool: Vec::new(),
        helper_reference_jobs: false,
        // Set where the settings are at hand (a new run and a resumed one).
        journal: Default::default(),
        origin: None,
    }
}

/// The instances a run may add as reference jobs: the baseline candidate's, from the resolved
/// catalog, else (an ad-hoc `--lib` or `--scan` catalog) from the configured one.
fn reference_pool(
    catalog: &crate::catalog::Catalog,
    config: Option<&Path>,
) -> Vec<crate::catalog::Instance> {
    let mut pool: Vec<_> = catalog.instances().cloned().collect();
    if let Ok(base) = super::select::load_catalog(config) {
        pool.extend(base.instances().cloned());
    }
    pool
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

pub(super) fn default_run_dir(runs_dir: &Path) -> PathBuf {
    let host = sysinfo::System::host_name().unwrap_or_else(|_| "host".to_string());
    runs_dir.join(format!(
        "{host}-campaign-{}",
        chrono::Utc::now().format("%Y%m%dT%H%M%SZ")
    ))
}

/// `--counter`, as the command line spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CounterArg {
    Cycles,
    Instructions,
    HwInstructions,
}

impl From<CounterArg> for crate::counter::RunCounter {
    fn from(c: CounterArg) -> Self {
        match c {
            CounterArg::Cycles => crate::counter::RunCounter::Cycles,
            CounterArg::Instructions => crate::counter::RunCounter::Instructions,
            CounterArg::HwInstructions => crate::counter::RunCounter::HwInstructions,
        }
    }
}
