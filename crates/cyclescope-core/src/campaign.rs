//! The campaign: one run from request to records, on top of everything else in the core and
//! used by both frontends. It reads as its phases: open (or resume) the run directory, the host
//! gate, plan (per instance the KAT gate, then one calibration per job), then per job
//! measure → write, cheapest first, each record written atomically the moment it is done.
//! Events go to the frontend and the journal at a bounded rate; `cancel` stops the run at the
//! next safe point. Worker processes are reached only through a `TrialRunner`. The campaign
//! keeps its own thread off the measurement CPU while it runs. It never draws anything.

mod host_gate;
mod interleave;
mod kat_gate;
mod measure;
mod open;
mod plan;
mod request;
mod runner;
mod write;

#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

pub use interleave::{InterleaveOutcome, LiveComparison, check_pair, interleave};
pub use request::{RequestError, RequestOverrides, RunRequest};

use crate::record::journal::JournalWriter;
use crate::record::{Campaign, RunDir, RunDirError};
use crate::vocabulary::EngineEvent;
use host_gate::HostGate;
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
    #[error("an interleaved comparison: {0}")]
    NotAPair(String),
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

/// Runs the request to its end on the calling thread, trials in worker processes.
pub fn run(
    req: &RunRequest,
    emit: &mut dyn FnMut(EngineEvent),
    cancel: &Arc<AtomicBool>,
) -> Result<RunOutcome, CampaignError> {
    let _off = crate::cpu::OffCpu::enter(req.cpu);
    let mut runner = WorkerRunner::new(req, cancel);
    run_with(req, &mut runner, emit, cancel)
}

/// The phases, with any runner.
pub(crate) fn run_with(
    req: &RunRequest,
    runner: &mut dyn TrialRunner,
    emit: &mut dyn FnMut(EngineEvent),
    cancel: &AtomicBool,
) -> Result<RunOutcome, CampaignError> {
    let started = Instant::now();
    let (mut run, mut campaign) = Run::start(req, runner, emit, cancel)?;
    let jobs = run.plan()?;
    for job in &jobs {
        if run.cancelled() {
            break;
        }
        if !run.measure_and_write(job)? {
            break;
        }
    }
    run.finish(&mut campaign, started)
}

/// Sends events to the frontend and appends the journal's form of them.
struct Events<'a> {
    journal: JournalWriter,
    emit: &'a mut dyn FnMut(EngineEvent),
    run_dir: &'a std::path::Path,
}

impl Events<'_> {
    fn send(&mut self, ev: EngineEvent) {
        if let Some(j) = crate::record::journal::JournalEvent::from_event(&ev, self.run_dir) {
            // A journal that cannot be appended (disk full) must not stop the measurement;
            // records are what counts, and they are written atomically.
            let _ = self.journal.append(j);
        }
        (self.emit)(ev);
    }
}

/// What every phase of one run works with.
struct Run<'a> {
    req: &'a RunRequest,
    dir: RunDir,
    host: HostGate,
    runner: &'a mut dyn TrialRunner,
    cancel: &'a AtomicBool,
    events: Events<'a>,
    outcome: RunOutcome,
}

impl<'a> Run<'a> {
    /// The phases every run begins with: the host gate (a refused run leaves no folder
    /// behind), the run directory's lock and journal, `campaign.json`, the announcement.
    fn start(
        req: &'a RunRequest,
        runner: &'a mut dyn TrialRunner,
        emit: &'a mut dyn FnMut(EngineEvent),
        cancel: &'a AtomicBool,
    ) -> Result<(Self, Campaign), CampaignError> {
        let host = HostGate::check(&req.host_root, req.cpu)?;
        open::refuse_unfixed(req, &host)?;
        runner.use_reference_clock(host.reference_clock_hz());
        let (dir, journal) = open::lock_and_journal(req)?;
        let mut events = Events {
            journal,
            emit,
            run_dir: &req.run_dir,
        };
        let campaign = open::open_or_resume(req, &dir, &host)?;
        open::announce(req, &host, &mut events);
        // Whether each trial's clock can be checked: said once (campaign.json stores it).
        if let Some(message) = host.clock_verification().notice() {
            events.send(EngineEvent::Warning { message });
        }
        let run = Run {
            req,
            dir,
            host,
            runner,
            cancel,
            events,
            outcome: RunOutcome::default(),
        };
        Ok((run, campaign))
    }
}

impl Run<'_> {
    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// One job: measure, write its record, tell the frontends. False when the run was
    /// cancelled while it measured (nothing is written for it then).
    fn measure_and_write(&mut self, j: &Job) -> Result<bool, CampaignError> {
        let events = &mut self.events;
        let clock = self.host.clock_rule();
        match measure::measure_job(self.runner, self.req, clock, j, &mut |ev| events.send(ev)) {
            Measured::Done(m) => self.write_measured(j, *m).map(|()| true),
            Measured::Cancelled => Ok(false),
        }
    }

    /// Writes the record of a measured job and tells the frontends how it ended.
    fn write_measured(&mut self, j: &Job, m: JobMeasurement) -> Result<(), CampaignError> {
        let failure = m.failure.clone();
        let stderr_tail = m
            .processes
            .last()
            .map(|p| p.record.stderr.clone())
            .unwrap_or_default();
        let (record, summary, snapshot) = write::job_record(&self.dir, self.req, j, &self.host, m);
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

    /// Ends the run: campaign.json says how, and the frontends hear it.
    fn finish(
        mut self,
        campaign: &mut Campaign,
        started: Instant,
    ) -> Result<RunOutcome, CampaignError> {
        self.outcome.cancelled = self.cancelled();
        open::close(&self.dir, campaign, &self.host, self.outcome.cancelled)?;
        self.events.send(EngineEvent::RunFinished {
            cancelled: self.outcome.cancelled,
            wall: started.elapsed(),
            finished: self.outcome.finished,
            failed: self.outcome.failed,
        });
        Ok(self.outcome)
    }
}
