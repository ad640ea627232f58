//! What the engine checks of a measurement worker's report before it believes it: the order
//! of its messages (`ready`, then per trial one `trial` of exactly the planned calls and at
//! most the planned per-call samples, then `done` after exactly the planned trials — or one
//! `fault`/`error` that ends it), and the reported figures against what the engine saw of the
//! process from outside: no loop can outlast the process, a reference counter ticks at the
//! rate the clock probe measured, and a process cannot burn far more CPU time than the calls
//! it reports account for. Pure functions; the worker side lives in the parent module.

use std::time::Duration;

use super::{TrialMessage, TrialSpec};
use crate::measure::stats::Trial;
use crate::worker::Tampering;

/// Slack for the wall-time check: the worker's clock readings and the parent's are taken at
/// different moments.
const WALL_SLACK: Duration = Duration::from_millis(50);
/// Trials shorter than this are not rate-checked: the worker reads the clock and the counter
/// one after the other, and a preemption that lands between the two readings (a scheduler
/// slice is up to a few tens of ms on a busy host) must not halve a trial's apparent rate.
const MIN_RATE_CHECK_S: f64 = 0.05;
/// How far a reference counter's apparent rate may stray from the probed one.
const RATE_FACTOR: f64 = 2.0;
/// CPU time a worker may spend beyond its reported calls (start-up, loading the library, its
/// constructor, the timer-overhead measurement), before the excess counts as hidden work.
const SETUP_CPU_ALLOWANCE: Duration = Duration::from_secs(5);
/// How many times the reported calls' own time the CPU time may exceed them by (on top of
/// the allowance): the stamped per-call phase and warm-ups repeat the calls.
const WORK_FACTOR: f64 = 3.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Start,
    Measuring,
    Ended,
}

/// Where a measurement worker is in its protocol.
#[derive(Debug, Clone)]
pub(crate) struct TrialOrder {
    /// The loop counter must be hardware `instructions:u`, and only then may it be.
    hardware_instructions: bool,
    trials: u32,
    iterations: u64,
    sample_calls: u64,
    phase: Phase,
    seen: u32,
    samples: u64,
    /// The fresh-message probe reports every call's digest; nothing else does.
    probe: bool,
    /// Hex digits of probe digests since the last trial, and how many the trial's calls make.
    digest_hex: u64,
    digest_hex_per_trial: u64,
}

impl TrialOrder {
    pub(crate) fn new(spec: &TrialSpec) -> Self {
        Self {
            hardware_instructions: spec.hardware_instructions,
            trials: spec.trials,
            iterations: spec.iterations,
            sample_calls: spec.sample_calls,
            phase: Phase::Start,
            seen: 0,
            samples: 0,
            probe: spec.fresh_seed.is_some(),
            digest_hex: 0,
            digest_hex_per_trial: spec.iterations * 2 * u64::from(spec.digest_bits).div_ceil(8),
        }
    }

