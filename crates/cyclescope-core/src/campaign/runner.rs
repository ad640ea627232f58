//! The seam between the campaign and the processes it starts: a `TrialRunner` runs one KAT job
//! or one trial process and reports what came back. `WorkerRunner` is the real one (a fresh
//! worker process each time, pinned to the measurement CPU); the campaign's unit tests drive
//! the same retry, adaptive-stop, disturbance and resume logic with a scripted one. Runners
//! never decide anything: they only run and report.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::catalog::Instance;
use crate::kat::run::KatError;
use crate::kat::{KatEvent, KatOptions, KatStatus, run_kat};
use crate::measure::job::{ProcessRun, WorkerSetup, run_process};
use crate::measure::proof::reference;
use crate::measure::stats::Trial;
use crate::measure::trial::TrialSpec;
use crate::plugin::Abi;
use crate::vocabulary::{JobFailure, JobKey};

/// A KAT job's verdict as the gate needs it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KatRun {
    pub(crate) status: KatStatus,
    pub(crate) detail: String,
    /// Whether the job got as far as writing its log.
    pub(crate) logged: bool,
    /// The conformance checks' outcomes (empty when the job did not get to them).
    pub(crate) conformance: Vec<crate::conform::CheckResult>,
    /// Every vector of the `KAT_2_12` file, when it matched its reference (`kat::known`).
    pub(crate) known_answers: Vec<crate::kat::known::KnownAnswer>,
    /// The KAT worker's control group's account of it.
    pub(crate) worker: Option<crate::record::schema::WorkerAccount>,
}

/// `Send`: each lane's runner moves to the lane's thread.
pub(crate) trait TrialRunner: Send {
    /// Runs the KAT job of `inst` (its log goes where `opts` says); `progress` sees its events.
    /// `None` when the run's cancel flag stopped it (no verdict: a resume runs it again).
    fn kat(
        &mut self,
        inst: &Instance,
        opts: &KatOptions,
        progress: &mut dyn FnMut(&KatEvent),
    ) -> Option<KatRun>;

    /// Runs one worker process for `spec`; `on_samples` sees each batch of per-call ticks and
    /// each finished trial as they arrive, `on_wait` the time since the process started,
    /// again and again while it runs.
    fn trial(
        &mut self,
        inst: &Instance,
        spec: &TrialSpec,
        timeout: Duration,
        on_samples: &mut dyn FnMut(&[u64], Option<&Trial>),
        on_wait: &mut dyn FnMut(Duration),
    ) -> ProcessRun;

    /// The digest of the harness's `input_bytes`-byte message, computed in a worker of its
    /// own before any timing, that every trial's last call must reproduce; None when this
    /// runner proves no work (scripted runners), and then no fresh-message probe runs either.
    fn reference_digest(
        &mut self,
        _inst: &Instance,
        _input_bytes: u64,
    ) -> Option<Result<Vec<u8>, JobFailure>> {
        None
    }

    /// Whether `inst` gives every known answer of `kas` in the program its timed calls run in
    /// (one table job of the trial worker, which also hashes the timing message of
    /// `input_bytes`: that length's reference digest comes from the same job): once per
    /// library, width, calling convention and length. None when this runner proves no work.
    fn known_answers_hold(
        &mut self,
        _inst: &Instance,
        _kas: &[crate::kat::known::KnownAnswer],
        _input_bytes: u64,
    ) -> Option<Result<(), JobFailure>> {
        None
    }

    /// The digest of `msg` (all its bytes) from a worker of its own; None when this runner
    /// proves no work.
    fn digest_of(&mut self, _inst: &Instance, _msg: &[u8]) -> Option<Result<Vec<u8>, JobFailure>> {
        None
    }

    /// True the first time it is asked about `job`: the fresh-message probe runs once per job
    /// and runner, also when an interleaved comparison measures the job a trial at a time.
    fn first_probe(&mut self, _job: &JobKey) -> bool {
        true
    }

    /// The reference counter's rate the host probe measured: a real runner checks trials
    /// counted with it against it (scripted runners need not).
    fn use_reference_clock(&mut self, _hz: Option<f64>) {}
}

/// The real runner: worker processes.
pub(crate) struct WorkerRunner {
    setup: WorkerSetup,
    /// Reference digests already computed: library, width, calling convention and length.
    digests: HashMap<(PathBuf, u32, Abi, u64), Vec<u8>>,
    probed: HashSet<JobKey>,
    /// Libraries (with width, calling convention and length) that gave their known answers.
    known: HashSet<(PathBuf, u32, Abi, u64)>,
}

