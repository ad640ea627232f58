//! How a KAT job ended once its checks' worker ended: the verdict the messages gave, a check
//! the worker died in, or the worker's end itself, named.

use super::{KatError, check};
use crate::catalog::Instance;
use crate::kat::KatStatus;
use crate::kat::generate::KatFile;
use crate::worker::{self, Exit};

/// The verdict of a job whose checks' worker ended with `exit`: a worker that ended inside a
/// conformance check (its KAT files all written) fails that check, the files keeping their
/// verdict; else how it ended, named.
pub(super) fn ended(
    exit: &Exit,
    outcome: &worker::Outcome,
    state: &mut check::JobState,
    files: &[KatFile],
    inst: &Instance,
) -> Result<(KatStatus, String), KatError> {
    let verdict = state.verdict().or_else(|| match exit {
        Exit::Signal { name, .. } => state.died_in_check(&format!("signal={name}")),
        Exit::Stopped(stopped) => state.died_in_check(&stopped.to_string()),
        Exit::TimedOut(d) => {
            state.died_in_check(&format!("timeout after {:.0} s", d.as_secs_f64()))
        }
        Exit::Code(rc) => state.died_in_check(&format!("exit={rc}")),
        _ => None,
    });
    Ok(match (exit, verdict) {
        (Exit::Tampered(why), _) => (KatStatus::Tampered, format!("{why}{}", state.during(files))),
        (Exit::Moved(why), _) => (
            KatStatus::Tampered,
            format!("the candidate left its place: {why}{}", state.during(files)),
        ),
        (_, Some(v)) => v,
        (Exit::Cancelled, None) => return Err(KatError::Cancelled(inst.label.clone())),
        (Exit::Signal { name, .. }, None) => (
            KatStatus::Crash,
            format!(
                "signal={name}{}{}",
                state.during(files),
                outcome.death_note()
            ),
        ),
        // A stopped worker would only wait out the job's limit: it is a crash, named.
        (Exit::Stopped(stopped), None) => (
            KatStatus::Crash,
            format!("{stopped}{}", state.during(files)),
        ),
        (Exit::TimedOut(d), None) => (
            KatStatus::Timeout,
            format!(
                "timeout after {:.0} s{}",
                d.as_secs_f64(),
                state.during(files)
            ),
        ),
        (Exit::Code(rc), None) => (
            KatStatus::Crash,
            format!("exit={rc}{}{}", state.during(files), outcome.limit_note),
        ),
    })
}
