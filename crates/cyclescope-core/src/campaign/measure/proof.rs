//! A job's proof of work, in the order the job runs it: the reference digest of the harness's
//! message from a worker of its own before any trial; each kept process's trials against it and
//! against the physical floor; after the guide's trials, one fresh-message probe process (the
//! same length, each call a message of its own) whose figure the guide's may not be far below.
//! Judgements are `measure::proof`'s; this only runs the workers and keeps the verdict.

use std::hash::{BuildHasher, RandomState};

use super::Measuring;
use crate::measure::job::{self, ProcessRun};
use crate::measure::proof::{self, PROBE_PROCESSES, PROBE_TRIALS, PROBE_WARMUPS, floor, fresh};
use crate::measure::trial::TrialSpec;
use crate::vocabulary::{JobFailure, JobOutcome};

/// Bytes of fresh messages one probe trial hashes at most (the trial worker's pool,
/// `companion/proof.rs`).
pub(crate) const PROBE_POOL_BYTES: u64 = 8 << 20;

impl Measuring<'_> {
    /// Asks the runner for the reference digest; false (the job's failure set) when it could
    /// not be had.
    pub(super) fn fetch_reference_digest(&mut self) -> bool {
        match self
            .runner
            .reference_digest(&self.job.inst, self.job.key.input_bytes)
        {
            None => true,
            Some(Ok(d)) => {
                self.expected_digest = Some(d);
                true
            }
            Some(Err(f)) => {
                self.m.failure = Some(f);
                false
            }
        }
    }

    /// Why a complete process's trials are no figure: a digest unlike the reference, or more
    /// bytes than a core can load.
    pub(super) fn disproved(&self, run: &ProcessRun) -> Option<JobFailure> {
        let expected = self.expected_digest.as_deref()?;
        let bytes = self.job.key.input_bytes;
        let core = run.info.as_ref().is_some_and(|i| i.core_cycles);
        proof::check_digests(expected, &run.digests, bytes)
            .and_then(|()| floor::check(&run.record.trials, bytes, core))
            .err()
    }

    /// The fresh-message probe after the guide's trials (only where a reference digest proves
    /// work, and the message is not empty); a refusal becomes the job's failure. A refusal is
    /// only kept when a second probe process confirms it: a busy host can slow every trial of
    /// one process, never make the guide's trials faster. False when the run was cancelled.
    pub(super) fn probe_fresh_messages(&mut self) -> bool {
        let bytes = self.job.key.input_bytes;
        if self.expected_digest.is_none()
            || bytes == 0
            || self.done_trials.is_empty()
            || !self.runner.first_probe(&self.job.key)
        {
            return true;
        }
        let mut probe_trials = Vec::new();
        for _ in 0..PROBE_PROCESSES {
            let trials = match self.one_probe() {
                Probe::Cancelled => return false,
                Probe::Failed(f) => {
                    self.m.failure = Some(f);
                    return true;
                }
                Probe::Trials(t) => t,
            };
            probe_trials.extend(trials);
            match proof::probe_refusal(&self.done_trials, &probe_trials, bytes) {
                // Not (or no longer) marked: a first process's refusal the second does not
                // confirm is not kept.
                Ok(()) => {
                    self.m.failure = None;
                    return true;
                }
                Err(f) => self.m.failure = Some(f),
            }
        }
        true
    }

    /// One probe process: its undisturbed trials, or how it failed.
    fn one_probe(&mut self) -> Probe {
        let bytes = self.job.key.input_bytes;
        let seed = RandomState::new().hash_one(bytes);
        let spec = TrialSpec {
            iterations: probe_calls(bytes, self.layout.spec.iterations),
            warmups: PROBE_WARMUPS,
            trials: PROBE_TRIALS,
            sample_calls: 0,
            fresh_seed: Some(seed),
            ..self.layout.spec.clone()
        };
        let timeout = self.layout.timeout.mul_f64(f64::from(PROBE_TRIALS));
        let run = self
            .runner
            .trial(&self.job.inst, &spec, timeout, &mut |_, _| {}, &mut |_| {});
        let core = run.info.as_ref().is_some_and(|i| i.core_cycles);
        match run.outcome {
            JobOutcome::Cancelled => Probe::Cancelled,
            JobOutcome::Failed(f) => Probe::Failed(JobFailure::new(
                f.kind,
                format!("in the fresh-message probe: {}", f.detail),
            )),
            JobOutcome::Complete => match floor::check(&run.record.trials, bytes, core)
                .and_then(|()| self.probe_digest_holds(&spec, seed, &run))
            {
                Err(f) => Probe::Failed(f),
                Ok(()) => Probe::Trials(
                    run.record
                        .trials
                        .iter()
                        .zip(&run.waited_ns)
                        .filter(|(t, w)| {
                            job::disturbance(t, **w, self.clock.fixed_clock_hz).is_none()
                        })
                        .map(|(t, _)| *t)
                        .collect(),
                ),
            },
        }
    }
}

impl Measuring<'_> {
    /// The digest the probe's last call wrote against the one a separate worker computes of
    /// that message (regenerated from the seed): a library that answers fresh messages fast
    /// and wrong would otherwise hide how slow the real work is.
    fn probe_digest_holds(
        &mut self,
        spec: &TrialSpec,
        seed: u64,
        run: &ProcessRun,
    ) -> Result<(), JobFailure> {
        let (Ok(len), Ok(count)) = (
            usize::try_from(spec.input_bytes),
            usize::try_from(spec.iterations),
        ) else {
            return Ok(());
        };
        let last_trial = u64::from(spec.trials.saturating_sub(1));
        let msg = fresh::last_message(seed, last_trial, len, count);
        let Some(expected) = self.runner.digest_of(&self.job.inst, &msg) else {
            return Ok(());
        };
        let expected = expected?;
        let last = run.digests.last().cloned().into_iter().collect::<Vec<_>>();
        proof::check_digests(&expected, &last, spec.input_bytes).map_err(|f| {
            JobFailure::new(
                f.kind,
                format!(
                    "in the fresh-message probe, on its last fresh message: {}",
                    f.detail
                ),
            )
        })
    }
}

/// What one probe process gave.
enum Probe {
    Trials(Vec<crate::measure::stats::Trial>),
    Failed(JobFailure),
    Cancelled,
}

/// Calls per probe trial: a fifth of the guide's (at least the guide's minimum of 20), each on
/// a message of its own, within the pool — a probe process costs about 3/5 of one guide trial.
pub(crate) fn probe_calls(input_bytes: u64, guide_iterations: u64) -> u64 {
    (guide_iterations / 5)
        .max(20)
        .min(guide_iterations)
        .min(PROBE_POOL_BYTES / input_bytes.max(1))
        .max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_asks_for_what_the_workers_pool_holds() {
        for (bytes, iters) in [(32, 20_000), (65_536, 300), (1 << 20, 20), (1 << 24, 20)] {
            let calls = probe_calls(bytes, iters);
            assert_eq!(
                crate::companion::proof::pool_messages(bytes, calls),
                calls,
                "{bytes} B × {iters}"
            );
        }
        assert_eq!(probe_calls(32, 20_000), 4000);
        assert_eq!(probe_calls(1 << 20, 20), 8);
        assert_eq!(PROBE_POOL_BYTES, crate::companion::proof::POOL_BYTES);
    }
}
