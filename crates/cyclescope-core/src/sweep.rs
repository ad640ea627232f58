//! The length sweep: measure each instance at a dense set of lengths (every `step` bytes up to
//! `max_bytes`, plus the guide's S1–S8) through the campaign in its adaptive mode, fit the cost
//! model (`fit`), then measure every byte length around the first block boundaries the fit
//! could not place exactly, and fit again. The points, the fit and how they were measured go
//! to `sweep.json` in the run directory beside the records. With `--counter instructions` the
//! points are exact counts and B and p are read off their jumps (`exact`) instead of fitted; a
//! cycles sweep can take them from such a sweep (`run_with_structure`). It owns no measurement
//! of its own: every figure comes from a campaign record, and it never draws anything.

mod describe;
mod exact;
pub mod fit;
mod settings;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use crate::campaign::{self, CampaignError, RunRequest};
use crate::catalog::Instance;
use crate::kat::KatStatus;
use crate::record::TimingRecord;
use crate::vocabulary::EngineEvent;

pub use describe::describe;
pub use fit::{CostModel, FitError, Interval, SweepPoint};
pub use settings::{PointStatistic, SweepLengths};

/// The file the sweep writes into the run directory.
pub const FILE_NAME: &str = "sweep.json";
/// Block boundaries measured byte by byte when the fit leaves the threshold open.
const REFINED_BOUNDARIES: u64 = 3;

/// One instance's sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstanceSweep {
    pub candidate: String,
    pub label: String,
    pub statistic: PointStatistic,
    /// The counter the points count (`tsc`, `perf_event:cpu-cycles:u`, …).
    pub counter: String,
    pub points: Vec<SweepPoint>,
    pub model: Option<CostModel>,
    /// Why there is no model (too few lengths measured, …).
    pub unfitted: Option<String>,
}

/// `sweep.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepFile {
    pub lengths: SweepLengths,
    pub adaptive_precision: Option<f64>,
    pub instances: Vec<InstanceSweep>,
}

#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error("cannot take block sizes from {run_dir}: {why}")]
    NoStructure { run_dir: PathBuf, why: String },
    #[error(transparent)]
    Campaign(#[from] CampaignError),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// How a sweep ended.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepOutcome {
    pub file: SweepFile,
    pub cancelled: bool,
    /// Jobs that failed or were blocked by their KAT, over both passes.
    pub failed: usize,
}

/// Block size and padding threshold by instance label, taken from an instruction sweep.
pub type GivenStructure = BTreeMap<String, (u64, u64)>;

/// Runs the sweep of `base`'s instances into `base.run_dir` (its lengths are replaced).
pub fn run(
    base: &RunRequest,
    lengths: SweepLengths,
    emit: &mut dyn FnMut(EngineEvent),
    cancel: &Arc<AtomicBool>,
) -> Result<SweepOutcome, SweepError> {
    run_with_structure(base, lengths, &GivenStructure::new(), emit, cancel)
}

/// B and p of every instance an instruction sweep in `run_dir` determined.
pub fn structure_from(run_dir: &Path) -> Result<GivenStructure, SweepError> {
    let file = read(run_dir).ok_or_else(|| SweepError::NoStructure {
        run_dir: run_dir.to_path_buf(),
        why: "it holds no readable sweep.json".into(),
    })?;
    let given: GivenStructure = file
        .instances
        .iter()
        .filter_map(|i| {
            let m = i.model.as_ref()?;
            (m.structure == exact::STRUCTURE)
                .then(|| (i.label.clone(), (m.block_bytes, m.padding_bytes)))
        })
        .collect();
    if given.is_empty() {
        return Err(SweepError::NoStructure {
            run_dir: run_dir.to_path_buf(),
            why: "no instance of its sweep has a block structure from instruction counts \
                  (sweep it with --counter instructions)"
                .into(),
        });
    }
    Ok(given)
}

