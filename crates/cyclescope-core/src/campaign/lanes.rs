//! The lanes of a run: one thread per measurement CPU, each with its own runner (its workers
//! are pinned to its CPU), host gate and instances, planning and measuring them cheapest first
//! exactly as a single-CPU run does. Lanes share the run directory (records are separate files
//! written atomically; `build.json` is updated under the run directory's mutex) and send their
//! events over a channel to the campaign's thread, which alone appends the journal and calls
//! the frontend, so nothing a frontend does can run on a lane. A lane whose write fails stops
//! the others at their next job. Never decides which CPU measures what (`assign` does).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Sender, channel};

use super::runner::TrialRunner;
use super::{CampaignError, Opened, Run, RunOutcome, RunRequest};
use crate::vocabulary::EngineEvent;

/// A lane's way to the campaign's thread.
pub(super) struct LaneEvents {
    tx: Sender<EngineEvent>,
}

impl LaneEvents {
    pub(super) fn send(&mut self, ev: EngineEvent) {
        // The receiver lives until every lane has ended.
        let _ = self.tx.send(ev);
    }
}

impl Run<'_> {
    /// Plans this lane's jobs and measures them, cheapest first.
    pub(super) fn run_lane(&mut self) -> Result<(), CampaignError> {
        let jobs = self.plan()?;
        for job in &jobs {
            if self.cancelled() {
                break;
            }
            if !self.measure_and_write(job)? {
                break;
            }
        }
        Ok(())
    }
}

/// Runs `body` on every lane of an opened run (a run's body: `Run::run_lane`) to its end and
/// forwards their events meanwhile; the lanes' outcomes summed, or the first lane's error.
pub(super) fn run_lanes(
    req: &RunRequest,
    opened: &mut Opened<'_>,
    runners: Vec<&mut dyn TrialRunner>,
    cancel: &AtomicBool,
    body: &(dyn Fn(&mut Run<'_>) -> Result<(), CampaignError> + Sync),
) -> Result<RunOutcome, CampaignError> {
    let (dir, hosts, events) = (&opened.dir, &opened.hosts, &mut opened.events);
    let assignment = opened.assignment.clone();
    let halt = AtomicBool::new(false);
    let (tx, rx) = channel();
    std::thread::scope(|s| {
        let mut lanes = Vec::new();
        for ((runner, host), instances) in runners.into_iter().zip(hosts).zip(assignment) {
            let mut run = Run {
                req,
                dir,
                host,
                instances,
                runner,
                cancel,
                halt: &halt,
                events: LaneEvents { tx: tx.clone() },
                outcome: RunOutcome::default(),
            };
            let halt = &halt;
            let lane = std::thread::Builder::new()
                .name(format!("lane-cpu{}", host.cpu()))
                .spawn_scoped(s, move || {
                    let r = body(&mut run);
                    if r.is_err() {
                        halt.store(true, Ordering::Relaxed);
                    }
                    r.map(|()| run.outcome)
                });
            match lane {
                Ok(h) => lanes.push(h),
                Err(e) => {
                    halt.store(true, Ordering::Relaxed);
                    events.send(EngineEvent::Warning {
                        message: format!("cannot start the lane of CPU {}: {e}", host.cpu()),
                    });
                }
            }
        }
        drop(tx);
        // Until the last lane ends and drops its sender.
        for ev in rx {
            events.send(ev);
        }
        let mut total = RunOutcome::default();
        let mut first_error = None;
        for lane in lanes {
            match lane.join() {
                Ok(Ok(o)) => total.add(&o),
                Ok(Err(e)) => {
                    first_error.get_or_insert(e);
                }
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(total),
        }
    })
}
