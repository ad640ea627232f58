//! How a job's trials are laid out over worker processes: one trial per process where the
//! guide or the adaptive mode wants it, else one process for all, and what each may take.

use std::time::Duration;

use crate::campaign::RunRequest;
use crate::campaign::plan::Job;
use crate::counter::{Counter, RunCounter};
use crate::measure::job;
use crate::measure::plan::MIN_ADAPTIVE_TRIALS;
use crate::measure::trial::TrialSpec;

/// How a job's trials are laid out over processes.
pub(super) struct Layout {
    pub(super) spec: TrialSpec,
    pub(super) processes: u32,
    pub(super) timeout: Duration,
    /// What the plan expects of one process (its share of the job's estimate).
    pub(super) expected: Duration,
    pub(super) total_trials: u32,
    pub(super) calls_total: u64,
}

impl Layout {
    pub(super) fn of(req: &RunRequest, j: &Job) -> Self {
        let p = &j.plan;
        // Adaptive jobs and cheap set-ups run one trial per process; otherwise one process
        // runs them all.
        let one_per_process = p.separate_processes || req.adaptive.is_some();
        let per_process = if one_per_process { 1 } else { p.trials };
        let counted = req.counter.under_valgrind();
        let processes = match req.adaptive {
            // An exact count needs no second process, adaptive or not.
            _ if counted => 1,
            Some(a) => a.max_trials.max(MIN_ADAPTIVE_TRIALS),
            None if p.separate_processes => p.trials,
            None => 1,
        };
        let total_trials = processes * per_process;
        Self {
            spec: TrialSpec {
                library: j.inst.library.clone(),
                digest_bits: j.inst.digest_bits,
                input_bytes: j.key.input_bytes,
                iterations: p.iterations_per_trial,
                warmups: p.warmups,
                trials: per_process,
                // Instructions have no per-call phase: valgrind's time per call is no figure,
                // and the per-call stamps are the reference counter's, which are no
                // instructions.
                sample_calls: if req.counter.counts() == Counter::Instructions {
                    0
                } else {
                    job::sample_calls_for(p, j.t1, req.planning.trial_target_s)
                },
                abi: j.inst.abi,
                fresh_seed: None,
                fresh_heads: None,
                offsets: None,
                count: req.counter.under_valgrind(),
                hardware_instructions: req.counter == RunCounter::HwInstructions,
                loop_only: false,
                repeat: false,
                any_width: false,
            },
            processes,
            timeout: req.capped(Duration::from_secs_f64(p.timeout_per_process_s)),
            expected: Duration::from_secs_f64(
                p.estimated_s
                    / if p.separate_processes {
                        p.trials.max(1)
                    } else {
                        1
                    } as f64,
            ),
            total_trials,
            calls_total: u64::from(total_trials) * p.iterations_per_trial,
        }
    }
}