/// [`run`], with B and p of the instances in `given` taken as known rather than fitted.
pub fn run_with_structure(
    base: &RunRequest,
    mut lengths: SweepLengths,
    given: &GivenStructure,
    emit: &mut dyn FnMut(EngineEvent),
    cancel: &Arc<AtomicBool>,
) -> Result<SweepOutcome, SweepError> {
    let counted = base.counter.under_valgrind();
    if base.counter.counts() == crate::counter::Counter::Instructions {
        // Instructions have no per-call samples: a point is the count per call.
        lengths.statistic = PointStatistic::LoopMean;
    }
    let mut req = base.clone();
    req.lengths = lengths.coarse();
    req.origin = crate::journal::Origin::Sweep;
    let mut passed: BTreeMap<String, PathBuf> = BTreeMap::new();
    // Every pass of the sweep is a run of its own, which warns again of what it found of the
    // host (the clock notice, …): each warning is passed on once.
    let mut warned: BTreeSet<String> = BTreeSet::new();
    let mut forward = |ev: EngineEvent, passed: &mut BTreeMap<String, PathBuf>| {
        if let EngineEvent::Warning { message } = &ev
            && !warned.insert(message.clone())
        {
            return;
        }
        if let EngineEvent::KatFinished {
            label,
            status: KatStatus::Pass,
            log: Some(log),
            ..
        } = &ev
        {
            passed.insert(label.clone(), log.clone());
        }
        emit(ev);
    };
    let first = campaign::run(&req, &mut |ev| forward(ev, &mut passed), cancel)?;
    let mut failed = first.failed + first.kat_blocked;
    let mut cancelled = first.cancelled;
    if lengths.refine && !cancelled {
        // Exact counts bisect each jump (one length per boundary per round); a timed fit
        // measures every byte it cannot place in one round.
        let rounds = if counted { exact::MAX_ROUNDS } else { 1 };
        let mut work: Vec<Instance> = base.instances.clone();
        for _ in 0..rounds {
            let mut next = Vec::new();
            for inst in &work {
                let (points, ..) = points_of(&base.run_dir, inst, lengths.statistic);
                let extra = if counted {
                    exact::refinement(&points)
                } else if given.contains_key(&inst.label) {
                    Vec::new()
                } else {
                    let Ok(model) = fit::fit(&points) else {
                        continue;
                    };
                    let measured: BTreeSet<u64> = points.iter().map(|p| p.input_bytes).collect();
                    refinement(&model, &measured)
                };
                if extra.is_empty() || cancel.load(Ordering::Relaxed) {
                    continue;
                }
                let mut r = base.clone();
                r.instances = vec![inst.clone()];
                r.lengths = extra;
                r.origin = crate::journal::Origin::Sweep;
                // The KAT passed in the first pass: its log is carried over, not run again.
                r.kat_passed.extend(passed.clone());
                let o = campaign::run(&r, &mut |ev| forward(ev, &mut passed), cancel)?;
                failed += o.failed + o.kat_blocked;
                cancelled |= o.cancelled;
                next.push(inst.clone());
            }
            work = next;
            if work.is_empty() || cancelled {
                break;
            }
        }
    }
    let file = SweepFile {
        lengths,
        adaptive_precision: base.adaptive.map(|a| a.precision),
        instances: base
            .instances
            .iter()
            .map(|i| instance_sweep(&base.run_dir, i, lengths.statistic, given.get(&i.label)))
            .collect(),
    };
    write(&base.run_dir, &file)?;
    Ok(SweepOutcome {
        file,
        cancelled,
        failed,
    })
}

/// Fits again from the records a sweep left in `run_dir` (another statistic, a newer fit),
/// without measuring, and rewrites its `sweep.json`.
pub fn refit(run_dir: &Path, statistic: PointStatistic) -> Result<SweepFile, SweepError> {
    let campaign = crate::record::run_dir::read_campaign(run_dir)
        .map_err(|e| SweepError::Campaign(CampaignError::RunDir(e)))?;
    let mut lengths = read(run_dir).map_or_else(SweepLengths::default, |f| f.lengths);
    lengths.statistic = statistic;
    let file = SweepFile {
        lengths,
        adaptive_precision: campaign.cyclescope.adaptive.map(|a| a.precision),
        instances: campaign
            .cyclescope
            .instances
            .iter()
            .map(|i| instance_sweep(run_dir, i, statistic, None))
            .collect(),
    };
    write(run_dir, &file)?;
    Ok(file)
}

