//! `cyclescope watch RUN_DIR`: the workbench, read-only, on a run another process (a headless
//! `cyclescope run`, perhaps in another terminal) is writing: it follows the journal and the
//! records live and shows when the run finishes or its writer dies.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;

use super::select::load_catalog;
use super::tui_cmd::require_terminal;
use crate::tui::event_loop::{self, Options};

mod lanes;
mod shards;

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// The run directory to follow (with --lanes also a folder of shard runs).
    #[arg(value_name = "RUN_DIR")]
    pub run_dir: PathBuf,
    /// Follow the lanes as text: one line per measurement CPU (current job, trial, time),
    /// jobs done and an ETA from the measured job times, per run; implied for a folder of runs.
    #[arg(long)]
    pub lanes: bool,
}

pub fn run(config: Option<&Path>, args: &WatchArgs) -> anyhow::Result<ExitCode> {
    // A folder that is not itself a run (no campaign.json, no journal) holds shard runs.
    let folder_of_runs = args.run_dir.is_dir()
        && !args.run_dir.join("campaign.json").exists()
        && !args.run_dir.join("journal.jsonl").exists();
    if args.lanes || folder_of_runs {
        return lanes::follow(&args.run_dir);
    }
    if !args.run_dir.is_dir() {
        bail!(
            "{} is not a run directory (start one with `cyclescope run LABEL…`)",
            args.run_dir.display()
        );
    }
    let catalog = load_catalog(config)?;
    require_terminal()?;
    let table = event_loop::run(Options {
        catalog,
        selected: Vec::new(),
        run_dir: None,
        watch: Some(args.run_dir.clone()),
        trial_target_s: None,
        cpu: None,
        allow_unfixed_host: false,
        allow_kat_fail: false,
        allow_large_plan: false,
        host_root: None,
        sources: None,
    })
    .context("the terminal failed")?;
    print!("{table}");
    Ok(ExitCode::SUCCESS)
}
