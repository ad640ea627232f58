//! How a measurement worker ended, in the campaign's words: its exit seen from outside, the
//! faults it reported and the engine's own refusals become one `JobOutcome`, and the exit
//! one code for the process record.

use crate::vocabulary::{FailureKind, JobFailure, JobOutcome};
use crate::worker::Exit;
use crate::worker::Tampering;

/// The outcome of a worker that ended with `exit`: the engine's refusal first, then a report
/// that the outside view contradicts (`forged`), then tampering, the worker's own fault, and
/// last how the process ended.
pub(super) fn classify(
    exit: &Exit,
    fault: Option<JobFailure>,
    done_peak: Option<u64>,
    refused: Option<JobFailure>,
    forged: Option<Tampering>,
    note: &str,
) -> JobOutcome {
    match (exit, fault, done_peak, refused) {
        (.., Some(r)) => JobOutcome::Failed(r),
        _ if forged.is_some() => JobOutcome::Failed(JobFailure::new(
            FailureKind::Tampered,
            forged.map(|t| t.0).unwrap_or_default(),
        )),
        (Exit::Tampered(why), _, _, None) => {
            JobOutcome::Failed(JobFailure::new(FailureKind::Tampered, why.clone()))
        }
        // Its figures are not where the record says they are: never a figure.
        (Exit::Moved(why), _, _, None) => JobOutcome::Failed(JobFailure::new(
            FailureKind::Tampered,
            format!("the candidate left its place: {why}"),
        )),
        (_, Some(f), _, None) => JobOutcome::Failed(f),
        (Exit::Code(0), None, Some(_), None) => JobOutcome::Complete,
        (Exit::Signal { name, .. }, None, _, None) => JobOutcome::Failed(JobFailure::new(
            FailureKind::Crash,
            format!("worker killed by {name}{note}"),
        )),
        (Exit::Stopped(stopped), None, _, None) => JobOutcome::Failed(JobFailure::new(
            FailureKind::Crash,
            format!("{stopped}; worker killed"),
        )),
        (Exit::TimedOut(d), None, _, None) => JobOutcome::Failed(JobFailure::new(
            FailureKind::Timeout,
            format!(
                "no result after {:.1} s; worker killed{note}",
                d.as_secs_f64()
            ),
        )),
        (Exit::Cancelled, None, _, None) => JobOutcome::Cancelled,
        (Exit::Code(c), None, _, None) => JobOutcome::Failed(JobFailure::new(
            FailureKind::Crash,
            format!("worker exited with status {c} before finishing{note}"),
        )),
    }
}

/// The exit code the process record keeps: the code, minus the signal's number, or -9 for a
/// worker the engine killed or refused.
pub(super) fn exit_code(exit: &Exit) -> i32 {
    match exit {
        Exit::Code(c) => *c,
        Exit::Signal { number, .. } => -number,
        Exit::TimedOut(_)
        | Exit::Stopped(_)
        | Exit::Cancelled
        | Exit::Tampered(_)
        | Exit::Moved(_) => -9,
    }
}

/// The last `n` bytes of `s` at most, cut at a character boundary.
pub(super) fn tail(s: &str, n: usize) -> String {
    if s.len() <= n {
        return s.to_string();
    }
    let mut start = s.len() - n;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    s[start..].to_string()
}
