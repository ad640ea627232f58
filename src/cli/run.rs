//! `cyclescope run`: the headless frontend of the engine — KAT gate, host check, plan,
//! measurement, with live progress on stderr (bar, current job, ETA) and the report's §4 table
//! at the end. `--resume RUN_DIR` finishes a run from its campaign.json alone.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

mod progress;

use progress::Progress;

use super::InstanceArgs;
use crate::measure::engine::{self, RunRequest};
use crate::measure::{EngineEvent, JobKey, Planning};
use crate::record::run_dir::read_campaign;

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub select: InstanceArgs,
    /// Message lengths in bytes (default: the config's, the guide's 32…65536).
    #[arg(long, value_delimiter = ',', value_name = "BYTES")]
    pub lengths: Option<Vec<u64>>,
    /// Measurement CPU (default: the config's, else the highest-numbered online CPU).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Run directory to create (default: <runs_dir>/<hostname>-<UTC time>).
    #[arg(long, value_name = "RUN_DIR")]
    pub out: Option<PathBuf>,
    /// Seconds one trial aims at (the guide: 1.0).
    #[arg(long, value_name = "S")]
    pub trial_target: Option<f64>,
    /// Trials per job (the guide: 5).
    #[arg(long, value_name = "K")]
    pub trials: Option<u32>,
    /// Seconds of measured time allowed per job.
    #[arg(long, value_name = "S")]
    pub op_budget: Option<f64>,
    /// Adaptive mode: add trials until the 95 % CI of the mean is within this fraction of it
    /// (e.g. 0.01), instead of the guide's fixed trials; pair it with a short --trial-target.
    #[arg(long, value_name = "FRACTION")]
    pub adaptive: Option<f64>,
    /// Most trials per job in adaptive mode.
    #[arg(long, value_name = "K", default_value_t = 30, requires = "adaptive")]
    pub max_trials: u32,
    /// Seconds before a KAT worker is killed.
    #[arg(long, value_name = "S")]
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
    #[arg(long, value_name = "MIB")]
    pub max_address_space_mib: Option<u64>,
    /// CPU-time limit of each trial process, seconds (RLIMIT_CPU; default none).
    #[arg(long, value_name = "S")]
    pub max_cpu_seconds: Option<u64>,
    /// Kill any worker after S seconds, whatever the plan allows (tests).
    #[arg(long, hide = true, value_name = "S")]
    pub timeout_cap: Option<f64>,
    /// Read sysfs/procfs below DIR for the host check (fixture trees).
    #[arg(long, hide = true, value_name = "DIR")]
    pub host_root: Option<PathBuf>,
}

pub fn run(config: Option<&Path>, args: &RunArgs) -> anyhow::Result<ExitCode> {
    let req = build_request(config, args)?;
    let cancel = Arc::new(AtomicBool::new(false));
    let mut progress = Progress::new();
    let mut results: Vec<Row> = Vec::new();
    let outcome = engine::run(
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
    Ok(
        if outcome.failed == 0 && outcome.kat_blocked == 0 && !outcome.cancelled {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        },
    )
}

fn build_request(config: Option<&Path>, args: &RunArgs) -> anyhow::Result<RunRequest> {
    let base = super::select::load_catalog(config)?;
    let s = &base.settings;
    let mut req = if let Some(dir) = &args.resume {
        let c = read_campaign(dir)?;
        let mut r = RunRequest::new(
            c.cyclescope.instances,
            c.cyclescope.lengths,
            c.cyclescope.cpu,
            dir.clone(),
        );
        r.planning = c.planning;
        r.allow_unfixed_host = c.cyclescope.allow_unfixed_host;
        r.allow_kat_fail = c.cyclescope.allow_kat_fail;
        r.adaptive = c.cyclescope.adaptive;
        r
    } else {
        let (catalog, instances) = args.select.resolve(config, false)?;
        let s = &catalog.settings;
        let lengths = args.lengths.clone().unwrap_or_else(|| s.lengths.clone());
        if lengths.is_empty() || lengths.iter().any(|&l| l == 0 || l > 16 << 20) {
            anyhow::bail!("--lengths must be between 1 byte and 16 MiB");
        }
        let cpu = args.cpu.or(s.cpu).unwrap_or_else(last_online_cpu);
        let out = args
            .out
            .clone()
            .unwrap_or_else(|| default_run_dir(&s.runs_dir));
        if out.join("campaign.json").exists() {
            anyhow::bail!(
                "{} already holds a run; use --resume {} to continue it",
                out.display(),
                out.display()
            );
        }
        let mut r = RunRequest::new(instances, lengths, cpu, out);
        r.planning = Planning::new(
            args.trials.unwrap_or(s.trials),
            args.trial_target.unwrap_or(s.trial_target_s),
            args.op_budget.unwrap_or(s.op_budget_s),
        );
        r
    };
    if !(1..=16).contains(&req.planning.trials) {
        anyhow::bail!("--trials must be 1…16");
    }
    if req.planning.trial_target_s <= 0.0 || req.planning.op_budget_s <= 0.0 {
        anyhow::bail!("--trial-target and --op-budget must be positive");
    }
    if let Some(precision) = args.adaptive {
        if !(precision > 0.0 && precision < 1.0) {
            anyhow::bail!(
                "--adaptive takes a fraction between 0 and 1 (e.g. 0.01), not {precision}"
            );
        }
        req.adaptive = Some(crate::measure::plan::Adaptive {
            precision,
            max_trials: args
                .max_trials
                .clamp(crate::measure::plan::MIN_ADAPTIVE_TRIALS, 1000),
        });
    }
    req.allow_unfixed_host |= args.allow_unfixed_host;
    req.allow_kat_fail |= args.allow_kat_fail;
    req.kat_timeout = Duration::from_secs_f64(args.kat_timeout.unwrap_or(s.kat_timeout_s).max(0.1));
    if let Some(mib) = args.max_address_space_mib {
        req.limits.address_space_bytes = Some(mib << 20);
    }
    if let Some(s) = args.max_cpu_seconds {
        req.limits.cpu_seconds = Some(s);
    }
    req.timeout_cap = args
        .timeout_cap
        .map(|s| Duration::from_secs_f64(s.max(0.1)));
    if let Some(root) = &args.host_root {
        req.host_root = root.clone();
    }
    std::fs::create_dir_all(&req.run_dir)
        .with_context(|| format!("creating {}", req.run_dir.display()))?;
    Ok(req)
}

/// The highest-numbered CPU this process may use.
pub fn last_online_cpu() -> usize {
    nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0))
        .ok()
        .and_then(|set| {
            (0..nix::sched::CpuSet::count())
                .rev()
                .find(|&c| set.is_set(c).unwrap_or(false))
        })
        .unwrap_or(0)
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
    pub summary: crate::measure::JobSummary,
    /// What measured it (counter, clock, CPU), from the record.
    pub measured_by: String,
}

impl Row {
    fn from(job: &JobKey, s: &crate::measure::JobSummary, run_dir: &Path, record: &Path) -> Self {
        let measured_by = std::fs::read(run_dir.join(record))
            .ok()
            .and_then(|b| serde_json::from_slice::<crate::record::TimingRecord>(&b).ok())
            .map(|r| {
                let reference = r.cyclescope.as_ref().is_some_and(|a| a.reference_cycles);
                crate::report::measured_by(&r.environment, &s.cycle_source, reference)
            })
            .unwrap_or_else(|| format!("cycles: {}", s.cycle_source));
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
