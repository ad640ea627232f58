//! `cyclescope` with no subcommand: the workbench on the catalog, over the same engine as
//! `run`. After the terminal is restored the results table is printed, so it stays in the
//! scrollback.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;

use super::select::SourceArgs;
use crate::tui::event_loop::{self, Options};

#[derive(Debug, Clone, Default, PartialEq, Args)]
pub struct TuiArgs {
    /// Instances from an ad-hoc library or a scanned folder, as for the subcommands.
    #[command(flatten)]
    pub source: SourceArgs,
    /// Reload the results of this run directory, and write new runs into it.
    #[arg(long, value_name = "DIR")]
    pub run: Option<PathBuf>,
    /// Seconds each trial aims at (the guide's 1.0; e.g. 0.05 for quick rough numbers).
    #[arg(long, value_name = "SECS", value_parser = super::arg_value::trial_target)]
    pub trial_target: Option<f64>,
    /// The measurement CPU (default: settings, else the highest-numbered online CPU).
    #[arg(long, value_name = "N", value_parser = super::arg_value::cpu)]
    pub cpu: Option<usize>,
    /// Measure even when host checks fail (the problems are stored with the run).
    #[arg(long)]
    pub allow_unfixed_host: bool,
    /// Measure instances whose KAT did not pass (their records are flagged).
    #[arg(long)]
    pub allow_kat_fail: bool,
    /// Read sysfs/procfs below DIR for the host checks (fixture trees, tests).
    #[arg(long, hide = true, value_name = "DIR")]
    pub host_root: Option<PathBuf>,
}

/// Fails with a clear message when there is no terminal to draw on.
pub fn require_terminal() -> anyhow::Result<()> {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        bail!("the workbench needs a terminal; for a headless run use `cyclescope run LABEL…`");
    }
    Ok(())
}

pub fn run(config: Option<&Path>, args: &TuiArgs) -> anyhow::Result<ExitCode> {
    // Like the subcommands: --lib/--scan instead of the config's instances, baselines beside;
    // what they brought is selected, so `s` measures it.
    let (catalog, selected) = args.source.catalog(config)?;
    if let Some(cpu) = catalog.settings.cpu.filter(|_| args.cpu.is_none()) {
        crate::cpu::check_usable(cpu)
            .map_err(|e| anyhow::anyhow!("settings.cpu of the config: {e}"))?;
    }
    if let Some(dir) = &args.run
        && dir.exists()
        && !dir.is_dir()
    {
        bail!("--run {} is not a directory", dir.display());
    }
    require_terminal()?;
    let table = event_loop::run(Options {
        catalog,
        selected,
        run_dir: args.run.clone(),
        watch: None,
        trial_target_s: args.trial_target,
        cpu: args.cpu,
        allow_unfixed_host: args.allow_unfixed_host,
        allow_kat_fail: args.allow_kat_fail,
        host_root: args.host_root.clone(),
    })
    .context("the terminal failed")?;
    print!("{table}");
    Ok(ExitCode::SUCCESS)
}
