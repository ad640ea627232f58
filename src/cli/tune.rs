//! `cyclescope tune`: shows what would make the measurement CPU pass the host checks, applies it
//! (`--apply`, root only; `--hold` keeps it until a signal), restores it (`--restore`), and the
//! start-up step every command runs: a tuning left behind by a process that died is put back.
//! It only renders and sequences what `tune` in the core decides.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use super::select::load_catalog;
use crate::host::{HostError, HostRoot};
use crate::tune::{self, Owner, TunePlan};

#[derive(Debug, Args)]
pub struct TuneArgs {
    /// Measurement CPU (default: `cpu` in the config's [settings], else the highest-numbered
    /// online CPU this process may use).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Apply the plan (root only). The previous values go to the restore file first.
    #[arg(long, conflicts_with = "restore")]
    pub apply: bool,
    /// With --apply: keep the tuning until SIGINT/SIGTERM/SIGHUP, then restore it (if this
    /// process is killed instead, the next cyclescope start restores it).
    #[arg(long, requires = "apply")]
    pub hold: bool,
    /// Put back everything the restore file holds, and remove it.
    #[arg(long)]
    pub restore: bool,
    /// Read and write sysfs/procfs under DIR instead of / (a fixture tree).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

pub fn run(config: Option<&Path>, args: &TuneArgs) -> anyhow::Result<ExitCode> {
    let root = HostRoot::new(args.root.clone().unwrap_or_else(|| PathBuf::from("/")));
    if !root.dir().is_dir() {
        anyhow::bail!("--root {} is not a folder", root.dir().display());
    }
    if args.root.is_some() {
        recover_at_start(&root);
    }
    if args.restore {
        let r = tune::restore(&root)?;
        outln!("{}", restored_text(&r));
        return Ok(ExitCode::SUCCESS);
    }
    let cpu = match args.cpu {
        Some(cpu) => cpu,
        None => match load_catalog(config)?.settings.cpu {
            Some(cpu) => cpu,
            None => root.default_cpu().ok_or_else(|| {
                HostError::NoOnlineCpu(root.join("sys/devices/system/cpu/online"))
            })?,
        },
    };
    if let Some(saved) = tune::read_saved(&root)? {
        outln!(
            "tuned already: CPU {}, {} setting(s) and {} task(s) saved in {} ({})",
            saved.cpu,
            saved.files.len(),
            saved.tasks.len(),
            tune::restore_path(&root).display(),
            Owner::describe(saved.owner.as_ref())
        );
        if !args.apply {
            return Ok(ExitCode::SUCCESS);
        }
    }
    let plan = tune::plan(&root, cpu, std::process::id())?;
    print_plan(&plan);
    if !args.apply {
        outln!("(nothing changed: --apply applies this, as root)");
        return Ok(ExitCode::SUCCESS);
    }
    if !args.hold {
        let applied = tune::apply(&plan, None)?;
        for line in applied_lines(&applied, &root) {
            outln!("{line}");
        }
        outln!("kept until `cyclescope tune --restore` (or a reboot)");
        return Ok(ExitCode::SUCCESS);
    }
    let stop = Arc::new(AtomicBool::new(false));
    crate::interrupt::stop_on_signals(&stop).context("installing the signal handlers")?;
    let (held, lines) = HeldTuning::apply(&plan)?;
    for line in lines {
        eprintln!("cyclescope: {line}");
    }
    outln!("holding the tuning; SIGINT, SIGTERM or SIGHUP restores it");
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(50));
    }
    outln!("{}", held.release());
    Ok(ExitCode::SUCCESS)
}

fn print_plan(plan: &TunePlan) {
    let changes = plan.change_count();
    outln!(
        "tuning plan for CPU {} under {} ({changes} change(s)):",
        plan.cpu,
        plan.root.dir().display()
    );
    for line in plan.lines() {
        outln!("  {line}");
    }
    outln!("restore file: {}", tune::restore_path(&plan.root).display());
}

fn applied_lines(a: &tune::Applied, root: &HostRoot) -> Vec<String> {
    let mut lines = vec![format!(
        "applied {} change(s); previous values saved in {}",
        a.changed,
        tune::restore_path(root).display()
    )];
    lines.extend(
        a.refused
            .iter()
            .map(|r| format!("  refused by the kernel: {r}")),
    );
    lines
}

fn restored_text(r: &tune::Restored) -> String {
    let mut text = format!(
        "restored {} setting(s) and {} task affinit(ies)",
        r.files, r.tasks
    );
    if r.unshielded > 0 {
        text += &format!("; {} task(s) back from the shield's cpuset", r.unshielded);
    }
    for x in &r.refused {
        text += &format!("\n  not restored: {x}");
    }
    text
}

/// The start of every command: a tuning whose owner died is put back, with a note on stderr.
/// A failure here never stops the command; it says what to do instead.
pub(crate) fn recover_at_start(root: &HostRoot) {
    match tune::recover_stale(root) {
        Ok(None) => {}
        Ok(Some(r)) => eprintln!(
            "cyclescope: restored the host tuning left by pid {} (gone): {} setting(s), {} task \
             affinit(ies), {} task(s) back from the shield{}",
            r.owner.map_or(0, |o| o.pid),
            r.files,
            r.tasks,
            r.unshielded,
            if r.refused.is_empty() {
                String::new()
            } else {
                format!("; not restored: {}", r.refused.join("; "))
            }
        ),
        // Only root tunes, and root's folder (`/run/cyclescope`, which also holds root's CPU
        // locks) is closed to other users: nothing here says a tuning was left, and only
        // root could put one back.
        Err(tune::TuneError::ReadFailed { source, .. })
            if source.kind() == std::io::ErrorKind::PermissionDenied
                && !nix::unistd::geteuid().is_root() => {}
        Err(e) => eprintln!(
            "cyclescope: a host tuning was left behind and is not restored: {e} (run `sudo \
             cyclescope tune --restore`)"
        ),
    }
}

/// A tuning this process applied and restores when released or dropped (the end of a run, a
/// held `tune`, leaving the workbench).
pub(crate) struct HeldTuning {
    root: Option<HostRoot>,
}

impl HeldTuning {
    /// Applies `plan` owned by this process; also returns what changed, for the caller to
    /// show (stdout may be a run's JSON, the terminal may be the workbench's).
    pub(crate) fn apply(plan: &TunePlan) -> anyhow::Result<(Self, Vec<String>)> {
        let owner = Owner::this_process().context("reading this process's start time")?;
        let applied = tune::apply(plan, Some(owner))?;
        let held = HeldTuning {
            root: Some(plan.root.clone()),
        };
        Ok((held, applied_lines(&applied, &plan.root)))
    }

    /// Restores now and says what happened.
    pub(crate) fn release(mut self) -> String {
        self.restore_now()
    }

    fn restore_now(&mut self) -> String {
        match self.root.take().map(|root| tune::restore(&root)) {
            None => String::new(),
            Some(Ok(r)) => restored_text(&r),
            Some(Err(e)) => format!("restoring the host tuning failed: {e}"),
        }
    }
}

impl Drop for HeldTuning {
    fn drop(&mut self) {
        let said = self.restore_now();
        if !said.is_empty() {
            eprintln!("cyclescope: {said}");
        }
    }
}
