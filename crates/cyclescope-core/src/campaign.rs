//! The campaign: one run from request to records, on top of everything else in the core and
//! used by both frontends. It reads as its phases: the host gate of every measurement CPU,
//! the CPU locks, open (or resume) the run directory, then one lane per measurement CPU, side
//! by side: plan (per instance the KAT gate, then one calibration per job), then per job
//! measure → write, cheapest first, each record written atomically the moment it is done.
//! Lanes send their events to the campaign's thread, the only one that talks to the frontend
//! and appends the journal; `cancel` stops every lane at its next safe point. Worker processes
//! are reached only through a `TrialRunner`, one per lane. The campaign keeps its own threads
//! off every measurement CPU while it runs. It never draws anything.

pub mod ab_result;
mod assign;
mod events;
mod host_gate;
mod interleave;
mod kat_gate;
mod known;
mod lanes;
mod measure;
mod open;
mod plan;
mod request;
mod runner;
pub mod slurm;
mod write;

#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

pub use assign::Shard;
pub use interleave::{InterleaveOutcome, LiveComparison, check_pair, interleave};
pub use request::{RequestError, RequestOverrides, RunRequest};

use crate::catalog::Instance;
use crate::record::{Campaign, RunDir, RunDirError};
use crate::vocabulary::EngineEvent;
use events::Events;
use host_gate::HostGate;
use lanes::LaneEvents;
use measure::{JobMeasurement, Measured};
use plan::Job;
use runner::{TrialRunner, WorkerRunner};

#[derive(Debug, thiserror::Error)]
pub enum CampaignError {
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
    #[error(transparent)]
    CpuLock(#[from] crate::cpu::lock::CpuLockError),
    #[error(
        "stopped: {needed} needed in {run_dir} for {what}, but only {free} are free on its disk; \
         the records written so far are intact: free some space and `cyclescope run --resume {resume}`",
        needed = crate::format::bytes(*.needed), free = crate::format::bytes(*.free), run_dir = .run_dir.display(),
        resume = crate::sanitize::shell_path(.run_dir)
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
        .run_dir.display(), crate::sanitize::shell_path(.run_dir)
    )]
    RecordWrite {
        run_dir: PathBuf,
        what: String,
        source: RunDirError,
    },
    #[error(transparent)]
    TrialWorker(#[from] crate::catalog::bundled::BundledError),
    #[error(transparent)]
    NoHardwareInstructions(#[from] crate::counter::NoHardwareInstructions),
    #[error("an interleaved comparison: {0}")]
    NotAPair(String),
    /// A setting from the environment that cannot be used (named with its value).
    #[error("{0}")]
    Setting(String),
    #[error("cannot write the journal of {path}: {source}")]
    Journal {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// How a run ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunOutcome {
    pub cancelled: bool,
    /// Jobs not measured because their instance's KAT did not pass.
    pub kat_blocked: usize,
    pub finished: usize,
    pub failed: usize,
    /// Jobs a resumed run found complete already.
    pub skipped: usize,
}

impl RunOutcome {
    fn add(&mut self, lane: &RunOutcome) {
        self.kat_blocked += lane.kat_blocked;
        self.finished += lane.finished;
        self.failed += lane.failed;
        self.skipped += lane.skipped;
    }
}

/// Runs the request to its end, trials in worker processes on each measurement CPU; returns
/// when every lane has finished.
pub fn run(
    req: &RunRequest,
    emit: &mut dyn FnMut(EngineEvent),
    cancel: &Arc<AtomicBool>,
) -> Result<RunOutcome, CampaignError> {
    // Lane threads are spawned from here and inherit the mask.
    let off = crate::cpu::OffCpu::enter_all(&req.cpus);
    let mut runners: Vec<WorkerRunner> = req
        .cpus
        .iter()
        .map(|&cpu| WorkerRunner::new(req, cpu, cancel))
        .collect::<Result<_, _>>()?;
    let lanes = runners
        .iter_mut()
        .map(|r| r as &mut dyn TrialRunner)
        .collect();
    run_with(req, lanes, !off.is_off(), emit, cancel)
}

/// The phases, with any runners (one per measurement CPU, in `req.cpus` order).
/// `engine_shared_cpu`: the calling thread could not leave the measurement CPUs.
pub(crate) fn run_with(
    req: &RunRequest,
    mut runners: Vec<&mut dyn TrialRunner>,
    engine_shared_cpu: bool,
    emit: &mut dyn FnMut(EngineEvent),
    cancel: &AtomicBool,
) -> Result<RunOutcome, CampaignError> {
    let started = Instant::now();
    let mut opened = Opened::open(req, &mut runners, engine_shared_cpu, emit, cancel)?;
    let outcome = lanes::run_lanes(req, &mut opened, runners, cancel, &|run: &mut Run<'_>| {
        run.run_lane()
    });
    opened.finish(outcome, cancel, started)
}

/// A run past its opening phases: the CPUs locked, every measurement CPU's host gate passed,
/// the run directory's lock and journal held, campaign.json written, the frontends told.
struct Opened<'e> {
    /// Every library of the run, read once and sealed: what all its workers load and what
    /// its records' hashes are of (`plugin::sealed`).
    _libraries: crate::plugin::sealed::RunLibraries,
    _cpu_locks: Vec<crate::cpu::lock::CpuLock>,
    hosts: Vec<HostGate>,
    dir: RunDir,
    events: Events<'e>,
    campaign: Campaign,
    assignment: Vec<Vec<Instance>>,
}

