//! `cyclescope sweep`: the cost model of each instance from a dense length sweep — the
//! campaign in its adaptive mode at every `--step` bytes up to `--max-bytes` plus S1–S8, then
//! byte by byte around the block boundaries, and the fit T(n) = a + b·⌈(n + p)/B⌉ (+ c·n) with
//! 95 % intervals. Live progress on stderr as `run` shows it; the fit as text or `--json`;
//! everything also in the run directory (`records/`, `sweep.json`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::Context;
use clap::Args;

use super::run::progress::Progress;
use super::{InstanceArgs, arg_value};
use crate::campaign::{RequestOverrides, RunRequest};
use crate::sweep::{self, PointStatistic, SweepFile, SweepLengths};

#[derive(Debug, Args)]
pub struct SweepArgs {
    #[command(flatten)]
    pub select: InstanceArgs,
    /// Distance between the measured lengths, bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 8, value_parser = arg_value::length)]
    pub step: u64,
    /// Longest length of the dense part, bytes (S1–S8 are added unless --no-guide-lengths).
    #[arg(long, value_name = "BYTES", default_value_t = 2048, value_parser = arg_value::length)]
    pub max_bytes: u64,
    /// Leave out the guide's S1–S8.
    #[arg(long)]
    pub no_guide_lengths: bool,
    /// Do not measure byte by byte around the block boundaries.
    #[arg(long)]
    pub no_refine: bool,
    /// Relative 95 % CI half-width each point aims at (the adaptive mode).
    #[arg(long, value_name = "FRACTION", default_value_t = 0.01, value_parser = arg_value::fraction)]
    pub precision: f64,
    /// Most trials per point.
    #[arg(long, value_name = "K", default_value_t = 8, value_parser = arg_value::max_trials)]
    pub max_trials: u32,
    /// Seconds one trial aims at.
    #[arg(long, value_name = "S", default_value_t = 0.002, value_parser = arg_value::trial_target)]
    pub trial_target: f64,
    /// Measurement CPU (default: the config's, else the highest-numbered CPU this process may
    /// use).
    #[arg(long, value_parser = arg_value::cpu)]
    pub cpu: Option<usize>,
    /// Run directory to create (default: <runs_dir>/<hostname>-sweep-<UTC time>).
    #[arg(long, value_name = "RUN_DIR")]
    pub out: Option<PathBuf>,
    /// Measure even if the host check finds problems (they are stored with the run).
    #[arg(long)]
    pub allow_unfixed_host: bool,
    /// Time instances whose KAT did not pass.
    #[arg(long)]
    pub allow_kat_fail: bool,
    /// Sweep a plan out of proportion: more than 1000 points (instances × lengths), or a
    /// message longer than 1 MiB
    #[arg(long)]
    pub allow_large_plan: bool,
    /// What each point is: `low` (per-call 1st percentile, robust on a busy host), `median`
    /// (per-call), `mean` (the guide's loop mean).
    #[arg(long, value_enum, default_value_t = Statistic::Low)]
    pub statistic: Statistic,
    /// What each point counts: `cycles` (timed, adaptive) or `instructions` (exact counts
    /// under valgrind; B and p are then read off the counts' jumps, byte by byte)
    #[arg(long, value_enum, default_value_t = super::run::CounterArg::Cycles)]
    pub counter: super::run::CounterArg,
    /// Take each instance's block size and padding threshold from the instruction sweep in
    /// RUN_DIR (`sweep --counter instructions`) and fit only the cycles' coefficients
    #[arg(long, value_name = "RUN_DIR")]
    pub blocks_from: Option<PathBuf>,
    /// Fit again from the records of an earlier sweep in RUN_DIR, without measuring.
    #[arg(long, value_name = "RUN_DIR", conflicts_with = "out")]
    pub refit: Option<PathBuf>,
    /// Print sweep.json's content on stdout instead of text.
    #[arg(long)]
    pub json: bool,
    /// Kill any worker after S seconds, whatever the plan allows (tests).
    #[arg(long, hide = true, value_name = "S", value_parser = arg_value::timeout_cap)]
    pub timeout_cap: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Statistic {
    Low,
    Median,
    Mean,
}

impl From<Statistic> for PointStatistic {
    fn from(s: Statistic) -> Self {
        match s {
            Statistic::Low => PointStatistic::PerCallLow,
            Statistic::Median => PointStatistic::PerCallMedian,
            Statistic::Mean => PointStatistic::LoopMean,
        }
    }
}

pub fn run(config: Option<&Path>, args: &SweepArgs) -> anyhow::Result<ExitCode> {
    if let Some(dir) = &args.refit {
        let file = sweep::refit(dir, args.statistic.into())?;
        show(&file, args.json)?;
        return Ok(exit_code(&file, false, 0));
    }
    let (catalog, instances) = args.select.resolve(config, false)?;
    let out = args.out.clone().unwrap_or_else(|| {
        let host = sysinfo::System::host_name().unwrap_or_else(|_| "host".to_string());
        catalog.settings.runs_dir.join(format!(
            "{host}-sweep-{}",
            chrono::Utc::now().format("%Y%m%dT%H%M%SZ")
        ))
    });
    if out.join("campaign.json").exists() {
        anyhow::bail!("{} already holds a run; give a new --out", out.display());
    }
    let given = match &args.blocks_from {
        Some(dir) => sweep::structure_from(dir)?,
        None => sweep::GivenStructure::new(),
    };
    let lengths = SweepLengths {
        step: args.step,
        max_bytes: args.max_bytes,
        guide: !args.no_guide_lengths,
        refine: !args.no_refine,
        statistic: args.statistic.into(),
    };
    let o = RequestOverrides {
        // The coarse lengths, so that the one builder judges the sweep's size too.
        lengths: Some(lengths.coarse()),
        cpu: args.cpu,
        trial_target_s: Some(args.trial_target),
        adaptive: Some((args.precision, args.max_trials)),
        timeout_cap_s: args.timeout_cap,
        allow_unfixed_host: args.allow_unfixed_host,
        allow_kat_fail: args.allow_kat_fail,
        allow_large_plan: args.allow_large_plan,
        counter: args.counter.into(),
        journal: crate::journal::JournalTarget::of_setting(catalog.settings.journal.as_deref()),
        ..RequestOverrides::default()
    };
    let req = RunRequest::build(&catalog.settings, instances, out, o)?;
    crate::owned::create_run_folder(&req.run_dir)
        .with_context(|| format!("creating {}", req.run_dir.display()))?;
    let cancel = Arc::new(AtomicBool::new(false));
    crate::interrupt::stop_on_signals(&cancel).context("installing the signal handlers")?;
    let mut progress = Progress::for_sweep(&req);
    let outcome =
        sweep::run_with_structure(&req, lengths, &given, &mut |ev| progress.show(&ev), &cancel)?;
    progress.clear();
    show(&outcome.file, args.json)?;
    eprintln!(
        "run directory: {} (points in records/, the fit in {})",
        crate::sanitize::terminal_path(&req.run_dir),
        sweep::FILE_NAME
    );
    Ok(exit_code(&outcome.file, outcome.cancelled, outcome.failed))
}

fn show(file: &SweepFile, json: bool) -> anyhow::Result<()> {
    if json {
        outln!("{}", serde_json::to_string_pretty(file)?);
    } else {
        for s in &file.instances {
            for line in sweep::describe(s) {
                outln!("{line}");
            }
        }
    }
    Ok(())
}

/// 0 when every instance got a model from a complete sweep, else 1.
fn exit_code(file: &SweepFile, cancelled: bool, failed: usize) -> ExitCode {
    let fitted = file.instances.iter().all(|s| s.model.is_some());
    if fitted && !cancelled && failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
