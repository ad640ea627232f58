//! `cyclescope kat`: the KAT gate from the command line. Each instance's job runs in a worker
//! process (`kat::run_kat`); this frontend picks the instances and references, shows progress
//! on stderr, prints one `RESULT` line per instance on stdout, optionally writes a manifest,
//! and exits with the worst status. Everything else is the engine's.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;

use super::InstanceArgs;
use super::select::load_catalog;
use crate::catalog::{self, Instance, Settings};
use crate::kat::pool::{PoolError, PoolEvent, run_kats};
use crate::kat::run::KatError;
use crate::kat::{KatEvent, KatOptions, KatScope, KatStatus, Manifest};

/// The exit status of a `kat` stopped by a signal (128 + SIGINT).
const CANCELLED_EXIT: u8 = 130;

#[derive(Debug, Args)]
pub struct KatArgs {
    #[command(flatten)]
    pub select: InstanceArgs,
    /// ALGORITHM_INSTANCE spelling in the KAT file names (default: catalog kat_name, else
    /// ngcc_meta instance, else the label).
    #[arg(long, value_name = "NAME", value_parser = super::arg_value::name)]
    pub kat_name: Option<String>,
    /// Also run KAT_Loop (10^6 chained calls).
    #[arg(long = "loop", conflicts_with = "full")]
    pub with_loop: bool,
    /// All four files: adds KAT_2_33 (three 1 GiB messages) and KAT_Loop.
    #[arg(long)]
    pub full: bool,
    /// Seconds before a job's worker is killed (default: settings.kat_timeout_s, 900).
    #[arg(long, value_name = "SECONDS", value_parser = super::arg_value::kat_timeout)]
    pub timeout: Option<f64>,
    /// Address-space limit of the KAT worker, MiB (RLIMIT_AS; default:
    /// $CYCLESCOPE_MAX_ADDRESS_SPACE_MIB, else settings max_address_space_mib, else 2048).
    #[arg(long, value_name = "MIB", value_parser = super::arg_value::address_space_mib)]
    pub max_address_space_mib: Option<u64>,
    /// Run directory for logs and generated KAT text (default: a fresh runs/kat-<UTC time>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Add the generated files' digests to this manifest (created or merged, sorted).
    #[arg(long, value_name = "FILE")]
    pub write_manifest: Option<PathBuf>,
    /// One JSON object per instance on stdout (its KAT status and its `conformance` checks)
    /// instead of the `RESULT` lines.
    #[arg(long)]
    pub json: bool,
}

