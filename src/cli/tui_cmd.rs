//! `cyclescope` with no subcommand: the workbench on the catalog, over the same engine as
//! `run`. After the terminal is restored the results table is printed, so it stays in the
//! scrollback.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;

use super::select::SourceArgs;
use crate::build::{self, ProfileChoice};
use crate::tui::engine_link::{SrcBuilder, SrcBuilt};
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
    /// The measurement CPU (default: settings, else the highest-numbered CPU this process may
    /// use).
    #[arg(long, value_name = "N", value_parser = super::arg_value::cpu)]
    pub cpu: Option<usize>,
    /// Measure even when host checks fail (the problems are stored with the run).
    #[arg(long)]
    pub allow_unfixed_host: bool,
    /// Measure instances whose KAT did not pass (their records are flagged).
    #[arg(long)]
    pub allow_kat_fail: bool,
    /// Start runs out of proportion: more than 1000 jobs, or a message longer than 1 MiB
    #[arg(long)]
    pub allow_large_plan: bool,
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
    // `--src`: `p` changes an instance's flags and `s` rebuilds it through the same build.
    let sources = args
        .source
        .src
        .as_ref()
        .map(|src| (src.clone(), src_builder(src, &args.source, config)));
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
    let keys = keymap(config)?;
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
        allow_large_plan: args.allow_large_plan,
        host_root: args.host_root.clone(),
        sources,
        keys,
    })
    .context("the terminal failed")?;
    print!("{table}");
    Ok(ExitCode::SUCCESS)
}

/// The key bindings the config's `[keys]` asks for (the built-in table without a config).
pub fn keymap(config: Option<&Path>) -> anyhow::Result<crate::tui::keymap::Keymap> {
    Ok(match super::select::config_path(config) {
        Some(path) => crate::tui::keymap::load(&path)?,
        None => crate::tui::keymap::Keymap::default(),
    })
}

/// The workbench's rebuild of `src` with one flag choice: the same build and tree as `--src`
/// elsewhere (`build::build_tree` into `build::src_tree_dir`), failures collected for the
/// event log instead of printed over the screen. Only the flags change: the candidate id and
/// the compiler the session started with are kept, so a rebuilt instance stays the same
/// candidate's (its Δ, earlier curve and records line up with the first build), and its KAT
/// references (`--manifest`, `--kat-dir`) stay its own.
fn src_builder(src: &Path, source: &SourceArgs, config: Option<&Path>) -> SrcBuilder {
    let (src, config) = (src.to_path_buf(), config.map(Path::to_path_buf));
    let identity = SrcIdentity {
        id: source.id.clone(),
        cc: source.cc.clone(),
        kat_refs: source.kat_refs.clone(),
    };
    SrcBuilder(std::sync::Arc::new(move |choice: &ProfileChoice| {
        build_src(&src, &identity, config.as_deref(), choice).map_err(|e| format!("{e:#}"))
    }))
}

/// What a rebuild keeps from the session's start (`--id`, `--cc`, `--manifest`, `--kat-dir`).
struct SrcIdentity {
    id: Option<String>,
    cc: Option<String>,
    kat_refs: super::kat_refs::KatRefArgs,
}

fn build_src(
    src: &Path,
    identity: &SrcIdentity,
    config: Option<&Path>,
    choice: &ProfileChoice,
) -> anyhow::Result<SrcBuilt> {
    let build_config = build::load_build_config(super::select::config_path(config).as_deref())?;
    let cc = identity.cc.clone().unwrap_or_else(|| build_config.cc());
    let cache = build_config.cache_dir();
    let out = build::src_tree_dir(&cache, src, identity.id.as_deref(), choice, &cc);
    let request = build::BuildRequest {
        sources: vec![src.to_path_buf()],
        id: identity.id.clone(),
        profile: choice.clone(),
        cc,
        out: out.clone(),
        kat: false,
        // The session's sources only: the baselines are not rebuilt by a flag change.
        iccs_api: None,
        // The session's references go on the rebuilt instances below.
        manifest: None,
        kat_dir: None,
    };
    let problems = std::sync::Mutex::new(Vec::new());
    let summary = build::build_tree(&request, &build_config, &cache, &|b| {
        if b.status == build::BuildStatus::Failed
            && let Ok(mut p) = problems.lock()
        {
            p.push(format!(
                "{}: not built: {}",
                b.source.label,
                b.excerpt(2).join(" / ")
            ));
        }
    })?;
    if let Ok(mut p) = problems.lock() {
        // What the compiler's jail cannot enforce here, said with the build's problems.
        p.extend(summary.jail_gaps.iter().map(|g| format!("WARNING: {g}")));
    }
    let (catalog, _) = crate::catalog::scan_dir(&out, super::worker_cmd::probe)?;
    let mut instances: Vec<crate::catalog::Instance> = catalog.instances().cloned().collect();
    for i in &mut instances {
        identity.kat_refs.apply(i);
    }
    Ok(SrcBuilt {
        instances,
        problems: problems.into_inner().unwrap_or_default(),
    })
}
