//! The seam between the workbench and the engine: starts a run on the engine's thread with a
//! cancel flag, runs host checks off the UI thread, and hands everything back as messages the
//! event loop drains without blocking. It also keeps the UI thread off the measurement CPU
//! (through `cpu`; the engine thread inherits the mask of the thread that spawns it). Its run
//! requests come from the core's one builder, so every setting the CLI honours it honours.

mod run_thread;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::app::{HostRow, RunSpec};
use crate::campaign::{RequestOverrides, RunRequest};
use crate::catalog::Settings;
use crate::cpu::CpuMask;
use crate::host::{self, HostRoot, Probes, Status};
use crate::vocabulary::EngineEvent;
use run_thread::run_engine;

/// What the link hands back.
#[derive(Debug)]
pub enum Msg {
    Engine(Box<EngineEvent>),
    Host(Vec<HostRow>),
    /// A helper thread panicked: its message went to stderr over the screen, which must be
    /// drawn afresh.
    Repaint,
    /// The engine would not start the run (`host`: because host checks failed).
    Refused {
        reason: String,
        host: bool,
    },
    /// A KAT-only job (`K`) ended.
    KatsDone,
    /// Instances rebuilt from sources before a run, with the flags each got, and what
    /// failed to build.
    Rebuilt {
        built: Vec<(crate::catalog::Instance, crate::build::ProfileChoice)>,
        problems: Vec<String>,
    },
    /// An interleaved A/B (`=`) ended: which two instances, and B/A per length.
    Compared(Box<crate::campaign::ab_result::AbResult>),
    /// A length sweep (`w`) ended with its fits.
    Swept(Box<crate::sweep::SweepFile>),
}

/// The text of a panic payload.
fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// What a rebuild from sources gives: the instances built, and what could not be built.
#[derive(Debug, Clone, Default)]
pub struct SrcBuilt {
    pub instances: Vec<crate::catalog::Instance>,
    pub problems: Vec<String>,
}

/// Builds the session's submission sources (`--src`) with one flag choice; the frontend
/// provides it (it owns the build settings and the library probe).
pub type BuildFn = dyn Fn(&crate::build::ProfileChoice) -> Result<SrcBuilt, String> + Send + Sync;

/// The session's builder, shared with the engine thread.
#[derive(Clone)]
pub struct SrcBuilder(pub Arc<BuildFn>);

impl std::fmt::Debug for SrcBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SrcBuilder")
    }
}

/// Run options that do not change between runs of one session.
#[derive(Debug, Clone, Default)]
pub struct LinkOptions {
    /// Rebuilds instances from sources before a run that changed their flags (`--src`).
    pub builder: Option<SrcBuilder>,
    /// Write every run into this directory (`--run DIR`); else a fresh one per run.
    pub run_dir: Option<PathBuf>,
    pub runs_dir: PathBuf,
    pub allow_unfixed_host: bool,
    pub allow_kat_fail: bool,
    pub allow_large_plan: bool,
    /// The catalog's settings: what the request builder starts from.
    pub settings: Settings,
    /// Host checks read below this folder instead of `/` (fixture trees).
    pub host_root: Option<PathBuf>,
}

pub struct EngineLink {
    options: LinkOptions,
    tx: Sender<Msg>,
    rx: Receiver<Msg>,
    cancel: Option<Arc<AtomicBool>>,
    engine: Option<JoinHandle<()>>,
    /// The CPUs this process may use at start, before it stepped off the measurement CPU.
    allowed: Option<CpuMask>,
}

impl EngineLink {
    pub fn new(options: LinkOptions) -> Self {
        let (tx, rx) = mpsc::channel();
        Self {
            options,
            tx,
            rx,
            cancel: None,
            engine: None,
            allowed: CpuMask::of_this_thread(),
        }
    }

    /// Moves the calling thread (the UI thread, and through inheritance every thread it
    /// spawns later) off `cpu`, when another CPU is left to run on.
    pub fn keep_off(&self, cpu: usize) {
        if let Some(allowed) = self.allowed {
            // Best effort: a cpuset that forbids the change leaves us where we were.
            allowed.step_off(cpu);
        }
    }