pub fn run(config: Option<&Path>, args: &KatArgs) -> anyhow::Result<ExitCode> {
    let (settings, instances, peers) = resolve(config, &args.select)?;
    let timeout_s = args.timeout.unwrap_or(settings.kat_timeout_s);
    let run_dir = match &args.out {
        Some(d) => d.clone(),
        None => fresh_run_dir(&settings.runs_dir)?,
    };
    crate::owned::create_run_folder(&run_dir)
        .with_context(|| format!("cannot create {}", run_dir.display()))?;
    let mut opts = KatOptions::new(&run_dir);
    opts.scope = match (args.full, args.with_loop) {
        (true, _) => KatScope::Full,
        (false, true) => KatScope::Loop,
        (false, false) => KatScope::Default,
    };
    opts.timeout = Duration::from_secs_f64(timeout_s);
    // `--manifest` and `--kat-dir` (the shared `KatRefArgs`) are on the instances already;
    // the options repeat them so they win over a catalog manifest for every instance named.
    opts.manifest = args.select.source.kat_refs.manifest.clone();
    opts.kat_dir = args.select.source.kat_refs.kat_dir.clone();
    opts.kat_name = args.kat_name.clone();
    let mib = crate::worker::limits::address_space_mib(
        args.max_address_space_mib,
        settings.max_address_space_mib,
    )
    .map_err(anyhow::Error::msg)?;
    opts.limits.address_space_bytes = Some(mib << 20);
    let cancel = Arc::new(AtomicBool::new(false));
    crate::interrupt::stop_on_signals(&cancel).context("installing the signal handlers")?;
    opts.cancel = Some(cancel);
    opts.peers = peers;

    let pool = crate::kat::pool::CpuPool::of_this_process()?;
    let lines: Vec<Mutex<ProgressLine>> = instances
        .iter()
        .map(|i| Mutex::new(ProgressLine::new(&i.label)))
        .collect();
    let cpus: Mutex<Vec<Option<usize>>> = Mutex::new(vec![None; instances.len()]);
    let reports = run_kats(&instances, &opts, &pool, &|i, ev| {
        let label = &instances[i].label;
        match ev {
            PoolEvent::Started { cpu } => {
                if let Ok(mut c) = cpus.lock() {
                    c[i] = Some(cpu);
                }
                eprintln!("cyclescope: KAT of {label} on CPU {cpu}");
            }
            PoolEvent::Kat(e) => {
                if let Ok(mut l) = lines[i].lock() {
                    l.on_event(e);
                }
            }
            PoolEvent::Waiting(busy) => eprintln!(
                "cyclescope: {busy}; the KAT of {label} waits for a free CPU (up to {} s, {})",
                pool.wait.as_secs(),
                crate::cpu::lock::LOCK_WAIT_ENV
            ),
        }
    });
    let cpus = cpus.into_inner().unwrap_or_else(|p| p.into_inner());
    let mut worst = KatStatus::Pass;
    let mut entries = Vec::new();
    let mut objects = Vec::new();
    for ((inst, report), (line, cpu)) in instances.iter().zip(reports).zip(lines.iter().zip(cpus)) {
        if let Ok(mut l) = line.lock() {
            l.clear();
        }
        let report = match report {
            Err(PoolError::Kat(KatError::Cancelled(label))) => {
                eprintln!(
                    "cyclescope: cancelled during the KAT of {label}; its worker was stopped"
                );
                return Ok(ExitCode::from(CANCELLED_EXIT));
            }
            // A broken manifest is said in its own words (as any input error), then the way
            // on; the library is not blamed (no RESULT line, no LOADFAIL).
            Err(PoolError::Kat(e @ KatError::Manifest(_))) => {
                let status = e.status();
                eprintln!("cyclescope: {}", super::error_text(&e.into()));
                eprintln!("  {status}: {}", status.hint());
                return Ok(ExitCode::from(2));
            }
            Err(PoolError::Kat(e)) => return Err(e.into()),
            Err(e) => return Err(e.into()),
            Ok(r) => r,
        };
        let note = crate::conform::findings_note(&report.conformance);
        if args.json {
            objects.push(json_object(inst, &report, &run_dir, cpu));
            if let Some(note) = &note {
                eprintln!("  {}: {}", inst.label, crate::sanitize::terminal(note));
            }
        } else {
            // The log keeps the harness's line byte for byte (a pass ends in a space); the
            // terminal gets it without that trailing space, and with the findings that do not
            // block beside the verdict they leave standing.
            let line = report.result_line();
            match &note {
                None => outln!("{}", line.trim_end()),
                Some(note) => outln!("{} ({})", line.trim_end(), crate::sanitize::terminal(note)),
            }
        }
        if !report.status.is_pass() {
            eprintln!("  {}: {}", report.status, report.status.hint());
            if matches!(
                report.status,
                KatStatus::Crash | KatStatus::Timeout | KatStatus::Tampered
            ) {
                let tail: Vec<&str> = report.stderr_tail.lines().rev().take(3).collect();
                for line in tail.iter().rev() {
                    eprintln!("  worker stderr: {}", crate::sanitize::terminal(line));
                }
            }
        }
        worst = worst.worst(report.status);
        entries.extend(report.manifest_entries(args.select.source.kat_refs.kat_dir.as_deref()));
    }
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&objects).context("serialising the KAT results")?
        );
    }
    eprintln!(
        "cyclescope: KAT logs in {}",
        crate::sanitize::terminal_path(&run_dir.join("kat"))
    );
    if let Some(path) = &args.write_manifest {
        let mut manifest = if path.is_file() {
            Manifest::load(path)?
        } else {
            Manifest::default()
        };
        let n = entries.len();
        manifest.merge(entries);
        manifest.write(path)?;
        eprintln!(
            "cyclescope: {n} entries written to {}",
            crate::sanitize::path_as_given(path)
        );
    }
    Ok(ExitCode::from(worst.exit_code()))
}

/// `{candidate, label, id, instance, status, detail, log, conformance: [{check, outcome,
/// detail}], findings: [...]}`: one instance's KAT for `kat --json` (strings a library
/// controls sanitized); `findings` repeats the outcomes that do not block, beside a status
/// they leave standing.
fn json_object(
    inst: &Instance,
    report: &crate::kat::KatReport,
    run_dir: &Path,
    cpu: Option<usize>,
) -> serde_json::Value {
    let clean = crate::sanitize::log_field;
    serde_json::json!({
        "candidate": inst.candidate,
        "label": inst.label,
        "id": clean(&report.id),
        "status": report.status.to_string(),
        "detail": clean(report.detail()),
        "log": report.log_path().strip_prefix(run_dir).unwrap_or(report.log_path()).display().to_string(),
        "conformance": report.conformance.iter().map(|r| r.to_json()).collect::<Vec<_>>(),
        "findings": crate::conform::findings(&report.conformance).iter().map(|r| r.to_json()).collect::<Vec<_>>(),
        "cpu": cpu,
        "peak_memory_bytes": report.peak_memory_bytes,
        "cpu_time_s": report.cpu_time.map(|d| d.as_secs_f64()),
    })
}

