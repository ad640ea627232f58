//! The engine: one run from request to records, used by both frontends. Order of work: lock
//! the run directory, check the host (refusing an unfixed one unless allowed), prove every
//! instance with its KAT, calibrate and plan every job, then measure the jobs cheapest first,
//! writing each record atomically the moment it is done. It emits typed events at a bounded
//! rate and stops at the next safe point when `cancel` is set. A resumed run skips complete
//! records and refuses a host whose FIXED_ENV changed. It never draws anything.

mod gate;
mod measure_job;
mod write;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::event::{EngineEvent, JobKey};
use super::job::{self, WorkerSetup};
use super::plan::{Planning, TrialPlan, plan};
use crate::catalog::Instance;
use crate::record::journal::{JournalEvent, JournalWriter};
use crate::record::run_dir::{CampaignRequest, read_campaign};
use crate::record::{Campaign, RunDir, RunDirError};
use crate::worker::Limits;

pub(crate) use gate::{HostGate, KatGate};
pub(crate) use measure_job::JobMeasurement;

use measure_job::{Measured, measure_job};

/// Everything a run needs.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub instances: Vec<Instance>,
    pub(crate) lengths: Vec<u64>,
    pub planning: Planning,
    pub(crate) cpu: usize,
    pub run_dir: PathBuf,
    pub allow_unfixed_host: bool,
    pub allow_kat_fail: bool,
    pub tui_attached: bool,
    /// KATs that already passed in this session (the TUI's cache): label → that run's KAT
    /// log, which is copied into this run instead of re-running the job.
    pub kat_passed: BTreeMap<String, PathBuf>,
    pub kat_timeout: Duration,
    pub(crate) worker_exe: PathBuf,
    pub limits: Limits,
    /// Where host checks read sysfs/procfs (tests point it at fixture trees).
    pub host_root: PathBuf,
    /// The adaptive mode instead of the guide's fixed number of trials.
    pub adaptive: Option<super::plan::Adaptive>,
    /// An upper bound on every worker's timeout (the plan's is at least 300 s, the
    /// calibration's 6 h): for tests and impatient operators; the record keeps the plan's.
    pub timeout_cap: Option<Duration>,
}

impl RunRequest {
    fn capped(&self, d: Duration) -> Duration {
        self.timeout_cap.map_or(d, |c| d.min(c))
    }
}

