//! A KAT job for one `Instance`: writes its files with every digest from the trial worker
//! (`made`, `kat::produce`), runs the conformance checks in trial workers (`engine_checks`),
//! follows the messages it speaks for both (`check`, held to `order`); compares every finished
//! file with its reference (manifest digest, else a `--kat-dir` file line by line, else NOKAT),
//! names how a worker ended (a crash, a stop, a timeout, a load error, a line on its protocol
//! channel: TAMPERED), and writes the KAT log. The calling process survives whatever the
//! candidate does; this module never loads a candidate library itself.

mod check;
mod engine_checks;
mod folder;
mod made;
mod on_disk;
mod order;
mod references;
mod report;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::KatStatus;
use super::generate::KatFile;
use super::job::{JobSpec, KatMessage};
use super::log;
use super::manifest::ManifestError;
use crate::catalog::Instance;
use crate::name::SafeName;
use crate::worker::{self, Limits, WorkerError};

pub use references::Reference;
pub use report::{FileReport, KatReport};

/// Which files a job generates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KatScope {
    /// `KAT_2_12` and `KAT_2_23` (the harness's `make test`).
    #[default]
    Default,
    /// The default files and `KAT_Loop` (`--loop`).
    Loop,
    /// All four, including the 1 GiB messages of `KAT_2_33` (`--full`).
    Full,
}

impl KatScope {
    pub(crate) fn files(self) -> Vec<KatFile> {
        match self {
            KatScope::Default => vec![KatFile::Kat2_12, KatFile::Kat2_23],
            KatScope::Loop => vec![KatFile::Kat2_12, KatFile::Kat2_23, KatFile::Loop],
            KatScope::Full => KatFile::ALL.to_vec(),
        }
    }
}

/// How to run a KAT job.
#[derive(Debug, Clone)]
pub struct KatOptions {
    pub scope: KatScope,
    /// The whole job's limit; the worker is killed after it (TIMEOUT).
    pub timeout: Duration,
    /// A manifest to use instead of the instance's `kat_manifest`.
    pub manifest: Option<PathBuf>,
    /// Reference KAT files, compared line by line when the manifest has no entry.
    pub kat_dir: Option<PathBuf>,
    /// The KAT name to use instead of the instance's (`--kat-name`).
    pub kat_name: Option<String>,
    /// The run directory: logs go to `kat/<candidate>/<label>.log`, text to `katgen/…`.
    pub(crate) run_dir: PathBuf,
    /// Set it to stop the job at once (its worker's process group is killed).
    pub cancel: Option<Arc<AtomicBool>>,
    /// The limits of every trial worker of the job.
    pub limits: Limits,
    /// The other instances at hand: the `differential` check's oracle is looked for among
    /// them (`conform::oracle_for`).
    pub peers: Vec<Instance>,
    /// The CPU the worker is pinned to (a CPU the caller locked: `pool`); None: wherever the
    /// calling thread may run.
    pub cpu: Option<usize>,
}

impl KatOptions {
    /// Default scope, the harness's 900 s timeout, this executable as the worker, the
    /// default limits (2 GiB of address space).
    pub fn new(run_dir: impl Into<PathBuf>) -> Self {
        Self {
            scope: KatScope::Default,
            timeout: Duration::from_secs(900),
            manifest: None,
            kat_dir: None,
            kat_name: None,
            run_dir: run_dir.into(),
            cancel: None,
            limits: Limits::standard(worker::limits::DEFAULT_ADDRESS_SPACE_MIB),
            peers: Vec::new(),
            cpu: None,
        }
    }

    /// Stops the job at its next message once `cancel` is set (the workbench's `c`).
    pub fn with_cancel(mut self, cancel: Arc<AtomicBool>) -> Self {
        self.cancel = Some(cancel);
        self
    }
}

