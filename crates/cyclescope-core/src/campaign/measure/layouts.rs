//! `--layouts`: after a job's guide trials (and its proof), one process per layout of
//! `measure::layout::LAYOUTS`, each with the guide's calls per trial, its figure kept only
//! when the process completed with its digests and message intact. Layout trials are not re-run
//! when disturbed; they are counted, and the spread carries the count. A layout that fails makes
//! the job fail as any trial would: the same library, the same calls.

use super::Measuring;
use crate::measure::job;
use crate::measure::layout::{LAYOUT_TRIALS, LAYOUTS, LayoutSpread};
use crate::measure::trial::TrialSpec;
use crate::vocabulary::{JobFailure, JobOutcome};

impl Measuring<'_> {
    /// Times the job at every layout and keeps their spread; false when cancelled meanwhile.
    pub(super) fn time_layouts(&mut self) -> bool {
        let mut measured = Vec::new();
        let mut disturbed = 0;
        for offsets in LAYOUTS {
            let spec = TrialSpec {
                trials: LAYOUT_TRIALS,
                sample_calls: 0,
                offsets: Some(offsets),
                ..self.layout.spec.clone()
            };
            let timeout = self.layout.timeout.mul_f64(f64::from(LAYOUT_TRIALS));
            let mut run =
                self.runner
                    .trial(&self.job.inst, &spec, timeout, &mut |_, _| {}, &mut |_| {});
            if run.outcome == JobOutcome::Complete
                && let Some(f) = self.disproved(&run)
            {
                run.outcome = JobOutcome::Failed(f);
            }
            match run.outcome {
                JobOutcome::Cancelled => return false,
                JobOutcome::Failed(f) => {
                    self.m.failure = Some(JobFailure::new(
                        f.kind,
                        format!(
                            "at the layout with the message {} and the digest {} bytes past a \
                             64-byte boundary: {}",
                            offsets.message, offsets.digest, f.detail
                        ),
                    ));
                    return true;
                }
                JobOutcome::Complete => {
                    disturbed += run
                        .record
                        .trials
                        .iter()
                        .zip(&run.waited_ns)
                        .filter(|(t, w)| {
                            job::disturbance(t, **w, self.clock.fixed_clock_hz).is_some()
                        })
                        .count() as u32;
                    measured.push((offsets, run.record.trials));
                }
            }
        }
        self.m.layouts = LayoutSpread::of(measured, disturbed);
        true
    }
}
