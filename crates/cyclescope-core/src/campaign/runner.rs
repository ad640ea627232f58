//! The seam between the campaign and the processes it starts: a `TrialRunner` runs one KAT job
//! or one trial process and reports what came back. `WorkerRunner` is the real one (a fresh
//! worker process each time, pinned to the measurement CPU); the campaign's unit tests drive
//! the same retry, adaptive-stop, disturbance and resume logic with a scripted one. Runners
//! never decide anything: they only run and report.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::catalog::Instance;
use crate::kat::{KatEvent, KatOptions, KatStatus, run_kat};
use crate::measure::job::{ProcessRun, WorkerSetup, run_process};
use crate::measure::stats::Trial;
use crate::measure::trial::TrialSpec;

/// A KAT job's verdict as the gate needs it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KatRun {
    pub(crate) status: KatStatus,
    pub(crate) detail: String,
    /// Whether the job got as far as writing its log.
    pub(crate) logged: bool,
}

pub(crate) trait TrialRunner {
    /// Runs the KAT job of `inst` (its log goes where `opts` says); `progress` sees its events.
    fn kat(
        &mut self,
        inst: &Instance,
        opts: &KatOptions,
        progress: &mut dyn FnMut(&KatEvent),
    ) -> KatRun;

    /// Runs one worker process for `spec`; `on_samples` sees each batch of per-call ticks and
    /// each finished trial as they arrive.
    fn trial(
        &mut self,
        inst: &Instance,
        spec: &TrialSpec,
        timeout: Duration,
        on_samples: &mut dyn FnMut(&[u64], Option<&Trial>),
    ) -> ProcessRun;
}

/// The real runner: worker processes.
pub(crate) struct WorkerRunner {
    setup: WorkerSetup,
}

impl WorkerRunner {
    pub(crate) fn new(req: &super::RunRequest, cancel: &Arc<AtomicBool>) -> Self {
        Self {
            setup: WorkerSetup {
                exe: crate::worker::measurement_exe(&req.worker_exe),
                cpu: req.cpu,
                limits: req.limits,
                cancel: cancel.clone(),
            },
        }
    }
}

impl TrialRunner for WorkerRunner {
    fn kat(
        &mut self,
        inst: &Instance,
        opts: &KatOptions,
        progress: &mut dyn FnMut(&KatEvent),
    ) -> KatRun {
        match run_kat(inst, opts, progress) {
            Ok(r) => KatRun {
                status: r.status,
                detail: r.detail,
                logged: true,
            },
            Err(e) => KatRun {
                status: KatStatus::Loadfail,
                detail: e.to_string(),
                logged: false,
            },
        }
    }

    fn trial(
        &mut self,
        inst: &Instance,
        spec: &TrialSpec,
        timeout: Duration,
        on_samples: &mut dyn FnMut(&[u64], Option<&Trial>),
    ) -> ProcessRun {
        run_process(&self.setup, inst, spec, timeout, on_samples)
    }
}