impl RunRequest {
    /// A request with the guide's defaults for everything but what to measure and where.
    pub fn new(instances: Vec<Instance>, lengths: Vec<u64>, cpu: usize, run_dir: PathBuf) -> Self {
        Self {
            instances,
            lengths,
            planning: Planning::new(5, 1.0, 900.0),
            cpu,
            run_dir,
            allow_unfixed_host: false,
            allow_kat_fail: false,
            tui_attached: false,
            kat_passed: BTreeMap::new(),
            kat_timeout: Duration::from_secs(900),
            worker_exe: crate::worker::default_exe(),
            limits: Limits {
                address_space_bytes: Some(8 << 30),
                cpu_seconds: None,
            },
            host_root: PathBuf::from("/"),
            timeout_cap: None,
            adaptive: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    RunDir(#[from] RunDirError),
    #[error("refusing to measure on an unfixed host (use --allow-unfixed-host for tests): {}", .0.join("; "))]
    UnfixedHost(Vec<String>),
    #[error("refusing to resume {run_dir}: the host changed since its first record ({})", .changes.join("; "))]
    HostChanged {
        run_dir: PathBuf,
        changes: Vec<String>,
    },
    #[error(transparent)]
    Host(#[from] crate::host::HostError),
    #[error(
        "stopped: {needed} needed in {run_dir} for {what}, but only {free} are free on its disk; \
         the records written so far are intact: free some space and `cyclescope run --resume {run_dir}`",
        needed = crate::format::bytes(*.needed), free = crate::format::bytes(*.free), run_dir = .run_dir.display()
    )]
    DiskFull {
        run_dir: PathBuf,
        what: String,
        needed: u64,
        free: u64,
    },
    #[error(
        "stopped: cannot write {what} in {}: {source}; the records written so far are intact: \
         fix the cause and `cyclescope run --resume {}`",
        .run_dir.display(), .run_dir.display()
    )]
    RecordWrite {
        run_dir: PathBuf,
        what: String,
        source: RunDirError,
    },
    #[error("cannot write the journal of {path}: {source}")]
    Journal {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutcome {
    pub cancelled: bool,
    /// Jobs not measured because their instance's KAT did not pass.
    pub kat_blocked: usize,
    pub finished: usize,
    pub failed: usize,
    pub skipped: usize,
}

/// One planned job.
struct Job {
    inst: Instance,
    key: JobKey,
    plan: TrialPlan,
    t1: f64,
}

/// Runs the request to its end on the calling thread.
pub fn run(
    req: &RunRequest,
    emit: &mut dyn FnMut(EngineEvent),
    cancel: &Arc<AtomicBool>,
) -> Result<RunOutcome, EngineError> {
    let started = Instant::now();
    // The host gate comes first: a refused run leaves no folder behind.
    let host = HostGate::check(&req.host_root, req.cpu)?;
    let problems = host.problems();
    if !problems.is_empty() && !req.allow_unfixed_host {
        return Err(EngineError::UnfixedHost(problems));
    }
    let dir = RunDir::open_for_writing(&req.run_dir)?;
    let journal_path = req.run_dir.join(crate::record::journal::FILE_NAME);
    let mut journal = JournalWriter::open(&req.run_dir).map_err(|source| EngineError::Journal {
        path: journal_path,
        source,
    })?;
    let mut send = |ev: EngineEvent| {
        if let Some(j) = JournalEvent::from_event(&ev, &req.run_dir) {
            // A journal that cannot be appended (disk full) must not stop the measurement;
            // records are what counts, and they are written atomically.
            let _ = journal.append(j);
        }
        emit(ev);
    };

    let resumed = read_campaign(&req.run_dir).ok();
    if resumed.is_some() {
        let changes = host.changed_since_first_record(&req.run_dir);
        if !changes.is_empty() {
            return Err(EngineError::HostChanged {
                run_dir: req.run_dir.clone(),
                changes,
            });
        }
    }
    let mut campaign = resumed.unwrap_or_else(|| new_campaign(req, &host));
    campaign
        .host_checks
        .push(crate::record::run_dir::HostCheckEntry {
            phase: "measure".into(),
            cpu: req.cpu,
            utc: crate::record::utc_now(),
            problems: problems.clone(),
        });
    campaign.host_problems = problems.clone();
    campaign.cyclescope.state = "running".into();
    dir.write_campaign(&campaign)?;

    send(EngineEvent::RunStarted {
        run_dir: req.run_dir.clone(),
        labels: req.instances.iter().map(|i| i.label.clone()).collect(),
        lengths: req.lengths.clone(),
        cpu: req.cpu,
    });
    if !problems.is_empty() {
        send(EngineEvent::HostProblems {
            problems: problems.clone(),
        });
    }

    let setup = WorkerSetup {
        exe: crate::worker::measurement_exe(&req.worker_exe),
        cpu: req.cpu,
        limits: req.limits,
        cancel: cancel.clone(),
        fixed_clock_hz: host.fixed_clock_hz(),
    };
    let mut outcome = RunOutcome {
        cancelled: false,
        kat_blocked: 0,
        finished: 0,
        failed: 0,
        skipped: 0,
    };

    // KAT gate, then calibration of every job still to do.
    let mut jobs = Vec::new();
    let mut kat_results: BTreeMap<String, gate::KatResult> = BTreeMap::new();
    for inst in &req.instances {
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        let todo: Vec<u64> = req
            .lengths
            .iter()
            .copied()
            .filter(|&len| !write::is_complete(&req.run_dir, inst, len))
            .collect();
        outcome.skipped += req.lengths.len() - todo.len();
        if todo.is_empty() {
            continue;
        }
        let kat = KatGate::run(inst, req, &dir, &mut send)?;
        let timed = kat.status == "PASS" || req.allow_kat_fail;
        kat_results.insert(inst.label.clone(), kat.clone());
        if !timed {
            outcome.kat_blocked += todo.len();
            send(EngineEvent::Warning {
                message: format!(
                    "{} not measured: KAT {} (consent to time it anyway: --allow-kat-fail, or A in the workbench)",
                    inst.label, kat.status
                ),
            });
            continue;
        }
        for len in todo {
            if cancel.load(Ordering::Relaxed) {
                break;
            }
            let key = JobKey {
                candidate: inst.candidate.clone(),
                label: inst.label.clone(),
                input_bytes: len,
            };
            let (t1, setup_s, calibration) =
                job::calibrate(&setup, inst, len, req.capped(Duration::from_secs(6 * 3600)));
            if let Some(reason) = calibration.failure.clone() {
                if reason == "cancelled" {
                    break;
                }
                outcome.failed += 1;
                let stderr_tail = calibration.record.stderr.clone();
                let record = write::failed_record(
                    &dir,
                    req,
                    inst,
                    len,
                    &kat,
                    &host,
                    None,
                    vec![calibration],
                    &reason,
                )
                .map_err(|source| EngineError::RecordWrite {
                    run_dir: req.run_dir.clone(),
                    what: format!("the record of {key}"),
                    source,
                })?;
                send(EngineEvent::JobFailed {
                    job: key,
                    reason,
                    stderr_tail,
                    record: Some(record),
                });
                continue;
            }
            let p = plan(t1, setup_s, &req.planning);
            send(EngineEvent::JobPlanned {
                job: key.clone(),
                plan: p,
                t1_s: t1,
            });
            jobs.push(Job {
                inst: inst.clone(),
                key,
                plan: p,
                t1,
            });
        }
    }
    jobs.sort_by(|a, b| {
        a.plan
            .estimated_s
            .total_cmp(&b.plan.estimated_s)
            .then(a.key.cmp(&b.key))
    });

    for j in &jobs {
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        let kat = kat_results
            .get(&j.inst.label)
            .cloned()
            .unwrap_or_else(gate::KatResult::unknown);
        match measure_job(req, &setup, j, &mut send) {
            Measured::Done(m) => {
                let failure = m.failure.clone();
                let stderr_tail = m
                    .processes
                    .last()
                    .map(|p| p.record.stderr.clone())
                    .unwrap_or_default();
                // Adaptive jobs ran as many single-trial processes as they needed: the record's
                // plan says so, which keeps it valid by the harness's rules.
                let mut plan = j.plan;
                if req.adaptive.is_some() {
                    plan.trials = m
                        .processes
                        .iter()
                        .map(|p| p.record.trials.len() as u32)
                        .sum();
                    plan.separate_processes = true;
                }
                let (record, summary, snapshot) =
                    write::job_record(&dir, req, &j.inst, j.key.input_bytes, &kat, &host, &plan, m);
                let record = record.map_err(|source| EngineError::RecordWrite {
                    run_dir: req.run_dir.clone(),
                    what: format!("the record of {}", j.key),
                    source,
                })?;
                match failure {
                    None => {
                        outcome.finished += 1;
                        send(EngineEvent::JobFinished {
                            job: j.key.clone(),
                            summary: Box::new(summary),
                            record,
                            snapshot: Some(snapshot),
                        });
                    }
                    Some(reason) => {
                        outcome.failed += 1;
                        send(EngineEvent::JobFailed {
                            job: j.key.clone(),
                            reason,
                            stderr_tail,
                            record: Some(record),
                        });
                    }
                }
            }
            Measured::Cancelled => break,
        }
    }
    outcome.cancelled = cancel.load(Ordering::Relaxed);
    campaign.ended_utc = Some(crate::record::utc_now());
    campaign.environment_at_end = Some(host.environment());
    campaign.cyclescope.state = if outcome.cancelled {
        "cancelled"
    } else {
        "finished"
    }
    .into();
    dir.write_campaign(&campaign)?;
    send(EngineEvent::RunFinished {
        cancelled: outcome.cancelled,
        wall: started.elapsed(),
        finished: outcome.finished,
        failed: outcome.failed,
    });
    Ok(outcome)
}

fn new_campaign(req: &RunRequest, host: &HostGate) -> Campaign {
    let env = host.environment();
    Campaign {
        system_id: env
            .get("hostname")
            .and_then(|v| v.as_str())
            .unwrap_or("unknown")
            .to_string(),
        started_utc: crate::record::utc_now(),
        environment_at_start: env,
        host_checks: Vec::new(),
        planning: req.planning,
        ended_utc: None,
        environment_at_end: None,
        host_problems: Vec::new(),
        shards: 1,
        cyclescope: CampaignRequest {
            // Paths below the working folder are stored relative to it (no absolute paths in
            // evidence; `--resume` runs from the same folder).
            instances: req
                .instances
                .iter()
                .map(|i| Instance {
                    library: PathBuf::from(crate::catalog::display_path(&i.library)),
                    kat_manifest: i
                        .kat_manifest
                        .as_deref()
                        .map(|m| PathBuf::from(crate::catalog::display_path(m))),
                    ..i.clone()
                })
                .collect(),
            lengths: req.lengths.clone(),
            cpu: req.cpu,
            allow_unfixed_host: req.allow_unfixed_host,
            allow_kat_fail: req.allow_kat_fail,
            tui_attached: req.tui_attached,
            adaptive: req.adaptive,
            state: "running".into(),
        },
    }
}