impl<'e> Opened<'e> {
    /// The phases every run begins with, in the order that keeps a refusal harmless.
    fn open(
        req: &'e RunRequest,
        runners: &mut [&mut dyn TrialRunner],
        engine_shared_cpu: bool,
        emit: &'e mut dyn FnMut(EngineEvent),
        cancel: &AtomicBool,
    ) -> Result<Self, CampaignError> {
        // The libraries before anything reads them: one set of bytes for the whole run.
        let libraries = crate::plugin::sealed::RunLibraries::seal(
            req.instances.iter().map(|i| i.library.as_path()),
        );
        // The CPUs first, held until the run ends: a second process on one of them is refused
        // by name (or queues, when told to wait) before its host check's clock probe could
        // disturb the trials running there.
        let cpu_locks = lock_cpus(req, emit, cancel)?;
        // No job could count hardware instructions where they do not open: said before any.
        open::refuse_no_hardware_instructions(req)?;
        // Then the host gate: a refused run leaves no run folder behind.
        // Unchanged inputs reuse the last clock probe and tool versions (kept beside the
        // tuning journal, so a run without one measures everything).
        let cache = match &req.journal {
            crate::journal::JournalTarget::At(path) => {
                Some(crate::host::HostCache::beside_journal(path).map_err(CampaignError::Setting)?)
            }
            _ => None,
        };
        let hosts =
            HostGate::check_all(&req.host_root, &req.cpus, engine_shared_cpu, cache.as_ref())?;
        open::refuse_unfixed(req, &hosts)?;
        for (runner, host) in runners.iter_mut().zip(&hosts) {
            runner.use_reference_clock(host.reference_clock_hz());
        }
        let (dir, journal) = open::lock_and_journal(req)?;
        let mut events = Events {
            journal,
            index: crate::journal::JournalWriter::new(req.journal.clone(), req.origin),
            emit,
            run_dir: &req.run_dir,
            said: Default::default(),
        };
        let assignment = assign::lane_instances(&req.instances, req.cpus.len());
        let campaign = open::open_or_resume(req, &dir, &hosts, &assignment)?;
        open::announce(req, &hosts, &mut events);
        // Whether each trial's clock can be checked: said once (campaign.json stores it).
        if let Some(message) = hosts[0].clock_verification().notice() {
            events.send(EngineEvent::Warning { message });
        }
        Ok(Self {
            _libraries: libraries,
            _cpu_locks: cpu_locks,
            hosts,
            dir,
            events,
            campaign,
            assignment,
        })
    }

    /// Ends the run: campaign.json says how, and the frontends hear it. A lane's error is the
    /// run's (campaign.json then stays `running`, as when the old single lane failed to write).
    fn finish(
        mut self,
        lanes: Result<RunOutcome, CampaignError>,
        cancel: &AtomicBool,
        started: Instant,
    ) -> Result<RunOutcome, CampaignError> {
        let mut outcome = lanes?;
        outcome.cancelled = cancel.load(Ordering::Relaxed);
        open::close(
            &self.dir,
            &mut self.campaign,
            &self.hosts[0],
            outcome.cancelled,
        )?;
        self.events.send(EngineEvent::RunFinished {
            cancelled: outcome.cancelled,
            wall: started.elapsed(),
            finished: outcome.finished,
            failed: outcome.failed,
        });
        Ok(outcome)
    }
}