/// Byte lengths around the first block boundaries whose exact place the measured lengths
/// leave open: for the k-th boundary, every length between the last one the fit puts in k
/// blocks under the largest fitting threshold and the first under the smallest.
pub(crate) fn refinement(model: &CostModel, measured: &BTreeSet<u64>) -> Vec<u64> {
    let b = model.block_bytes;
    let mut thresholds: Vec<u64> = model.padding_alternatives.clone();
    thresholds.push(model.padding_bytes);
    let (lo, hi) = (
        thresholds.iter().copied().min().unwrap_or(0),
        thresholds.iter().copied().max().unwrap_or(0),
    );
    if lo == hi {
        return Vec::new();
    }
    let mut out = Vec::new();
    for k in 1..=REFINED_BOUNDARIES + 1 {
        // n + p > k·B first holds at n = k·B − p + 1.
        let first = (k * b + 1).saturating_sub(hi).max(1);
        let last = (k * b + 1).saturating_sub(lo);
        out.extend((first..=last).filter(|n| *n > 0 && !measured.contains(n)));
        if out.len() as u64 >= REFINED_BOUNDARIES * b {
            break;
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The points of `inst` in the run directory's complete records by `wanted` (the loop mean
/// when some record has no per-call samples), the statistic used and the counter it counts.
pub(crate) fn points_of(
    run_dir: &Path,
    inst: &Instance,
    wanted: PointStatistic,
) -> (Vec<SweepPoint>, PointStatistic, String) {
    let records: Vec<TimingRecord> = crate::record::run_dir::list_records(run_dir)
        .into_iter()
        .map(|(_, r)| r)
        .filter(|r| {
            r.status.is_complete() && r.candidate == inst.candidate && r.label == inst.label
        })
        .collect();
    let statistic = if records.iter().all(|r| wanted.of(r).is_some()) {
        wanted
    } else {
        PointStatistic::LoopMean
    };
    let counter = records
        .first()
        .and_then(|r| r.cyclescope.as_ref())
        .and_then(|a| {
            if statistic.counts_per_call() {
                a.per_call_source
            } else {
                a.cycle_source
            }
        })
        .map_or(String::new(), |s| s.name().to_string());
    let mut points: Vec<SweepPoint> = records
        .iter()
        .filter_map(|r| {
            Some(SweepPoint {
                input_bytes: r.input_bytes,
                cycles: statistic.of(r)?,
            })
        })
        .collect();
    points.sort_by_key(|p| p.input_bytes);
    (points, statistic, counter)
}

fn instance_sweep(
    run_dir: &Path,
    inst: &Instance,
    wanted: PointStatistic,
    given: Option<&(u64, u64)>,
) -> InstanceSweep {
    let (points, statistic, counter) = points_of(run_dir, inst, wanted);
    let counted = crate::counter::CycleSource::from_name(&counter).is_some_and(|c| c.is_exact());
    let fitted = match (counted, given) {
        (true, _) => exact::model(&points),
        (false, Some(&(b, p))) => fit::fit_given(&points, b, p, "given").map_err(|e| e.to_string()),
        (false, None) => fit::fit(&points).map_err(|e| e.to_string()),
    };
    let (model, unfitted) = match fitted {
        Ok(m) => (Some(m), None),
        Err(e) => (None, Some(e)),
    };
    InstanceSweep {
        candidate: inst.candidate.clone(),
        label: inst.label.clone(),
        statistic,
        counter,
        points,
        model,
        unfitted,
    }
}

/// Writes `sweep.json` atomically, under the run directory's lock.
fn write(run_dir: &Path, file: &SweepFile) -> Result<(), SweepError> {
    let path = run_dir.join(FILE_NAME);
    let err = |source| SweepError::Write {
        path: path.clone(),
        source,
    };
    let _dir = crate::record::RunDir::open_for_writing(run_dir)
        .map_err(|e| err(std::io::Error::other(e.to_string())))?;
    crate::record::pyjson::write_json_atomic(&path, file).map_err(err)
}

/// Reads `sweep.json` of a run directory (None when the run holds no sweep).
pub fn read(run_dir: &Path) -> Option<SweepFile> {
    let bytes = crate::record::read::read_inside(run_dir, Path::new(FILE_NAME), 64 << 20).ok()?;
    serde_json::from_slice(&bytes).ok()
}