    /// Accepts `m` if it may come now, and moves on.
    pub(crate) fn accept(&mut self, m: &TrialMessage) -> Result<(), Tampering> {
        let out_of_order =
            |what: &str| Err(Tampering(format!("{what} out of the protocol's order")));
        match (self.phase, m) {
            (Phase::Ended, _) => out_of_order("a message after the worker's last"),
            (Phase::Start, TrialMessage::Ready { cycle_source, .. })
                if self.hardware_instructions
                    != (*cycle_source == crate::counter::CycleSource::PerfUserInstructions) =>
            {
                Err(Tampering(format!(
                    "a loop counter of {cycle_source}, where {} was asked for",
                    if self.hardware_instructions {
                        "perf_event:instructions:u"
                    } else {
                        "a cycle counter"
                    }
                )))
            }
            (Phase::Start, TrialMessage::Ready { .. }) => {
                self.phase = Phase::Measuring;
                Ok(())
            }
            (
                Phase::Start,
                TrialMessage::Error { .. } | TrialMessage::InstructionsUnavailable { .. },
            ) => {
                self.phase = Phase::Ended;
                Ok(())
            }
            (Phase::Start, _) => out_of_order("a message before `ready`"),
            (Phase::Measuring, TrialMessage::Trial { measurements, .. }) => {
                if self.seen >= self.trials {
                    return out_of_order("a trial beyond the planned ones");
                }
                if *measurements != self.iterations {
                    return Err(Tampering(format!(
                        "a trial of {measurements} calls, {} were planned",
                        self.iterations
                    )));
                }
                if self.probe && self.seen > 0 && self.digest_hex != self.digest_hex_per_trial {
                    return Err(Tampering(format!(
                        "{} hex digits of probe digests after trial {}, {} were due",
                        self.digest_hex, self.seen, self.digest_hex_per_trial
                    )));
                }
                self.seen += 1;
                self.samples = 0;
                self.digest_hex = 0;
                Ok(())
            }
            (Phase::Measuring, TrialMessage::IpSamples { .. }) if self.seen > 0 => Ok(()),
            (Phase::Measuring, TrialMessage::IpSamples { .. }) => {
                out_of_order("instruction pointer samples before a trial")
            }
            (Phase::Measuring, TrialMessage::Digests { hex }) => {
                self.digest_hex += hex.len() as u64;
                if !self.probe || self.seen == 0 || self.digest_hex > self.digest_hex_per_trial {
                    return Err(Tampering(format!(
                        "{} hex digits of probe digests after trial {}, {} were due",
                        self.digest_hex,
                        self.seen,
                        if self.probe {
                            self.digest_hex_per_trial
                        } else {
                            0
                        }
                    )));
                }
                Ok(())
            }
            (Phase::Measuring, TrialMessage::Samples { ticks }) => {
                self.samples += ticks.len() as u64;
                if self.seen == 0 || self.samples > self.sample_calls {
                    return Err(Tampering(format!(
                        "{} per-call samples after trial {}, at most {} were planned",
                        self.samples, self.seen, self.sample_calls
                    )));
                }
                Ok(())
            }
            (
                Phase::Measuring,
                TrialMessage::Cryptofail { .. }
                | TrialMessage::Overflow { .. }
                | TrialMessage::InputChanged { .. }
                | TrialMessage::CounterFault { .. },
            ) => {
                self.phase = Phase::Ended;
                Ok(())
            }
            (Phase::Measuring, TrialMessage::Done { .. })
                if self.probe && self.digest_hex != self.digest_hex_per_trial =>
            {
                Err(Tampering(format!(
                    "{} hex digits of probe digests after the last trial, {} were due",
                    self.digest_hex, self.digest_hex_per_trial
                )))
            }
            (Phase::Measuring, TrialMessage::Done { .. }) if self.seen == self.trials => {
                self.phase = Phase::Ended;
                Ok(())
            }
            (Phase::Measuring, TrialMessage::Done { .. }) => {
                out_of_order("`done` before every trial")
            }
            (
                Phase::Measuring,
                TrialMessage::Ready { .. }
                | TrialMessage::Error { .. }
                | TrialMessage::InstructionsUnavailable { .. },
            ) => out_of_order("a second `ready`"),
            (Phase::Measuring, TrialMessage::Wrote { .. }) => {
                out_of_order("a `wrote` line, which only a framed table sends")
            }
        }
    }
}

/// What the engine saw of a worker process itself.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Observed {
    /// From spawn to the end, by the engine's clock.
    pub(crate) wall: Duration,
    /// User + system time by the kernel's account (None when the worker did not end itself).
    pub(crate) cpu: Option<Duration>,
    /// The rate of the reference counter the clock probe measured, when the worker's loop
    /// counter is that counter (not core cycles).
    pub(crate) reference_hz: Option<f64>,
}

/// Checks the trials a completed worker reported against what was seen from outside.
pub(crate) fn check_outside(
    spec: &TrialSpec,
    trials: &[Trial],
    seen: &Observed,
) -> Result<(), Tampering> {
    let claimed_s: f64 = trials.iter().map(|t| t.seconds).sum();
    if claimed_s > (seen.wall + WALL_SLACK).as_secs_f64() {
        return Err(Tampering(format!(
            "the trials claim {claimed_s:.3} s of calls, but the worker lived {:.3} s",
            seen.wall.as_secs_f64()
        )));
    }
    if let Some(hz) = seen.reference_hz.filter(|&hz| hz > 0.0) {
        for (i, t) in trials.iter().enumerate() {
            if t.seconds < MIN_RATE_CHECK_S {
                continue;
            }
            let rate = t.cycles as f64 / t.seconds;
            if !(hz / RATE_FACTOR..=hz * RATE_FACTOR).contains(&rate) {
                return Err(Tampering(format!(
                    "trial {} claims {} cycles in {:.4} s ({:.3} GHz), but the counter ticks at {:.3} GHz",
                    i + 1,
                    t.cycles,
                    t.seconds,
                    rate / 1e9,
                    hz / 1e9
                )));
            }
        }
    }
    if let Some(cpu) = seen.cpu {
        let calls: u64 = trials.iter().map(|t| t.measurements).sum();
        let per_call_s = if calls == 0 {
            0.0
        } else {
            claimed_s / calls as f64
        };
        let all_calls =
            spec.warmups + u64::from(spec.trials) * (spec.iterations + spec.sample_calls);
        let work_s = per_call_s * all_calls as f64;
        let allowed = SETUP_CPU_ALLOWANCE.as_secs_f64() + WORK_FACTOR * work_s;
        if cpu.as_secs_f64() > allowed {
            return Err(Tampering(format!(
                "the worker used {:.2} s of CPU time, but its reported calls account for {work_s:.3} s \
                 (far fewer cycles per call than it spent)",
                cpu.as_secs_f64()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