/// Every CPU of the run locked for this process, waiting for busy ones as long as
/// `CYCLESCOPE_LOCK_WAIT` allows (the frontend told who holds each, and when each came free).
fn lock_cpus(
    req: &RunRequest,
    emit: &mut dyn FnMut(EngineEvent),
    cancel: &AtomicBool,
) -> Result<Vec<crate::cpu::lock::CpuLock>, CampaignError> {
    use crate::cpu::lock;
    let wait = lock::lock_wait()?;
    let mut told = |heard: lock::LockWait<'_>| match heard {
        lock::LockWait::Busy(lock::CpuLockError::Busy { cpu, holder, .. }) => {
            emit(EngineEvent::CpuWaiting {
                cpu: *cpu,
                holder: holder.clone(),
                limit: wait,
            })
        }
        lock::LockWait::Busy(other) => emit(EngineEvent::Warning {
            message: other.to_string(),
        }),
        lock::LockWait::Free { cpu, waited } => emit(EngineEvent::CpuFree { cpu, waited }),
    };
    // The machine-wide folder first, then the runs folder: every cyclescope takes them in that
    // order, so two runs never hold one folder's lock each while waiting for the other's.
    // A shard's runs folder is the campaign's, shared by the machines its slices run on: a
    // lock there would make CPU N of every machine one lock. Shards lock machine-wide only.
    let dirs = match req.shard {
        Some(_) => vec![req.cpu_lock_dir.clone()],
        None => lock::lock_dirs(&req.cpu_lock_dir, &req.run_dir),
    };
    let mut held = Vec::new();
    for dir in dirs {
        held.extend(lock::lock_all(
            &dir,
            &req.cpus,
            &req.run_dir,
            wait,
            cancel,
            &mut told,
        )?);
    }
    Ok(held)
}

/// What every phase of one lane works with: its CPU's host gate and runner, its instances.
struct Run<'a> {
    req: &'a RunRequest,
    dir: &'a RunDir,
    host: &'a HostGate,
    instances: Vec<Instance>,
    runner: &'a mut dyn TrialRunner,
    cancel: &'a AtomicBool,
    /// Set when another lane stopped with an error: this one stops at its next job.
    halt: &'a AtomicBool,
    events: LaneEvents,
    outcome: RunOutcome,
}

impl Run<'_> {
    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed) || self.halt.load(Ordering::Relaxed)
    }

    /// One job: measure, write its record, tell the frontends. False when the run was
    /// cancelled while it measured (nothing is written for it then).
    fn measure_and_write(&mut self, j: &Job) -> Result<bool, CampaignError> {
        self.events.send(EngineEvent::JobStarted {
            job: j.key.clone(),
            cpu: Some(self.host.cpu()),
        });
        let events = &mut self.events;
        let clock = self.host.clock_rule();
        match measure::measure_job(self.runner, self.req, clock, j, &mut |ev| events.send(ev)) {
            Measured::Done(m) => self.write_measured(j, *m).map(|()| true),
            Measured::Cancelled => Ok(false),
        }
    }

    /// Writes the record of a measured job and tells the frontends how it ended.
    fn write_measured(&mut self, j: &Job, m: JobMeasurement) -> Result<(), CampaignError> {
        let stderr_tail = m
            .processes
            .last()
            .map(|p| p.record.stderr.clone())
            .unwrap_or_default();
        // What its workers lacked, each said once a run (`Events`), and kept in the record.
        let gaps = m.protections();
        for gap in gaps.iter().flat_map(|p| p.gaps()) {
            self.events.send(EngineEvent::Warning {
                message: format!("{}{gap}", events::PROTECTION_GAP),
            });
        }
        let (record, summary, snapshot, failure) =
            write::job_record(self.dir, self.req, j, self.host, m);
        let record = record.map_err(|source| CampaignError::RecordWrite {
            run_dir: self.req.run_dir.clone(),
            what: format!("the record of {}", j.key),
            source,
        })?;
        let ev = match failure {
            None => {
                self.outcome.finished += 1;
                EngineEvent::JobFinished {
                    job: j.key.clone(),
                    summary: Box::new(summary),
                    record,
                    snapshot: Some(snapshot),
                }
            }
            Some(reason) => {
                self.outcome.failed += 1;
                EngineEvent::JobFailed {
                    job: j.key.clone(),
                    reason,
                    stderr_tail,
                    record: Some(record),
                }
            }
        };
        self.events.send(ev);
        Ok(())
    }
}
