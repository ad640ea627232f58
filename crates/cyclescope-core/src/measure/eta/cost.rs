//! A call's wall seconds in the trials of a loaded run, learnt from the ended jobs of the same
//! instance, for the ETA of the jobs left of that instance. A plan is sized from one cold
//! calibration call, and the ratio of that call to what the calls take in the trials is not the
//! same at every length: a short input's cold call (32 to 128 B) takes 1 to 13 times its
//! loaded call, a 4 KiB or longer input's about half. A pace learnt from plans then runs low
//! while only short jobs have ended (1 to 7 against the long jobs' 7 to 9), and the ETA at a
//! tenth of the run fell 18 to 41 % short on three loaded runs. What the ended jobs took per
//! call, against their input's length, says what the longer inputs will take without passing
//! through the cold call: a hash's call costs a fixed time plus one per byte. The line is
//! only trusted a little past the longest length seen (`COST_REACH`): from inputs of 1 KiB or
//! less, whose fixed costs weigh, it says little of 64 KiB. The plan still decides how many
//! calls run; only their seconds come from here. Pure arithmetic over what the views hold.

use super::{JobTime, trials_s};

/// How far past its instance's longest ended input a job's length may be for the line through
/// the ended jobs' costs to say what its calls take: the next length or two of the default
/// ladder (1 KiB → 4 KiB). In replay of six loaded runs, 4 left the mean error over the run
/// (at every twentieth of it) 14 %, against 19 % for the plans at the recent pace; 2 or 3,
/// 17 %; 8 or 16 about 14 % too, but 22 to 29 % at a quarter of the run, as short inputs'
/// costs stretched to long ones overshoot.
pub const COST_REACH: f64 = 4.0;

/// An instance's cost per call against its input's length, fitted over its ended jobs.
#[derive(Debug, Clone, Copy, PartialEq)]
struct CostLine {
    /// Seconds per call at 0 bytes, and per byte.
    fixed_s: f64,
    per_byte_s: f64,
    /// The cheapest call seen: the line is not taken below it.
    least_s: f64,
    /// The longest input among them.
    longest: u64,
}

/// The wall seconds a call of `job` is expected to take in its trials, from the ended jobs of
/// its instance: a least-squares line of their trials' seconds per call over their input
/// lengths, at `job`'s length, no lower than the cheapest call seen. None where the job's call
/// is unknown, its instance has ended at fewer than two lengths, the line falls with the
/// length (noise, not a hash), or the job's input is more than `COST_REACH` times the longest
/// ended.
pub fn call_cost_s(job: &JobTime, jobs: &[JobTime]) -> Option<f64> {
    let call = job.call?;
    let line = cost_line(call.instance, jobs)?;
    if call.input_bytes as f64 > COST_REACH * line.longest as f64 {
        return None;
    }
    Some((line.fixed_s + line.per_byte_s * call.input_bytes as f64).max(line.least_s))
}

/// How many jobs not ended have their seconds left from their instance's cost per call
/// (`call_cost_s`) rather than from their plans at the pace.
pub fn costed_jobs(jobs: &[JobTime]) -> usize {
    jobs.iter()
        .filter(|j| j.estimated_s.is_some() && !ended(j))
        .filter(|j| call_cost_s(j, jobs).is_some())
        .count()
}

fn ended(j: &JobTime) -> bool {
    j.fraction_done >= 1.0 && j.spent_s.is_some()
}

fn cost_line(instance: u64, jobs: &[JobTime]) -> Option<CostLine> {
    let points: Vec<(f64, f64)> = jobs
        .iter()
        .filter(|j| ended(j))
        .filter_map(|j| {
            let c = j
                .call
                .filter(|c| c.instance == instance && c.timed_calls > 0.0)?;
            Some((c.input_bytes as f64, trials_s(j)? / c.timed_calls))
        })
        .collect();
    let n = points.len() as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let spread: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    // One length (or none) draws no line.
    if points.is_empty() || spread <= 0.0 {
        return None;
    }
    let per_byte_s = points
        .iter()
        .map(|p| (p.0 - mean_x) * (p.1 - mean_y))
        .sum::<f64>()
        / spread;
    if per_byte_s < 0.0 {
        return None;
    }
    Some(CostLine {
        fixed_s: mean_y - per_byte_s * mean_x,
        per_byte_s,
        least_s: points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min),
        longest: points.iter().map(|p| p.0 as u64).max()?,
    })
}
