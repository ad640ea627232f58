//! The checks around the fresh-message probe's processes: what its loop costs with no
//! candidate in the process, and whether its digests are what the messages give.

use std::hash::{BuildHasher, RandomState};

use super::super::Measuring;
use crate::measure::job::ProcessRun;
use crate::measure::proof::fresh;
use crate::measure::trial::TrialSpec;
use crate::vocabulary::{JobFailure, JobOutcome};

impl Measuring<'_> {
    /// The CPU time per call of the probe's loop around a built-in function, in a process with
    /// no candidate in it (`TrialSpec::loop_only`): the same messages, calls, digest width,
    /// CPU and clock as `spec`'s probe. The fastest of `LOOP_PROCESSES` (a busy host only ever
    /// adds to a process's CPU time); None when none could be read.
    pub(super) fn probe_loop_ns(&mut self, spec: &TrialSpec) -> Option<f64> {
        let bare = TrialSpec {
            loop_only: true,
            library: std::path::PathBuf::from("-"),
            ..spec.clone()
        };
        let timeout = self.layout.timeout;
        (0..LOOP_PROCESSES)
            .filter_map(|_| {
                let run =
                    self.runner
                        .trial(&self.job.inst, &bare, timeout, &mut |_, _| {}, &mut |_| {});
                let cpu = match run.outcome {
                    JobOutcome::Complete => run.cpu_after_go?.ok()?,
                    _ => return None,
                };
                Some(cpu.as_secs_f64() * 1e9 / bare.iterations.max(1) as f64)
            })
            .reduce(f64::min)
    }

    /// The probe's digests: their XOR must be what its trial line carried (so they were all
    /// known when the engine's clock stopped), and a few of them, drawn at random after the
    /// fact, must be what a separate worker computes of those messages: a library that
    /// answered fresh messages fast and wrong would otherwise hide how slow the real work is.
    /// Every digest of the probe's twin must be the timing message's reference.
    pub(super) fn probe_digests_hold(
        &mut self,
        spec: &TrialSpec,
        run: &ProcessRun,
    ) -> Result<(), JobFailure> {
        let (Ok(len), Some(seed), Some(heads)) = (
            usize::try_from(spec.input_bytes),
            spec.fresh_seed,
            spec.fresh_heads,
        ) else {
            return Ok(());
        };
        let width = (spec.digest_bits as usize).div_ceil(8);
        let tampered = |why: String| {
            Err(JobFailure::new(
                crate::vocabulary::FailureKind::Tampered,
                format!("in the fresh-message probe: {why}"),
            ))
        };
        let calls = spec.iterations as usize;
        if width == 0 || run.probe_digests.len() != calls * width {
            return tampered(format!(
                "{} bytes of digests for {calls} calls of {width} bytes",
                run.probe_digests.len()
            ));
        }
        let mut fold = vec![0u8; width];
        for d in run.probe_digests.chunks(width) {
            fold.iter_mut().zip(d).for_each(|(f, b)| *f ^= b);
        }
        if width <= PROBE_FOLD_MAX_BYTES
            && run.digests.last().map(String::as_str) != Some(hex::encode(&fold).as_str())
        {
            return tampered(
                "its trial line did not carry the XOR of the digests it reported after it".into(),
            );
        }
        // The twin hashed the timing message every call: each digest is the reference.
        if spec.repeat {
            let expected = self.expected_digest.as_deref().unwrap_or_default();
            return match run.probe_digests.chunks(width).position(|d| d != expected) {
                None => Ok(()),
                Some(i) => Err(JobFailure::new(
                    crate::vocabulary::FailureKind::Cryptofail,
                    format!(
                        "in the fresh-message probe's twin, call {} of {calls} answered a digest \
                         of the timing message that differs from the one a separate worker \
                         computed before timing",
                        i + 1
                    ),
                )),
            };
        }
        let state = RandomState::new();
        for k in 0..PROBE_SPOT_CHECKS {
            let index = (state.hash_one(k) % calls.max(1) as u64) as usize;
            let msg = fresh::probe_message(seed, heads, len, index);
            let Some(expected) = self.runner.digest_of(&self.job.inst, &msg) else {
                return Ok(());
            };
            let got = &run.probe_digests[index * width..(index + 1) * width];
            if expected? != got {
                return Err(JobFailure::new(
                    crate::vocabulary::FailureKind::Cryptofail,
                    format!(
                        "in the fresh-message probe, call {} of {calls} answered a digest that \
                         differs from the one a separate worker computes of its message: one of \
                         the two reported a digest it did not compute (a library that answers \
                         fresh messages without the work, or writes its workers' reports itself)",
                        index + 1
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Loop-only processes whose fastest gives the probe loop's own cost.
const LOOP_PROCESSES: u32 = 2;

/// Probe digests checked one by one against a separate worker's, each drawn at random after
/// the probe reported them all.
const PROBE_SPOT_CHECKS: u64 = 2;
/// The widest digest whose XOR the worker's trial line carries (`cyclescope_worker::trial`).
const PROBE_FOLD_MAX_BYTES: usize = 1024;