/// What a running job reports to its caller (for progress displays).
#[derive(Debug, Clone, PartialEq)]
pub enum KatEvent {
    Loaded {
        kat_name: String,
    },
    Progress {
        file: KatFile,
        done: u64,
        total: u64,
    },
    FileChecked {
        file: KatFile,
        status: KatStatus,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum KatError {
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Worker(#[from] WorkerError),
    #[error(transparent)]
    Name(#[from] crate::name::NameError),
    #[error(transparent)]
    Path(#[from] crate::record::safe_path::PathError),
    #[error("the KAT job of {0} was cancelled")]
    Cancelled(String),
    #[error("the KAT worker for {label} failed: {detail}")]
    Internal { label: String, detail: String },
}

impl KatError {
    /// The status a KAT job that ended in this error gets: a manifest that cannot be read
    /// or parsed is the references' problem (BADMANIFEST, in the manifest's own words);
    /// anything else kept the library from being loaded and run (LOADFAIL).
    pub fn status(&self) -> KatStatus {
        match self {
            KatError::Manifest(_) => KatStatus::BadManifest,
            _ => KatStatus::Loadfail,
        }
    }
}

fn io_err(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> KatError {
    let path = path.to_path_buf();
    move |source| KatError::Io { what, path, source }
}

/// Runs the KAT job of `inst` in a worker process and writes its log.
pub fn run_kat(
    inst: &Instance,
    opts: &KatOptions,
    on_event: &mut dyn FnMut(&KatEvent),
) -> Result<KatReport, KatError> {
    let reference = references::References::load(inst, opts)?;
    // The names become folders and files of the run directory: checked, and kept inside it.
    let (candidate, label) = inst.file_names()?;
    if let Some(k) = &opts.kat_name {
        SafeName::new("KAT name", k)?;
    }
    let inside = |rel: PathBuf| crate::record::safe_path::inside(&opts.run_dir, &rel);
    let gen_dir = inside(Path::new("katgen").join(&candidate).join(&label))?;
    std::fs::create_dir_all(&gen_dir).map_err(io_err("cannot create", &gen_dir))?;
    let log_path = inside(
        Path::new("kat")
            .join(&candidate)
            .join(format!("{label}.log")),
    )?;
    let files = opts.scope.files();
    let spec = JobSpec {
        label: inst.label.clone(),
        digest_bits: inst.digest_bits,
        kat_name: opts.kat_name.clone().or_else(|| inst.kat_name.clone()),
        files: files.clone(),
    };
    // The folder's budget: the files this job generates, each no larger than its text.
    let budget = folder::Budget::new(&files, inst.digest_bits);
    let before = folder::Listing::of(&gen_dir);
    let library_shown = log::shown_path(&inst.library, &opts.run_dir);
    let mut state = check::JobState::new(inst, &library_shown);
    let mut order = order::KatOrder::new(&files);
    // The files: written here, every digest from the trial worker (`kat::produce`).
    let mut producer = super::produce::Producer::new(inst, opts);
    let mut inconsistent = None;
    // What the engine speaks in the job's protocol, held to its order.
    let mut taken = |order: &mut order::KatOrder, state: &mut check::JobState, m: KatMessage| {
        // A stop the protocol has no word for (a crash, a timeout) ends it here.
        let ends = matches!(&m, KatMessage::Fault { status, .. }
            if !matches!(status, KatStatus::Cryptofail | KatStatus::Overflow));
        let taken = match ends {
            true => Ok(()),
            false => order.accept(&m),
        }
        .and_then(|()| state.on_message(m, &reference, &gen_dir, &opts.run_dir, on_event));
        if let Err(e) = taken {
            inconsistent.get_or_insert(e.0);
        }
    };
    let made = made::make_files(inst, &spec, &gen_dir, &mut producer, &mut |m| {
        taken(&mut order, &mut state, m)
    });
    if producer.cancelled {
        return Err(KatError::Cancelled(inst.label.clone()));
    }
    // The conformance checks, each in trial workers of its own, once every file is written;
    // `alignment` hashes the `KAT_2_12` vectors just verified.
    let mut checked = crate::measure::table::Account::default();
    if made.is_some() {
        let vectors = state.vectors().to_vec();
        let ran = engine_checks::run(inst, opts, &files, &vectors, &mut checked, &mut |m| {
            taken(&mut order, &mut state, m)
        });
        match ran {
            engine_checks::Ran::Cancelled => {
                return Err(KatError::Cancelled(inst.label.clone()));
            }
            engine_checks::Ran::Stopped => {}
            engine_checks::Ran::Done => taken(&mut order, &mut state, KatMessage::Done),
        }
    }
    if let Some(detail) = inconsistent {
        return Err(KatError::Internal {
            label: inst.label.clone(),
            detail,
        });
    }
    let (status, detail) = state.verdict().unwrap_or_else(|| {
        (
            KatStatus::Crash,
            format!("no verdict{}", state.during(&files)),
        )
    });
    // The folder must hold only what the generator wrote.
    let after = folder::Listing::of(&gen_dir);
    let (status, detail) = match budget.breach(&before, &after, state.kat_name()) {
        None => (status, detail),
        // A verdict resting on the files is void; a fault already stopping the job keeps its
        // word, and the file is named beside it.
        Some(why) if status <= KatStatus::Nokat => (KatStatus::Tampered, why),
        Some(why) => (status, format!("{detail}; {why}")),
    };
    if let Some(detail) = state
        .internal_error()
        .filter(|_| status != KatStatus::Tampered)
    {
        return Err(KatError::Internal {
            label: inst.label.clone(),
            detail,
        });
    }
    let mut report = state.finish(status, detail, log_path);
    // Every worker of the job: the trial workers that made the files and ran the checks.
    let mut account = producer.account;
    account.add(checked.peak_memory_bytes, checked.cpu_time);
    report.peak_memory_bytes = account.peak_memory_bytes;
    report.cpu_time = account.cpu_time;
    write_log(&report.log_path, &state_log(&report, &state))?;
    Ok(report)
}

fn state_log(report: &KatReport, state: &check::JobState) -> String {
    let mut text = state.log_lines().join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    // Measured from outside the worker: nothing the candidate does can change it.
    if let Some(bytes) = report.peak_memory_bytes {
        text.push_str(&format!(
            "memory  peak {} (the largest of its workers', each by its control group)\n",
            crate::format::bytes(bytes)
        ));
    }
    if let Some(cpu) = report.cpu_time {
        text.push_str(&format!(
            "cpu     {:.3} s (its workers' control groups: every thread and process they started)\n",
            cpu.as_secs_f64()
        ));
    }
    text.push_str(&report.result_line());
    text.push('\n');
    text
}

fn write_log(path: &Path, text: &str) -> Result<(), KatError> {
    // The same `.tmp` + rename as records: a planted `.tmp` link is replaced, not followed.
    crate::record::pyjson::write_atomic(path, text.as_bytes()).map_err(io_err("cannot write", path))
}