    /// The run directory for the next run: `--run DIR`, else a new one per start (a second
    /// start within the same second gets a suffix, so it never resumes the first).
    pub fn next_run_dir(&self) -> PathBuf {
        if let Some(dir) = &self.options.run_dir {
            return dir.clone();
        }
        let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
        let base = self.options.runs_dir.join(format!("tui-{stamp}"));
        (1..)
            .map(|n| match n {
                1 => base.clone(),
                n => PathBuf::from(format!("{}-{n}", base.display())),
            })
            .find(|p| !p.exists())
            .unwrap_or(base)
    }

    pub fn start(&mut self, spec: RunSpec) {
        self.spawn(spec, false);
    }

    /// A length sweep of the spec's instance (the `sweep` command's defaults); ends with
    /// `Msg::Swept` when it got as far as fitting.
    pub fn start_sweep(&mut self, spec: RunSpec) {
        self.spawn(spec, true);
    }

    fn spawn(&mut self, spec: RunSpec, sweep: bool) {
        if let Some(allowed) = self.allowed {
            // Off every measurement CPU of the run; best effort, as `keep_off`.
            allowed.step_off_all(&spec.cpus);
        }
        let cancel = Arc::new(AtomicBool::new(false));
        self.cancel = Some(cancel.clone());
        let run_dir = self.next_run_dir();
        let tx = self.tx.clone();
        let options = self.options.clone();
        self.engine = Some(std::thread::spawn(move || {
            run_engine(spec, run_dir, &options, &tx, &cancel, sweep);
        }));
    }

    pub fn cancel(&self) {
        if let Some(c) = &self.cancel {
            c.store(true, Ordering::SeqCst);
        }
    }

    pub fn is_running(&self) -> bool {
        self.engine.as_ref().is_some_and(|h| !h.is_finished())
    }

    /// Runs the KATs of `instances` (nothing measured) on a helper thread, writing their
    /// logs into a run folder of their own; ends with `Msg::KatsDone`.
    pub fn start_kats(&mut self, instances: Vec<crate::catalog::Instance>) {
        let cancel = Arc::new(AtomicBool::new(false));
        self.cancel = Some(cancel.clone());
        let run_dir = self.next_run_dir();
        let tx = self.tx.clone();
        // The settings' limit, as a run's workers get it (a bad variable is refused there).
        let address_space_mib = crate::worker::limits::address_space_mib(
            None,
            self.options.settings.max_address_space_mib,
        )
        .unwrap_or(crate::worker::limits::DEFAULT_ADDRESS_SPACE_MIB);
        self.engine = Some(std::thread::spawn(move || {
            let send = |ev: EngineEvent| {
                let _ = tx.send(Msg::Engine(Box::new(ev)));
            };
            for inst in &instances {
                if cancel.load(Ordering::SeqCst) {
                    break;
                }
                send(EngineEvent::KatStarted {
                    label: inst.label.clone(),
                });
                let mut opts = crate::kat::KatOptions::new(&run_dir).with_cancel(cancel.clone());
                opts.limits.address_space_bytes = Some(address_space_mib << 20);
                let label = inst.label.clone();
                let report = crate::kat::run_kat(inst, &opts, &mut |ev| {
                    if let crate::kat::KatEvent::Progress { file, done, total } = ev {
                        send(EngineEvent::KatProgress {
                            label: label.clone(),
                            file: file.tag().to_string(),
                            done: *done,
                            total: *total,
                        });
                    }
                });
                let log = run_dir
                    .join("kat")
                    .join(&inst.candidate)
                    .join(format!("{}.log", inst.label));
                let (status, detail, log, check, findings) = match report {
                    Ok(r) => (
                        r.status,
                        r.detail().to_string(),
                        log.is_file().then_some(log),
                        crate::conform::first_failure(&r.conformance).map(|c| c.check),
                        crate::conform::findings(&r.conformance),
                    ),
                    // In the words `kat` uses for it: a broken manifest is not a LOADFAIL.
                    Err(e) => (e.status(), e.to_string(), None, None, Vec::new()),
                };
                send(EngineEvent::KatFinished {
                    label: inst.label.clone(),
                    status,
                    detail,
                    log,
                    check,
                    findings,
                });
            }
            let _ = tx.send(Msg::KatsDone);
        }));
    }

    /// Runs the host checks for `cpu` on a helper thread.
    pub fn check_host(&self, cpu: usize) {
        let tx = self.tx.clone();
        let root = self.options.host_root.clone();
        std::thread::spawn(move || {
            let rows = std::panic::catch_unwind(|| host_rows(cpu, root)).unwrap_or_else(|p| {
                let _ = tx.send(Msg::Repaint);
                vec![HostRow {
                    check: None,
                    name: "host checks".into(),
                    status: Status::Unknown,
                    value: format!("failed: {}", panic_text(p.as_ref())),
                    hint: None,
                }]
            });
            let _ = tx.send(Msg::Host(rows));
        });
    }

