//! `cyclescope watch RUN_DIR`: the workbench, read-only, on a run another process (a headless
//! `cyclescope run`, perhaps in another terminal) is writing: it follows the journal and the
//! records live and shows when the run finishes or its writer dies. A run that is just
//! starting is waited for (`target`), never taken for a folder of shards.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;

use super::select::load_catalog;
use super::tui_cmd::require_terminal;
use crate::tui::event_loop::{self, Options};

mod lanes;
mod shards;
mod target;

use target::Watched;

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
    // What can never become a run is refused now, not after the wait for a starting one.
    if let Some(why) = target::refusal(&args.run_dir) {
        bail!(why);
    }
    if args.lanes {
        return lanes::follow(&args.run_dir);
    }
    // Only sub-folders that are runs make a folder of shards: a run that has not yet written
    // its campaign.json (or created its folder) is waited for.
    if target::classify(&args.run_dir) == Watched::NotYet {
        eprintln!(
            "waiting up to {} s for the run in {} to start…",
            target::START_WAIT.as_secs(),
            crate::sanitize::terminal_path(&args.run_dir)
        );
    }
    match target::wait_for(&args.run_dir, target::START_WAIT) {
        Watched::FolderOfRuns => return lanes::follow(&args.run_dir),
        Watched::Run => {}
        Watched::NotYet => bail!(
            "{} is not a run directory: no campaign.json appeared in {} s (start one with \
             `cyclescope run LABEL… --out {}`)",
            crate::sanitize::terminal_path(&args.run_dir),
            target::START_WAIT.as_secs(),
            crate::sanitize::shell_path(&args.run_dir)
        ),
    }
    let mut catalog = load_catalog(config)?;
    target::add_campaign_instances(&mut catalog, &args.run_dir);
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
        keys: super::tui_cmd::keymap(config)?,
    })
    .context("the terminal failed")?;
    print!("{table}");
    Ok(ExitCode::SUCCESS)
}
