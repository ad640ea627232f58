//! The parent side of an instruction count (`counter::callgrind`): a trial worker started
//! under valgrind with `--count`, its file-size limit raised for valgrind's output file (in a
//! private scratch folder), and, once it ended, the count read from that file into the
//! process's figures: its one trial then holds the candidate's instructions where a timed trial
//! holds cycles, its source is `valgrind:callgrind:Ir`, and the record keeps the full count
//! (cache misses, the cycle estimate, what the sandbox gave up). It never plans or retries.

use std::path::PathBuf;

use super::job::{ProcessRun, WorkerInfo};
use super::trial::{SandboxInForce, TrialSpec};
use crate::counter::CycleSource;
use crate::counter::callgrind::{
    self, CallgrindError, ESTIMATE_FORMULA, InstructionCount, LANDLOCK_RELAXED, RELAXED,
    SECCOMP_RELAXED, collection,
};
use crate::vocabulary::{FailureKind, JobFailure, JobOutcome};
use crate::worker::Limits;

/// valgrind's output file, alone in the count's scratch folder.
const OUT_FILE: &str = "callgrind.out";

/// A count's launcher and where valgrind writes.
pub(crate) struct CountRun {
    /// The folders lent to root's unprivileged worker user (`jail::identity`), given back
    /// before they are removed.
    _loans: Vec<crate::jail::identity::Loan>,
    _scratch: tempfile::TempDir,
    out_file: PathBuf,
    pub(crate) valgrind: PathBuf,
    /// The run's sealed bytes copied for valgrind (`plugin::sealed::copy_into`), in a
    /// folder of their own beside the output's; None when the library is not sealed.
    _copy_dir: Option<tempfile::TempDir>,
    pub(crate) library_copy: Option<PathBuf>,
    /// The trial worker copied beside the library for root's unprivileged worker user, who
    /// may not pass the folders above the cache; None when the worker runs as this user.
    pub(crate) worker_copy: Option<PathBuf>,
}

impl CountRun {
    /// The scratch folder and valgrind's path, or why a count cannot run here (or of this
    /// library: one that carries valgrind client requests is not run under valgrind).
    pub(crate) fn prepare(
        library: &std::path::Path,
        sealed: Option<&crate::plugin::sealed::SealedLibrary>,
        worker_exe: &std::path::Path,
    ) -> Result<Self, CallgrindError> {
        let valgrind = callgrind::find_valgrind()?;
        callgrind::refuse_client_requests(library)?;
        let (copy_dir, library_copy) = match sealed {
            None => (None, None),
            Some(s) => {
                let copy = |e: std::io::Error| CallgrindError::NoOutput {
                    why: format!("cannot copy the library for valgrind: {e}"),
                };
                let dir = tempfile::Builder::new()
                    .prefix("cyclescope-count-lib-")
                    .tempdir()
                    .map_err(copy)?;
                let path = s.copy_into(dir.path()).map_err(copy)?;
                (Some(dir), Some(path))
            }
        };
        let scratch = tempfile::Builder::new()
            .prefix("cyclescope-count-")
            .tempdir()
            .map_err(|e| CallgrindError::NoOutput {
                why: format!("cannot make a scratch folder: {e}"),
            })?;
        let out_file = scratch.path().join(OUT_FILE);
        let (loans, worker_copy) = match crate::jail::identity::Identity::for_workers() {
            None => (Vec::new(), None),
            Some(id) => lend(id, worker_exe, &scratch, copy_dir.as_ref()).map_err(|e| {
                CallgrindError::NoOutput {
                    why: format!("cannot prepare valgrind's folders for the worker's user: {e}"),
                }
            })?,
        };
        Ok(Self {
            _loans: loans,
            worker_copy,
            _scratch: scratch,
            out_file,
            valgrind,
            _copy_dir: copy_dir,
            library_copy,
        })
    }

    /// The program valgrind runs: the worker's copy where there is one.
    pub(crate) fn worker<'a>(&'a self, exe: &'a std::path::Path) -> &'a std::path::Path {
        self.worker_copy.as_deref().unwrap_or(exe)
    }

    /// What valgrind reads (the library's private copy) and writes (its scratch folder).
    pub(crate) fn files(&self) -> crate::worker::confine::JobFiles {
        let folder = |p: &std::path::Path| p.parent().map(std::path::Path::to_path_buf);
        crate::worker::confine::JobFiles {
            readable: self.library_copy.iter().filter_map(|c| folder(c)).collect(),
            writable: folder(&self.out_file).into_iter().collect(),
        }
    }

    /// valgrind's arguments before the worker's.
    pub(crate) fn launcher_args(&self) -> Vec<String> {
        callgrind::valgrind_args(&self.out_file)
    }

    /// The worker's limits under valgrind: its output file must fit.
    pub(crate) fn limits(limits: Limits) -> Limits {
        Limits {
            file_size_bytes: Some(callgrind::OUTPUT_FILE_LIMIT_BYTES),
            ..limits
        }
    }