    /// Everything that arrived since the last call, without waiting.
    pub fn drain(&self) -> Vec<Msg> {
        self.rx.try_iter().collect()
    }

    /// Cancels a run in flight and waits up to `limit` for the engine to wind down, returning
    /// what it sent meanwhile (its last records and `RunFinished`).
    pub fn shutdown(&mut self, limit: Duration) -> Vec<Msg> {
        self.cancel();
        let deadline = Instant::now() + limit;
        let mut out = vec![];
        while self.is_running() && Instant::now() < deadline {
            if let Ok(m) = self.rx.recv_timeout(Duration::from_millis(20)) {
                out.push(m);
            }
        }
        out.extend(self.drain());
        out
    }
}

/// The request of a run the workbench starts: the session's settings, with the workbench's
/// choices (instances, lengths, CPU, planning, the allow flags, the KAT cache) on top.
pub fn request(
    spec: RunSpec,
    run_dir: PathBuf,
    options: &LinkOptions,
) -> Result<RunRequest, crate::campaign::RequestError> {
    let overrides = RequestOverrides {
        lengths: Some(spec.lengths),
        cpu: Some(spec.cpu),
        cpus: Some(spec.cpus),
        trials: Some(spec.planning.trials),
        trial_target_s: Some(spec.planning.trial_target_s),
        op_budget_s: Some(spec.planning.op_budget_s),
        allow_unfixed_host: options.allow_unfixed_host || spec.allow_unfixed_host,
        allow_kat_fail: options.allow_kat_fail || spec.allow_kat_fail,
        allow_large_plan: options.allow_large_plan,
        tui_attached: true,
        kat_passed: spec.kat_passed,
        host_root: options.host_root.clone(),
        reference_pool: spec.reference_pool,
        layouts: spec.layouts,
        counter: spec.counter,
        journal: crate::journal::JournalTarget::of_setting(options.settings.journal.as_deref()),
        ..RequestOverrides::default()
    };
    RunRequest::build(&options.settings, spec.instances, run_dir, overrides)
}

/// The host checks of `cpu` on this machine, as panel rows (checks that do not apply are
/// left out).
/// On this machine (no fixture root) the worker sandbox's protections follow, as `check`
/// reports them.
fn host_rows(cpu: usize, root: Option<PathBuf>) -> Vec<HostRow> {
    let system = root.is_none();
    let mut rows = check_rows(cpu, root);
    if system {
        rows.extend(match crate::cli::worker_cmd::sandbox_state() {
            Ok((state, seen)) => super::protections::rows(&state, seen.as_ref()),
            Err(why) => super::protections::unknown(&why),
        });
    }
    rows
}

fn check_rows(cpu: usize, root: Option<PathBuf>) -> Vec<HostRow> {
    let root = HostRoot::new(root.unwrap_or_else(|| PathBuf::from("/")));
    let mut probes = match Probes::for_root(&root) {
        Ok(p) => p,
        Err(e) => {
            return vec![HostRow {
                check: None,
                name: "host checks".into(),
                status: Status::Unknown,
                value: e.to_string(),
                hint: None,
            }];
        }
    };
    host::check_host(&root, cpu, &mut probes)
        .checks
        .into_iter()
        .filter(|c| c.status != Status::Skip)
        .map(|c| HostRow {
            check: Some(c.check),
            name: c.check.title().to_string(),
            status: c.status,
            value: c.value,
            hint: c.hint.or(c.problem),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_start_gets_its_own_run_directory_unless_one_is_given() {
        let runs = tempfile::tempdir().unwrap();
        let link = EngineLink::new(LinkOptions {
            runs_dir: runs.path().to_path_buf(),
            ..LinkOptions::default()
        });
        let first = link.next_run_dir();
        std::fs::create_dir_all(&first).unwrap();
        let second = link.next_run_dir();
        assert_ne!(first, second);
        assert!(second.starts_with(runs.path()));
        let fixed = EngineLink::new(LinkOptions {
            run_dir: Some("runs/mine".into()),
            ..LinkOptions::default()
        });
        assert_eq!(fixed.next_run_dir(), PathBuf::from("runs/mine"));
    }
}
