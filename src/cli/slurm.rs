//! `cyclescope slurm --shards N --out FOLDER [-- RUN_ARG…]`: a campaign laid out as a Slurm job
//! array (one `run --shard K/N` per task) and a merge job after it, written into FOLDER and,
//! with `--submit`, handed to `sbatch`. The run's arguments are checked here, by the same
//! parser `run` uses, so a typo fails now and not in N queued jobs. Without Slurm it writes the
//! scripts and says how to submit them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, Parser};

use super::select::config_path;
use crate::campaign::slurm::{self, SUBMIT_SCRIPT, SlurmCampaign};
use crate::cpu::lock::{LOCK_DIR_ENV, LOCK_WAIT_ENV};
use crate::sanitize::shell_path;

#[derive(Debug, Args)]
pub struct SlurmArgs {
    /// How many shards (array tasks) to split the campaign into.
    #[arg(long, value_name = "N")]
    pub shards: u32,
    /// The campaign folder to create: scripts, shard runs, then `dataset` and `pages`.
    #[arg(long, value_name = "FOLDER")]
    pub out: PathBuf,
    /// Submit the array and the merge job with sbatch (default: only write the scripts).
    #[arg(long)]
    pub submit: bool,
    /// Partition of every job (default: the config's `[slurm] partition`, else the site's).
    #[arg(long, value_name = "NAME")]
    pub partition: Option<String>,
    /// Account every job is charged to (default: the config's `[slurm] account`).
    #[arg(long, value_name = "NAME")]
    pub account: Option<String>,
    /// Time limit of each shard, in Slurm's forms (`90`, `12:00:00`, `2-00`).
    #[arg(long, value_name = "LIMIT")]
    pub time: Option<String>,
    /// CPUs each shard is bound to: the last measures, the others run cyclescope (default 2).
    #[arg(long, value_name = "N")]
    pub cpus_per_task: Option<u32>,
    /// Share the node with other jobs (default: `--exclusive`, the whole node).
    #[arg(long)]
    pub shared_node: bool,
    /// `cyclescope run` arguments for every shard: instances, lengths, planning (after `--`).
    #[arg(last = true, value_name = "RUN_ARG")]
    pub run_args: Vec<String>,
}

fn absolute(p: &Path) -> anyhow::Result<PathBuf> {
    if p.is_absolute() {
        return Ok(p.to_path_buf());
    }
    Ok(std::env::current_dir()
        .context("cannot read the working folder")?
        .join(p))
}

/// The run's arguments as `run` itself would take them for shard 1.
fn check_run_args(args: &SlurmArgs) -> anyhow::Result<()> {
    let shard = format!("1/{}", args.shards.max(1));
    let line = ["cyclescope", "run"]
        .into_iter()
        .map(String::from)
        .chain(args.run_args.iter().cloned())
        .chain(["--shard".into(), shard, "--out".into(), "shard-1".into()]);
    match super::Cli::try_parse_from(line) {
        Ok(_) => Ok(()),
        Err(e) => bail!(
            "the run's arguments (after --) are not ones `cyclescope run` takes: {}",
            e.render().to_string().trim_end()
        ),
    }
}

pub fn run(config: Option<&Path>, args: &SlurmArgs) -> anyhow::Result<ExitCode> {
    let config = config_path(config).map(|p| absolute(&p)).transpose()?;
    let mut site = slurm::load_site(config.as_deref())?;
    site.partition = args.partition.clone().or(site.partition);
    site.account = args.account.clone().or(site.account);
    site.time = args.time.clone().or(site.time);
    site.cpus_per_task = args.cpus_per_task.unwrap_or(site.cpus_per_task);
    site.exclusive = site.exclusive && !args.shared_node;
    let export = [LOCK_DIR_ENV, LOCK_WAIT_ENV]
        .into_iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
        .collect();
    let campaign = SlurmCampaign {
        folder: absolute(&args.out)?,
        workdir: std::env::current_dir().context("cannot read the working folder")?,
        exe: std::env::current_exe().context("cannot find this cyclescope binary")?,
        config,
        shards: args.shards,
        run_args: args.run_args.clone(),
        site,
        export,
    };
    check_run_args(args)?;
    let written = campaign.write()?;
    for p in &written {
        outln!("wrote {}", shell_path(p));
    }
    let submit_line = format!("sh {}", shell_path(&campaign.folder.join(SUBMIT_SCRIPT)));
    let watch_line = format!("cyclescope watch {}", shell_path(&campaign.folder));
    if !args.submit {
        match slurm::sbatch_on_path() {
            Some(_) => outln!("submit with: {submit_line}"),
            None => outln!(
                "sbatch is not on PATH (no Slurm here); on a machine that submits to the \
                 cluster: {submit_line}"
            ),
        }
        outln!("then follow the shards with: {watch_line}");
        return Ok(ExitCode::SUCCESS);
    }
    let s = slurm::submit(&campaign)?;
    outln!(
        "submitted: array job {} ({} task(s)), merge job {} after it (cancelled if a task \
         fails); follow with: {watch_line}",
        s.array_job,
        campaign.shards,
        s.merge_job
    );
    Ok(ExitCode::SUCCESS)
}