impl WorkerRunner {
    /// The runner of the lane measuring on `cpu`. Places the trial worker program in the
    /// cache first (before any lane thread starts processes).
    pub(crate) fn new(
        req: &super::RunRequest,
        cpu: usize,
        cancel: &Arc<AtomicBool>,
    ) -> Result<Self, crate::catalog::bundled::BundledError> {
        Ok(Self {
            setup: WorkerSetup {
                exe: crate::catalog::bundled::trial_worker()?,
                cpu,
                // The worker counts on this machine, whatever tree `--root` reads.
                pmu_type: crate::host::core_pmu(&crate::host::HostRoot::system(), cpu)
                    .ok()
                    .flatten()
                    .and_then(|p| p.extended_type()),
                limits: req.limits,
                cancel: cancel.clone(),
                reference_clock_hz: None,
            },
            digests: HashMap::new(),
            probed: HashSet::new(),
            known: HashSet::new(),
        })
    }
}

impl TrialRunner for WorkerRunner {
    fn kat(
        &mut self,
        inst: &Instance,
        opts: &KatOptions,
        progress: &mut dyn FnMut(&KatEvent),
    ) -> Option<KatRun> {
        let mut opts = opts.clone();
        opts.cancel = Some(self.setup.cancel.clone());
        Some(match run_kat(inst, &opts, progress) {
            Ok(r) => KatRun {
                known_answers: r.known_answers(),
                worker: crate::record::schema::WorkerAccount::of(r.peak_memory_bytes, r.cpu_time),
                status: r.status,
                detail: r.detail,
                logged: true,
                conformance: r.conformance,
            },
            Err(KatError::Cancelled(_)) => return None,
            Err(e) => KatRun {
                status: e.status(),
                detail: e.to_string(),
                logged: false,
                conformance: Vec::new(),
                known_answers: Vec::new(),
                worker: None,
            },
        })
    }

    fn trial(
        &mut self,
        inst: &Instance,
        spec: &TrialSpec,
        timeout: Duration,
        on_samples: &mut dyn FnMut(&[u64], Option<&Trial>),
        on_wait: &mut dyn FnMut(Duration),
    ) -> ProcessRun {
        run_process(&self.setup, inst, spec, timeout, on_samples, on_wait)
    }

    fn use_reference_clock(&mut self, hz: Option<f64>) {
        self.setup.reference_clock_hz = hz;
    }

    fn reference_digest(
        &mut self,
        inst: &Instance,
        input_bytes: u64,
    ) -> Option<Result<Vec<u8>, JobFailure>> {
        let key = (
            inst.library.clone(),
            inst.digest_bits,
            inst.abi,
            input_bytes,
        );
        if let Some(d) = self.digests.get(&key) {
            return Some(Ok(d.clone()));
        }
        let msg = reference::harness_message(input_bytes);
        let digest = reference::hash_once(inst, &msg, input_bytes.saturating_mul(8))
            .map_err(|e| e.job_failure());
        if let Ok(d) = &digest {
            self.digests.insert(key, d.clone());
        }
        Some(digest)
    }

    fn known_answers_hold(
        &mut self,
        inst: &Instance,
        kas: &[crate::kat::known::KnownAnswer],
        input_bytes: u64,
    ) -> Option<Result<(), JobFailure>> {
        let key = (
            inst.library.clone(),
            inst.digest_bits,
            inst.abi,
            input_bytes,
        );
        if self.known.contains(&key) {
            return Some(Ok(()));
        }
        let references = match super::known::hold(inst, kas, &[input_bytes]) {
            Ok(r) => r,
            Err(f) => return Some(Err(f)),
        };
        for (bytes, digest) in references {
            let at = (inst.library.clone(), inst.digest_bits, inst.abi, bytes);
            self.digests.insert(at, digest);
        }
        self.known.insert(key);
        Some(Ok(()))
    }

    fn digest_of(&mut self, inst: &Instance, msg: &[u8]) -> Option<Result<Vec<u8>, JobFailure>> {
        Some(
            reference::hash_once(inst, msg, (msg.len() as u64).saturating_mul(8))
                .map_err(|e| e.job_failure()),
        )
    }

    fn first_probe(&mut self, job: &JobKey) -> bool {
        self.probed.insert(job.clone())
    }
}
