//! The engine's side of a workbench run, on its own thread: rebuilding what the operator
//! changed, running the campaign (or the interleaved pairs, or a sweep), and turning a refusal
//! or a panic into messages so the run always ends for the workbench.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::Instant;

use super::{LinkOptions, Msg, panic_text, request};
use crate::campaign::{self, CampaignError};
use crate::tui::app::RunSpec;
use crate::vocabulary::EngineEvent;

/// Seconds per trial of a sweep started from the workbench (as `cyclescope sweep`).
const SWEEP_TRIAL_TARGET_S: f64 = 0.002;

/// The engine side of a run, on the thread `start` spawned (so it inherits the mask that
/// keeps it off the measurement CPU). An engine that refuses to start (an unfixed host, a run
/// directory it cannot use) still ends the run for the workbench, with the reason logged.
pub(super) fn run_engine(
    spec: RunSpec,
    run_dir: PathBuf,
    options: &LinkOptions,
    tx: &Sender<Msg>,
    cancel: &Arc<AtomicBool>,
    sweep: bool,
) {
    let started = Instant::now();
    let ended = std::cell::Cell::new(false);
    let emit = |ev: EngineEvent| {
        ended.set(ended.get() || matches!(ev, EngineEvent::RunFinished { .. }));
        let _ = tx.send(Msg::Engine(Box::new(ev)));
    };
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let spec = rebuild(spec, options, tx)?;
        let pairs = spec.interleaved_pairs;
        let mut req = request(spec, run_dir, options).map_err(|e| Refusal::Other(e.to_string()))?;
        if let Some(pairs) = pairs {
            let out = campaign::interleave(&req, pairs, &mut |ev| emit(ev), cancel)?;
            let result = crate::campaign::ab_result::AbResult::new(&req, pairs, out.comparisons);
            let _ = tx.send(Msg::Compared(Box::new(result)));
            return Ok(());
        }
        if !sweep {
            return campaign::run(&req, &mut |ev| emit(ev), cancel)
                .map(drop)
                .map_err(Refusal::from);
        }
        // The sweep command's defaults: short trials, adaptive to 1 %, at most 8 per length.
        req.planning.trial_target_s = SWEEP_TRIAL_TARGET_S;
        req.adaptive = Some(crate::measure::plan::Adaptive {
            precision: 0.01,
            max_trials: 8,
        });
        let lengths = crate::sweep::SweepLengths::default();
        match crate::sweep::run(&req, lengths, &mut |ev| emit(ev), cancel) {
            Ok(o) => {
                let _ = tx.send(Msg::Swept(Box::new(o.file)));
                Ok(())
            }
            Err(crate::sweep::SweepError::Campaign(e)) => Err(Refusal::from(e)),
            Err(e) => Err(Refusal::Other(e.to_string())),
        }
    }));
    match result {
        Ok(Ok(_)) => {}
        // The hint goes first: a log line is cut at the panel's edge.
        // A refusal ends the run itself: no RunFinished follows it.
        Ok(Err(Refusal::UnfixedHost(problems))) => {
            ended.set(true);
            let _ = tx.send(Msg::Refused {
                reason: problems.join("; "),
                host: true,
            });
        }
        Ok(Err(Refusal::Other(e))) => {
            ended.set(true);
            let _ = tx.send(Msg::Refused {
                reason: e,
                host: false,
            });
        }
        Err(p) => {
            let _ = tx.send(Msg::Repaint);
            emit(EngineEvent::Warning {
                message: format!("the engine failed (a bug): {}", panic_text(p.as_ref())),
            });
        }
    }
    if !ended.get() {
        emit(EngineEvent::RunFinished {
            cancelled: cancel.load(Ordering::SeqCst),
            wall: started.elapsed(),
            finished: 0,
            failed: 0,
        });
    }
}

/// Builds what the operator changed (`p`) before the run: one build per flag choice (the
/// build cache keeps unchanged instances), the new libraries replace the old ones in the
/// spec, an instance that failed to build leaves the run, and the workbench hears of both.
fn rebuild(mut spec: RunSpec, options: &LinkOptions, tx: &Sender<Msg>) -> Result<RunSpec, Refusal> {
    if spec.rebuild.is_empty() {
        return Ok(spec);
    }
    let Some(builder) = &options.builder else {
        return Err(Refusal::Other("no sources to rebuild from".into()));
    };
    let mut built = Vec::new();
    let mut problems = Vec::new();
    let mut choices: Vec<&crate::build::ProfileChoice> = Vec::new();
    for (_, c) in &spec.rebuild {
        if !choices.contains(&c) {
            choices.push(c);
        }
    }
    for choice in choices {
        let labels: Vec<&String> = spec
            .rebuild
            .iter()
            .filter(|(_, c)| c == choice)
            .map(|(l, _)| l)
            .collect();
        match (builder.0)(choice) {
            Ok(out) => {
                problems.extend(out.problems);
                for l in labels {
                    match out.instances.iter().find(|i| &i.label == l) {
                        Some(i) => built.push((i.clone(), choice.clone())),
                        None => problems.push(format!("{l}: not built, left out of this run")),
                    }
                }
            }
            Err(e) => problems.extend(labels.iter().map(|l| format!("{l}: not built: {e}"))),
        }
    }
    let rebuilt: Vec<&String> = spec.rebuild.iter().map(|(l, _)| l).collect();
    spec.instances
        .retain(|i| !rebuilt.contains(&&i.label) || built.iter().any(|(b, _)| b.label == i.label));
    for i in &mut spec.instances {
        if let Some((b, _)) = built.iter().find(|(b, _)| b.label == i.label) {
            *i = b.clone();
        }
    }
    let _ = tx.send(Msg::Rebuilt { built, problems });
    if spec.instances.is_empty() {
        return Err(Refusal::Other(
            "nothing left to measure: no instance was built".into(),
        ));
    }
    Ok(spec)
}

/// Why the engine did not run: the refusal the operator can lift with `A`, or another.
enum Refusal {
    UnfixedHost(Vec<String>),
    Other(String),
}

impl From<CampaignError> for Refusal {
    fn from(e: CampaignError) -> Self {
        match e {
            CampaignError::UnfixedHost(problems) => Refusal::UnfixedHost(problems),
            e => Refusal::Other(e.to_string()),
        }
    }
}
