//! `cyclescope compare --live A B`: the engine's interleaved comparison of two instances —
//! KAT gate, host check, calibration of each, then trial by trial A B / B A in fresh worker
//! processes — with one status line on stderr and, per length, B/A (the geometric mean of the
//! pairs' ratios) with its 95 % confidence interval and verdict. Exit 0 when every length got
//! its interval, 1 otherwise. It computes nothing itself.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::Context;
use clap::Args;

use super::CompareArgs;
use crate::campaign::{self, RequestOverrides, RunRequest};
use crate::catalog::Instance;
use crate::cli::select::SourceArgs;
use crate::cli::{InstanceArgs, arg_value};
use crate::vocabulary::EngineEvent;

mod calibration;
mod counted;
mod output;

use output::{json_of, table};

/// Options of `compare --live` (each needs `--live`).
#[derive(Debug, Clone, Default, PartialEq, Args)]
pub struct LiveArgs {
    /// Message lengths in bytes (default: 1024).
    #[arg(long, value_delimiter = ',', value_name = "BYTES", value_parser = arg_value::length, requires = "live")]
    pub lengths: Option<Vec<u64>>,
    /// Pairs of trials per length (one trial of A and one of B each).
    #[arg(long, value_name = "N", value_parser = arg_value::pairs, requires = "live")]
    pub pairs: Option<u32>,
    /// Measurement CPU (default: the config's, else the highest-numbered CPU this process may
    /// use).
    #[arg(long, value_parser = arg_value::cpu, requires = "live")]
    pub cpu: Option<usize>,
    /// Run directory to create for both sides' records (default: <runs_dir>/<host>-campaign-<UTC>).
    #[arg(long, value_name = "RUN_DIR", requires = "live")]
    pub out: Option<PathBuf>,
    /// Seconds one trial aims at (the guide: 1.0).
    #[arg(long, value_name = "S", value_parser = arg_value::trial_target, requires = "live")]
    pub trial_target: Option<f64>,
    /// Seconds before a KAT worker is killed.
    #[arg(long, value_name = "S", value_parser = arg_value::kat_timeout, requires = "live")]
    pub kat_timeout: Option<f64>,
    /// Discover the instances under DIR (every lib*.so; an ngcc-harness tree works as is).
    #[arg(long, value_name = "DIR", requires = "live", conflicts_with = "src")]
    pub scan: Option<PathBuf>,
    /// Build the instances of a submission source tree first (as `--src` elsewhere); A and B
    /// may then be one label built two ways (`--profile-a`/`--profile-b`, `--cflags-a`/`--cflags-b`).
    #[arg(long, value_name = "DIR", requires = "live")]
    pub src: Option<PathBuf>,
    /// Candidate id of the --src instances.
    #[arg(long, requires = "src", value_parser = arg_value::name)]
    pub id: Option<String>,
    /// What both sides' KATs are checked against (`--manifest`, `--kat-dir`; default: the
    /// catalog's).
    #[command(flatten)]
    pub kat_refs: crate::cli::kat_refs::KatRefArgs,
    /// C compiler of the --src builds.
    #[arg(long, requires = "src", value_name = "CC")]
    pub cc: Option<String>,
    /// Flag profile of A's --src build (guide, harness-default, or one of [profiles]).
    #[arg(
        long,
        requires = "src",
        value_name = "NAME",
        conflicts_with = "cflags_a"
    )]
    pub profile_a: Option<String>,
    /// Flag profile of B's --src build.
    #[arg(
        long,
        requires = "src",
        value_name = "NAME",
        conflicts_with = "cflags_b"
    )]
    pub profile_b: Option<String>,
    /// Compiler flags of A's --src build instead of a profile (e.g. "-O0").
    #[arg(
        long,
        requires = "src",
        value_name = "FLAGS",
        allow_hyphen_values = true
    )]
    pub cflags_a: Option<String>,
    /// Compiler flags of B's --src build instead of a profile.
    #[arg(
        long,
        requires = "src",
        value_name = "FLAGS",
        allow_hyphen_values = true
    )]
    pub cflags_b: Option<String>,
    /// A/A calibration: A and B name one instance, measured against itself (sides `+A`,
    /// `+B`); each length's difference, if any, is a false positive, and their rate is reported.
    #[arg(long, requires = "live")]
    pub aa: bool,
    /// Measure even if the host check finds problems (they are stored with the run).
    #[arg(long, requires = "live")]
    pub allow_unfixed_host: bool,
    /// Time instances whose KAT did not pass.
    #[arg(long, requires = "live")]
    pub allow_kat_fail: bool,
    /// Compare over a plan out of proportion: more than 1000 jobs, or a message longer
    /// than 1 MiB
    #[arg(long, requires = "live")]
    pub allow_large_plan: bool,
    /// What each side counts: `cycles` (interleaved timed trials), `instructions` (one exact
    /// count per side and length under valgrind; no interleaving, no interval) or
    /// `hw-instructions` (interleaved timed trials counting the PMU's `instructions:u`)
    #[arg(long, value_enum, requires = "live")]
    pub counter: Option<crate::cli::run::CounterArg>,
    /// Kill any worker after S seconds, whatever the plan allows (tests).
    #[arg(long, hide = true, value_name = "S", value_parser = arg_value::timeout_cap, requires = "live")]
    pub timeout_cap: Option<f64>,
    /// Read sysfs/procfs below DIR for the host check (fixture trees).
    #[arg(long, hide = true, value_name = "DIR", requires = "live")]
    pub host_root: Option<PathBuf>,
}

