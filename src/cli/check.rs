//! `cyclescope check`: the host checks for the measurement CPU as a table (or JSON, schema in
//! `docs/check-json.md`), then `host ready` (exit 0) or `<k> problem(s)` (exit 1), like the
//! harness's `campaign.py check`. With `--root DIR` the files come from a fixture tree and the
//! probes from `DIR/cyclescope-probes.toml`. It only renders what `host` decides.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use serde_json::{Value, json};

use super::select::load_catalog;
use crate::host::{self, HostError, HostReport, HostRoot, Probes, Status};

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Measurement CPU (default: `cpu` in the config's [settings], else the highest-numbered
    /// online CPU this process may use).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Print JSON instead of a table (schema: docs/check-json.md).
    #[arg(long)]
    pub json: bool,
    /// Read sysfs/procfs under DIR instead of / (a fixture tree; probes come from
    /// DIR/cyclescope-probes.toml).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Also print the environment block that records store (runs the clock probe).
    #[arg(long)]
    pub env: bool,
}

/// JSON schema identifier of `check --json`.
pub const SCHEMA: &str = "cyclescope-check/1";

pub fn run(config: Option<&Path>, args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let root = HostRoot::new(args.root.clone().unwrap_or_else(|| PathBuf::from("/")));
    if !root.dir().is_dir() {
        anyhow::bail!("--root {} is not a folder", root.dir().display());
    }
    if args.root.is_some() {
        super::tune::recover_at_start(&root);
    }
    let mut probes = Probes::for_root(&root).context("host probes")?;
    let cpu = match args.cpu {
        Some(cpu) => cpu,
        None => match load_catalog(config)?.settings.cpu {
            Some(cpu) => cpu,
            None => root.default_cpu().ok_or_else(|| {
                HostError::NoOnlineCpu(root.join("sys/devices/system/cpu/online"))
            })?,
        },
    };
    let mut report = host::check_host(&root, cpu, &mut probes);
    // The busy-CPU row measured: a moment's spinning on the CPU (this machine only).
    if args.root.is_none() {
        host::run_queue::measure_busy_cpu(&mut report, &crate::cpu::lock::machine_lock_dir());
    }
    let environment = args.env.then(|| host::environment(&root, cpu, &mut probes));
    // The sandbox belongs to this machine's kernel, not to a fixture tree: asked of a real
    // worker, and only when checking the real host. Informational: it changes no verdict.
    let sandbox = args.root.is_none().then(super::worker_cmd::sandbox_state);
    if args.json {
        let mut out = to_json(&report, environment);
        if let (Some(s), Some(obj)) = (&sandbox, out.as_object_mut()) {
            obj.insert(
                "sandbox".into(),
                match s {
                    Ok((state, seen)) => json!({
                        "summary": state.summary(),
                        "state": state,
                        "observed": seen.clone().map(crate::worker::observed::Observed::from),
                    }),
                    Err(e) => json!({"error": e}),
                },
            );
        }
        outln!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        let sandbox_line = sandbox.map(|s| match s {
            Ok((state, seen)) => format!(
                "worker sandbox: {}\nworker seen from outside: {}",
                state.summary(),
                seen.map_or_else(
                    || "its /proc entry could not be read".into(),
                    |p| p.summary()
                )
            ),
            Err(e) => format!("worker sandbox: could not be asked: {e}"),
        });
        print_table(&report, environment.as_ref(), sandbox_line.as_deref());
    }
    Ok(if report.is_ready() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn to_json(report: &HostReport, environment: Option<serde_json::Map<String, Value>>) -> Value {
    let checks: Vec<Value> = report
        .checks
        .iter()
        .map(|c| {
            json!({
                "check": c.check.id(),
                "title": c.check.title(),
                "status": c.status.label(),
                "value": c.value,
                "problem": c.problem,
                "beyond_harness": c.beyond_harness,
                "hint": c.hint,
            })
        })
        .collect();
    let mut out = json!({
        "schema": SCHEMA,
        "cpu": report.cpu,
        "root": report.root.display().to_string(),
        "ready": report.is_ready(),
        "problems": report.problems(),
        "checks": checks,
    });
    if let (Some(env), Some(obj)) = (environment, out.as_object_mut()) {
        obj.insert("environment".into(), Value::Object(env));
    }
    out
}

fn status_label(s: Status) -> &'static str {
    match s {
        Status::Pass => "pass",
        Status::Warn => "WARN",
        Status::Fail => "FAIL",
        Status::Unknown => "unknown",
        Status::Skip => "skip",
    }
}

fn print_table(
    report: &HostReport,
    environment: Option<&serde_json::Map<String, Value>>,
    sandbox: Option<&str>,
) {
    outln!(
        "host check for CPU {} (root {})",
        report.cpu,
        crate::sanitize::path_as_given(&report.root)
    );
    let w = report
        .checks
        .iter()
        .map(|c| c.check.title().len())
        .max()
        .unwrap_or(5);
    outln!("{:<w$}  {:<7}  value", "check", "status");
    for c in &report.checks {
        outln!(
            "{:<w$}  {:<7}  {}",
            c.check.title(),
            status_label(c.status),
            c.value
        );
        if let (Some(hint), false) = (&c.hint, matches!(c.status, Status::Pass | Status::Skip)) {
            outln!("{:<w$}  {:<7}  ↳ fix: {hint}", "", "");
        }
    }
    if let Some(env) = environment {
        outln!("environment:");
        for (k, v) in env {
            outln!("  {k}: {v}");
        }
    }
    if let Some(line) = sandbox {
        outln!("{line}");
    }
    let problems = report.problems();
    for p in &problems {
        outln!("HOST: {p}");
    }
    if problems.is_empty() {
        outln!("host ready");
    } else {
        outln!("{} problem(s)", problems.len());
    }
}