    /// Reads the count into `run` (a complete process), or fails it with the reason.
    pub(crate) fn finish(
        &self,
        spec: &TrialSpec,
        worker_exe: &std::path::Path,
        run: &mut ProcessRun,
        sandbox: Option<SandboxInForce>,
    ) {
        // valgrind's reports name the worker and the library by absolute path: the evidence
        // names them as the record does elsewhere.
        let shown = crate::catalog::display_path(&spec.library);
        run.record.stderr = run
            .record
            .stderr
            .replace(
                &worker_exe.display().to_string(),
                crate::worker::TRIAL_WORKER_NAME,
            )
            .replace(
                &self.worker(worker_exe).display().to_string(),
                crate::worker::TRIAL_WORKER_NAME,
            )
            .replace(&spec.library.display().to_string(), &shown);
        if let Some(copy) = &self.library_copy {
            run.record.stderr = run
                .record
                .stderr
                .replace(&copy.display().to_string(), &shown);
        }
        if let Some(e) = callgrind::unhandled_instruction(&run.record.stderr) {
            run.record.status = crate::vocabulary::ProcessStatus::Partial;
            run.outcome = JobOutcome::Failed(JobFailure::new(FailureKind::Crash, e.to_string()));
            return;
        }
        if run.outcome != JobOutcome::Complete {
            return;
        }
        match self.read(spec, run.record.wall_s, sandbox) {
            Ok(count) => apply(run, count),
            Err(e) => {
                // A library that steered callgrind tampered with the measurement.
                let kind = match e {
                    CallgrindError::Steered { .. } | CallgrindError::Dumped { .. } => {
                        FailureKind::Tampered
                    }
                    _ => FailureKind::Loadfail,
                };
                run.record.status = crate::vocabulary::ProcessStatus::Partial;
                run.outcome = JobOutcome::Failed(JobFailure::new(kind, e.to_string()))
            }
        }
    }

    fn read(
        &self,
        spec: &TrialSpec,
        wall_s: f64,
        sandbox: Option<SandboxInForce>,
    ) -> Result<InstructionCount, CallgrindError> {
        let text = std::fs::read_to_string(&self.out_file)
            .map_err(|e| CallgrindError::NoOutput { why: e.to_string() })?;
        // Before any figure is read: all of the run collected, in one part, in one file.
        if let Some(dir) = self.out_file.parent() {
            collection::check_files(dir, &[OUT_FILE])?;
        }
        collection::check_whole(&text)?;
        let c = callgrind::parse(&text)?;
        let made = spec.iterations * u64::from(spec.trials);
        if c.calls != made {
            return Err(CallgrindError::CallsMismatch {
                seen: c.calls,
                made,
            });
        }
        Ok(InstructionCount {
            tool: callgrind::tool_of(&text),
            calls: c.calls,
            instructions: c.ir,
            l1_misses: c.l1_misses,
            ll_misses: c.ll_misses,
            estimated_cycles: c.estimated_cycles(),
            estimate_formula: ESTIMATE_FORMULA.to_string(),
            sandbox_relaxed: relaxed(sandbox),
            wall_s,
        })
    }
}

/// What the sandbox gave up under valgrind, the worker's report included.
pub(crate) fn relaxed(sandbox: Option<SandboxInForce>) -> Vec<String> {
    let mut out: Vec<String> = RELAXED.iter().map(|s| s.to_string()).collect();
    let s = sandbox.unwrap_or(SandboxInForce {
        landlock: false,
        seccomp: false,
    });
    if !s.landlock {
        out.push(LANDLOCK_RELAXED.to_string());
    }
    if !s.seccomp {
        out.push(SECCOMP_RELAXED.to_string());
    }
    out
}

/// The process's figures become the count's: one trial of the counted calls, whose `cycles`
/// are the candidate's instructions.
fn apply(run: &mut ProcessRun, count: InstructionCount) {
    let calls_per_trial = count.calls / run.record.trials.len().max(1) as u64;
    let per_trial = count.instructions / run.record.trials.len().max(1) as u64;
    for t in &mut run.record.trials {
        t.measurements = calls_per_trial;
        t.cycles = per_trial;
    }
    // Waiting for the CPU slows valgrind down, never changes the count: no trial of a count
    // is disturbed, and no clock applies to it.
    run.waited_ns.iter_mut().for_each(|w| *w = None);
    run.clock.iter_mut().for_each(|c| *c = None);
    if let Some(info) = &mut run.info {
        *info = WorkerInfo {
            cycle_source: CycleSource::CallgrindInstructions,
            core_cycles: false,
            perf_unavailable: None,
            per_call_source: None,
            timer_overhead_ticks: 0.0,
            ..info.clone()
        };
    }
    run.instructions = Some(count);
}

/// Lends valgrind's scratch folder and the library copy's folder to `id`, with a copy of the
/// trial worker `exe` (mode 0500) beside the library (or in the scratch folder): the worker's
/// loans, and the copy's path.
pub(crate) fn lend(
    id: crate::jail::identity::Identity,
    exe: &std::path::Path,
    scratch: &tempfile::TempDir,
    copy_dir: Option<&tempfile::TempDir>,
) -> std::io::Result<(Vec<crate::jail::identity::Loan>, Option<PathBuf>)> {
    use std::os::unix::fs::PermissionsExt;
    let home = copy_dir.unwrap_or(scratch).path();
    let copy = home.join(exe.file_name().unwrap_or("cyclescope-worker".as_ref()));
    std::fs::copy(exe, &copy)?;
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o500))?;
    let mut loans = vec![id.lend(scratch.path())?];
    if let Some(dir) = copy_dir {
        loans.push(id.lend(dir.path())?);
    }
    Ok((loans, Some(copy)))
}