/// The instances to check, the settings, and every instance of the catalog (where each one's
/// `differential` oracle is looked for). An ad-hoc `--lib` that cannot even be probed still
/// gets a job, so that its failure is reported as LOADFAIL like any other.
fn resolve(
    config: Option<&Path>,
    select: &InstanceArgs,
) -> anyhow::Result<(Settings, Vec<Instance>, Vec<Instance>)> {
    // The references are the user's, not the library's: a problem with them stops here, said
    // once (the fallback below would say it and then meet it again in the KAT).
    select.source.kat_refs.check()?;
    // `--scan` checks everything it finds unless labels pick some.
    match (
        select.resolve(
            config,
            select.source.scan.is_some() || select.source.src.is_some(),
        ),
        &select.source.lib,
    ) {
        (Ok((catalog, instances)), _) => {
            let mut peers: Vec<Instance> = catalog.instances().cloned().collect();
            peers.extend(instances.iter().cloned());
            Ok((catalog.settings, instances, peers))
        }
        (Err(e), Some(lib)) => {
            let settings = load_catalog(config).map(|c| c.settings).unwrap_or_default();
            let mut inst = catalog::adhoc_instance(
                lib,
                select.source.label.as_deref(),
                select.source.digest_bits,
                None,
            )
            .unwrap_or_else(|_| unprobed_instance(lib, select));
            if let Some(note) = &select.source.flags_note {
                inst.flags = note.clone();
            }
            eprintln!(
                "cyclescope: {}",
                crate::sanitize::terminal_message(&format!("{e:#}"))
            );
            Ok((settings, vec![inst], vec![]))
        }
        (Err(e), None) => Err(e),
    }
}

fn unprobed_instance(lib: &Path, select: &InstanceArgs) -> Instance {
    let stem = lib
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let label = select
        .source
        .label
        .clone()
        .unwrap_or_else(|| stem.strip_prefix("lib").unwrap_or(&stem).to_string());
    Instance {
        candidate: "adhoc".into(),
        algorithm: label.clone(),
        label,
        library: lib.to_path_buf(),
        digest_bits: select.source.digest_bits.unwrap_or(0),
        variant: "reference".into(),
        flags: crate::catalog::UNKNOWN_FLAGS.into(),
        kat_manifest: None,
        kat_name: None,
        abi: select.source.abi.into(),
        oracle: None,
        kat_dir: None,
    }
}

/// `<runs_dir>/kat-<UTC timestamp>`, suffixed when that exists already.
fn fresh_run_dir(runs_dir: &Path) -> anyhow::Result<PathBuf> {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
    let base = runs_dir.join(format!("kat-{stamp}"));
    (1..100)
        .map(|i| {
            if i == 1 {
                base.clone()
            } else {
                runs_dir.join(format!("kat-{stamp}-{i}"))
            }
        })
        .find(|p| !p.exists())
        .context("cannot find a fresh run directory name")
}

/// Progress on stderr: an updating line on a terminal, else a line every ten seconds.
struct ProgressLine {
    label: String,
    tty: bool,
    last: Instant,
    shown: bool,
}

impl ProgressLine {
    fn new(label: &str) -> Self {
        Self {
            label: label.to_string(),
            tty: std::io::stderr().is_terminal(),
            last: Instant::now(),
            shown: false,
        }
    }

    fn on_event(&mut self, e: &KatEvent) {
        let KatEvent::Progress { file, done, total } = e else {
            return;
        };
        let pct = 100.0 * *done as f64 / (*total).max(1) as f64;
        let text = format!("{} {} {done}/{total} ({pct:.0}%)", self.label, file.tag());
        let mut err = std::io::stderr().lock();
        if self.tty {
            let _ = write!(err, "\r{text}\x1b[K");
            let _ = err.flush();
            self.shown = true;
        } else if self.last.elapsed() >= Duration::from_secs(10) {
            self.last = Instant::now();
            let _ = writeln!(err, "cyclescope: {text}");
        }
    }

    fn clear(&mut self) {
        if self.shown {
            let _ = write!(std::io::stderr(), "\r\x1b[K");
            self.shown = false;
        }
    }
}