/// Pairs per length unless told: t(9) = 2.262 keeps the interval within ~1.4 × the per-pair
/// spread / √10, at twenty trials' time.
const DEFAULT_PAIRS: u32 = 10;

pub fn run(config: Option<&Path>, args: &CompareArgs) -> anyhow::Result<ExitCode> {
    let o = &args.live_opts;
    let labels = [&args.a, &args.b].map(|p| p.to_string_lossy().into_owned());
    // Each side resolved on its own: with --src, each is built with its own flags (the build
    // cache makes a shared build free).
    let side = |label: &str, profile: &Option<String>, cflags: &Option<String>| {
        InstanceArgs {
            labels: vec![label.to_string()],
            source: SourceArgs {
                scan: o.scan.clone(),
                src: o.src.clone(),
                id: o.id.clone(),
                profile: profile.clone(),
                cflags: cflags.clone(),
                cc: o.cc.clone(),
                kat_refs: o.kat_refs.clone(),
                ..SourceArgs::default()
            },
        }
        .resolve(config, false)
    };
    let (catalog, mut a) = side(&labels[0], &o.profile_a, &o.cflags_a)?;
    let (_, mut b) = side(&labels[1], &o.profile_b, &o.cflags_b)?;
    let mut instances: Vec<Instance> = a.drain(..).chain(b.drain(..)).collect();
    if let [a, b] = instances.as_mut_slice()
        && (&a.candidate, &a.label) == (&b.candidate, &b.label)
    {
        if o.aa {
            calibration::split(a, b)?;
        } else if a.library != b.library {
            name_by_build(a, b, o)?;
        }
    } else if o.aa {
        anyhow::bail!("--aa measures one instance against itself: give the same label as A and B");
    }
    let out = o
        .out
        .clone()
        .unwrap_or_else(|| crate::cli::run::default_run_dir(&catalog.settings.runs_dir));
    if out.exists() {
        anyhow::bail!("{} exists already: give a new --out folder", out.display());
    }
    let overrides = RequestOverrides {
        journal: crate::journal::JournalTarget::of_setting(catalog.settings.journal.as_deref()),
        ..overrides(o)
    };
    let req = RunRequest::build(&catalog.settings, instances, out, overrides)?;
    campaign::check_pair(&req)?;
    crate::owned::create_run_folder(&req.run_dir)
        .with_context(|| format!("creating {}", req.run_dir.display()))?;
    let cancel = Arc::new(AtomicBool::new(false));
    crate::interrupt::stop_on_signals(&cancel).context("installing the signal handlers")?;
    if o.counter == Some(crate::cli::run::CounterArg::Instructions) {
        return counted::run(&req, args.output.format() == super::Format::Json, &cancel);
    }
    let pairs = o.pairs.unwrap_or(DEFAULT_PAIRS);
    let mut status = Status::new(pairs, req.lengths.len(), &req.run_dir);
    let result = campaign::interleave(&req, pairs, &mut |ev| status.show(&ev), &cancel)?;
    status.clear();
    let aa =
        o.aa.then(|| calibration::FalsePositives::of(&result.comparisons));
    if args.output.format() == super::Format::Json {
        let mut json = json_of(&req, pairs, &result, status.measured_by.as_deref());
        if let Some(aa) = aa {
            json["aa_calibration"] = aa.json();
        }
        outln!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        out!("{}", table(&req, pairs, &result.comparisons));
        if let Some(aa) = aa {
            outln!("{}", aa.line());
        }
        if let Some(by) = &status.measured_by {
            outln!("{by}");
        }
    }
    eprintln!(
        "run directory: {}  (each side's trials are its record there)",
        crate::sanitize::terminal_path(&req.run_dir)
    );
    let complete = !result.run.cancelled
        && result
            .comparisons
            .iter()
            .all(|c| c.ratio.is_some() && c.problem.is_none());
    Ok(if complete {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// One instance built two ways: each side's candidate id gets its build's name
/// (`fixhash+O0`, `fixhash+guide`), so the two records keep apart and the table says which is
/// which. The label stays: the KAT manifest knows the instance by it.
fn name_by_build(a: &mut Instance, b: &mut Instance, o: &LiveArgs) -> anyhow::Result<()> {
    let (ta, tb) = (
        build_tag(a, o.cflags_a.as_deref()),
        build_tag(b, o.cflags_b.as_deref()),
    );
    let (ta, tb) = if ta == tb {
        ("A".to_string(), "B".to_string())
    } else {
        (ta, tb)
    };
    for (inst, tag) in [(a, ta), (b, tb)] {
        let id: String = format!("{}+{tag}", inst.candidate)
            .chars()
            .take(64)
            .collect();
        cyclescope_core::name::SafeName::new("candidate id", &id)?;
        inst.candidate = id;
    }
    Ok(())
}

/// A name-safe tag for a side's build: its ad-hoc flags (`-O0 -g` → `O0_g`), else the
/// profile name its library records.
fn build_tag(i: &Instance, cflags: Option<&str>) -> String {
    let text = cflags.unwrap_or(&i.flags);
    let tag: String = text
        .split_whitespace()
        .map(|w| {
            w.trim_start_matches('-')
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || "._+-".contains(c) {
                        c
                    } else {
                        '_'
                    }
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("_");
    tag.chars().take(24).collect()
}

fn overrides(o: &LiveArgs) -> RequestOverrides {
    RequestOverrides {
        lengths: Some(o.lengths.clone().unwrap_or_else(|| vec![1024])),
        cpu: o.cpu,
        trial_target_s: o.trial_target,
        kat_timeout_s: o.kat_timeout,
        timeout_cap_s: o.timeout_cap,
        host_root: o.host_root.clone(),
        allow_unfixed_host: o.allow_unfixed_host,
        allow_kat_fail: o.allow_kat_fail,
        allow_large_plan: o.allow_large_plan,
        counter: o
            .counter
            .map_or(crate::counter::RunCounter::Cycles, Into::into),
        ..RequestOverrides::default()
    }
}

/// One updating line on a terminal (which trial of which length), and a permanent line for
/// what the operator must know (KAT verdicts, retried trials, failures, warnings).
struct Status {
    /// What measured the figures, from the first record written (counter, clock, CPU).
    measured_by: Option<String>,
    run_dir: PathBuf,
    tty: bool,
    per_length: u32,
    lengths: usize,
    started: u32,
}

impl Status {
    fn new(pairs: u32, lengths: usize, run_dir: &Path) -> Self {
        Self {
            measured_by: None,
            run_dir: run_dir.to_path_buf(),
            tty: std::io::stderr().is_terminal(),
            per_length: 2 * pairs,
            lengths,
            started: 0,
        }
    }

    fn line(&self, text: &str) {
        let text = crate::sanitize::terminal_text(text);
        let mut e = std::io::stderr();
        let _ = if self.tty {
            write!(e, "\r\x1b[2K{text}\n")
        } else {
            writeln!(e, "{text}")
        };
    }

    fn clear(&self) {
        if self.tty {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }

    fn show(&mut self, ev: &EngineEvent) {
        match ev {
            EngineEvent::KatFinished { label, status, .. } => {
                self.line(&format!("KAT {label}: {status}"));
            }
            EngineEvent::JobStarted { job, .. } => {
                self.started += 1;
                if self.tty {
                    let _ = write!(
                        std::io::stderr(),
                        "\r\x1b[2Ktrial {}/{} ({} lengths): {job}",
                        self.started,
                        self.per_length as usize * self.lengths,
                        self.lengths
                    );
                }
            }
            EngineEvent::TrialRetried { job, reason, .. } => {
                self.line(&format!("{job}: trial re-run ({reason})"));
            }
            EngineEvent::JobFinished {
                job,
                summary,
                record,
                ..
            } if self.measured_by.is_none() => {
                self.measured_by =
                    Some(crate::cli::run::measured_by(&self.run_dir, summary, record));
            }
            EngineEvent::JobFailed { job, reason, .. } => {
                self.line(&format!("{job}: {reason}"));
            }
            EngineEvent::Warning { message } => self.line(&format!("warning: {message}")),
            EngineEvent::HostProblems { problems } => {
                self.line(&format!("host problems accepted: {}", problems.join("; ")));
            }
            _ => {}
        }
    }
}
