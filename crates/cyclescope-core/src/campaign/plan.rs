//! The plan phase: per instance, the lengths still to do (a resumed run skips complete
//! records), the KAT gate, then one calibration process per job and the guide's plan from it.
//! A job whose calibration fails gets its `failed_or_partial` record here; the others are
//! returned cheapest first.

use std::time::Duration;

use super::kat_gate::{KatResult, kat_gate};
use super::{CampaignError, Run, write};
use crate::catalog::Instance;
use crate::counter::RunCounter;
use crate::measure::plan::{MAX_ATTEMPTS, TrialPlan, plan};
use crate::measure::trial::TrialSpec;
use crate::vocabulary::{EngineEvent, JobKey, JobOutcome};

/// The longest a calibration call may take before its worker is killed.
const CALIBRATION_TIMEOUT: Duration = Duration::from_secs(6 * 3600);

/// One planned job.
pub(super) struct Job {
    pub(super) inst: Instance,
    pub(super) key: JobKey,
    pub(super) plan: TrialPlan,
    /// Seconds of the calibration call.
    pub(super) t1: f64,
    pub(super) kat: KatResult,
}

enum Calibrated {
    Planned(Box<Job>),
    Failed,
    Cancelled,
}

impl Run<'_> {
    /// Every job still to do, gated, calibrated and planned, cheapest first.
    pub(super) fn plan(&mut self) -> Result<Vec<Job>, CampaignError> {
        let mut jobs = Vec::new();
        for inst in &self.instances.clone() {
            if self.cancelled() {
                break;
            }
            let todo = self.lengths_to_do(inst);
            if todo.is_empty() {
                continue;
            }
            let Some(kat) = self.gate(inst, todo.len())? else {
                continue;
            };
            for len in todo {
                if self.cancelled() {
                    break;
                }
                match self.calibrate(inst, len, &kat)? {
                    Calibrated::Planned(job) => jobs.push(*job),
                    Calibrated::Failed => {}
                    Calibrated::Cancelled => break,
                }
            }
        }
        jobs.sort_by(|a, b| {
            a.plan
                .estimated_s
                .total_cmp(&b.plan.estimated_s)
                .then(a.key.cmp(&b.key))
        });
        Ok(jobs)
    }

    /// The lengths of `inst` without a complete record; the others count as skipped.
    fn lengths_to_do(&mut self, inst: &Instance) -> Vec<u64> {
        let todo: Vec<u64> = self
            .req
            .lengths
            .iter()
            .copied()
            .filter(|&len| !write::is_complete(&self.req.run_dir, inst, len))
            .collect();
        self.outcome.skipped += self.req.lengths.len() - todo.len();
        todo
    }

    /// The KAT verdict of `inst` when it may be timed; None (and `jobs` blocked) when not, or
    /// when the run was cancelled during the KAT.
    fn gate(&mut self, inst: &Instance, jobs: usize) -> Result<Option<KatResult>, CampaignError> {
        let events = &mut self.events;
        let Some(kat) = kat_gate(inst, self.req, self.dir, self.runner, &mut |ev| {
            events.send(ev)
        })?
        else {
            return Ok(None);
        };
        if kat.status.is_pass() || self.req.allow_kat_fail {
            return Ok(Some(kat));
        }
        self.outcome.kat_blocked += jobs;
        let check = kat
            .failed_check()
            .map_or_else(String::new, |c| format!(" ({c})"));
        self.events.send(EngineEvent::Warning {
            message: format!(
                "{} not measured: KAT {}{check} (consent to time it anyway: --allow-kat-fail, or A in the workbench)",
                inst.label, kat.status
            ),
        });
        Ok(None)
    }

    /// One cold call in its own process (again while it was disturbed), then the guide's
    /// plan from its time.
    fn calibrate(
        &mut self,
        inst: &Instance,
        len: u64,
        kat: &KatResult,
    ) -> Result<Calibrated, CampaignError> {
        let key = JobKey {
            candidate: inst.candidate.clone(),
            label: inst.label.clone(),
            input_bytes: len,
        };
        let spec = TrialSpec {
            library: inst.library.clone(),
            digest_bits: inst.digest_bits,
            input_bytes: len,
            iterations: 1,
            warmups: 0,
            trials: 1,
            sample_calls: 0,
            abi: inst.abi,
            fresh_seed: None,
            fresh_heads: None,
            offsets: None,
            count: false,
            // Hardware instructions that do not open fail here, named, before any plan.
            hardware_instructions: self.req.counter == RunCounter::HwInstructions,
            loop_only: false,
            repeat: false,
            any_width: false,
        };
        let timeout = self.req.capped(CALIBRATION_TIMEOUT);
        // A call that waited for the CPU (or ran on a slow clock) would size every trial of
        // the job from a time the library never takes: it is called again in a new process,
        // as a disturbed trial is, up to the same number of attempts (the last one counts).
        let fixed_clock_hz = self.host.fixed_clock_hz();
        let mut attempt = 1;
        let run = loop {
            let run = self
                .runner
                .trial(inst, &spec, timeout, &mut |_, _| {}, &mut |_| {});
            let disturbed = run.outcome == JobOutcome::Complete
                && super::measure::disturbance_of(&run, fixed_clock_hz).is_some();
            if !disturbed || attempt >= MAX_ATTEMPTS || self.cancelled() {
                break run;
            }
            attempt += 1;
        };
        let t1 = run.record.trials.first().map_or(0.0, |t| t.seconds);
        let setup_s = (run.record.wall_s - t1).max(0.0);
        let reason = match &run.outcome {
            JobOutcome::Complete => {
                let p = match self.req.counter {
                    RunCounter::Cycles | RunCounter::HwInstructions => {
                        plan(t1, setup_s, &self.req.planning)
                    }
                    RunCounter::Instructions => count_plan(t1, setup_s),
                };
                self.events.send(EngineEvent::JobPlanned {
                    job: key.clone(),
                    plan: p,
                    t1_s: t1,
                });
                return Ok(Calibrated::Planned(Box::new(Job {
                    inst: inst.clone(),
                    key,
                    plan: p,
                    t1,
                    kat: kat.clone(),
                })));
            }
            JobOutcome::Cancelled => return Ok(Calibrated::Cancelled),
            JobOutcome::Failed(f) => f.clone(),
        };
        self.outcome.failed += 1;
        let stderr_tail = run.record.stderr.clone();
        let record =
            write::failed_record(self.dir, self.req, inst, len, kat, self.host, run, &reason)
                .map_err(|source| CampaignError::RecordWrite {
                    run_dir: self.req.run_dir.clone(),
                    what: format!("the record of {key}"),
                    source,
                })?;
        self.events.send(EngineEvent::JobFailed {
            job: key,
            reason,
            stderr_tail,
            record: Some(record),
        });
        Ok(Calibrated::Failed)
    }
}

/// Valgrind runs a call some 20–100 times slower than the CPU, and starts in about a second.
const VALGRIND_SLOWDOWN: f64 = 200.0;
const VALGRIND_START_S: f64 = 30.0;

/// An instruction count's plan: one process under valgrind, one warm-up call, then
/// `callgrind::COUNTED_CALLS` counted calls (the count is exact: no more are needed), its
/// deadline far above what valgrind takes for them (the cold call `t1` times its slowdown).
pub(super) fn count_plan(t1: f64, setup_s: f64) -> TrialPlan {
    let calls = crate::counter::callgrind::COUNTED_CALLS;
    let estimated_s = setup_s + t1 * (calls + 1) as f64;
    TrialPlan {
        iterations_per_trial: calls,
        warmups: 1,
        trials: 1,
        separate_processes: true,
        estimated_s,
        timeout_per_process_s: VALGRIND_START_S + VALGRIND_SLOWDOWN * estimated_s,
    }
}
