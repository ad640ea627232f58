//! Stopping on a signal: SIGINT, SIGTERM and SIGHUP set a flag that the run, the KAT jobs and
//! the workbench poll, so workers are killed (their whole process group), records and the
//! journal's cancelled state are written, and `--resume` can continue. Signals arriving within
//! [`BURST_WINDOW`] of the first are one request: `timeout` sends TERM to the process and then
//! to its process group, a terminal's hang-up comes with a TERM, and such a burst must cancel
//! cleanly, not end the process half-way. A signal later than that ends the process at once
//! (its workers die with it through `PR_SET_PDEATHSIG`). This module never kills anything
//! itself.
//!
//! The signals are read by a small thread of their own (signal-hook's iterator: its handler
//! only writes to a pipe), so deciding "same burst or a second request" runs outside the
//! signal handler, where taking the time is allowed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// The exit status of a process ended by a second signal (128 + SIGINT, as shells report it).
const SECOND_SIGNAL_EXIT: i32 = 130;

/// Signals within this time of the first one are the same request (one cancel); a signal
/// later than that is a second request and ends the process at once. `timeout`'s two TERMs
/// arrive microseconds apart; a person pressing Ctrl-C again waits longer than this.
pub(crate) const BURST_WINDOW: Duration = Duration::from_millis(500);

/// What one signal asks for, given when the first one came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Request {
    /// The first signal: stop cleanly.
    Cancel,
    /// Part of the first signal's burst: nothing more to do.
    SameBurst,
    /// A second request, after the burst: end the process now.
    ExitNow,
}

fn classify(first: Option<Instant>, now: Instant) -> Request {
    match first {
        None => Request::Cancel,
        Some(t) if now.saturating_duration_since(t) < BURST_WINDOW => Request::SameBurst,
        Some(_) => Request::ExitNow,
    }
}

/// Makes SIGINT, SIGTERM and SIGHUP set `flag`; a burst of them is one request, a signal
/// [`BURST_WINDOW`] or more after the first exits at once with status 130.
pub fn stop_on_signals(flag: &Arc<AtomicBool>) -> std::io::Result<()> {
    let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    let flag = flag.clone();
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            let mut first = None;
            for _ in signals.forever() {
                let now = Instant::now();
                match classify(first, now) {
                    Request::Cancel => {
                        first = Some(now);
                        flag.store(true, Ordering::SeqCst);
                    }
                    Request::SameBurst => {}
                    // `_exit`: no destructor or buffered writer may hold the process up now.
                    Request::ExitNow => signal_hook::low_level::exit(SECOND_SIGNAL_EXIT),
                }
            }
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_is_one_cancel_and_a_later_signal_exits() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let cases = [
            (None, at(0), Request::Cancel),
            (Some(t0), at(0), Request::SameBurst),
            (Some(t0), at(5), Request::SameBurst),
            (Some(t0), at(499), Request::SameBurst),
            (Some(t0), at(500), Request::ExitNow),
            (Some(t0), at(3000), Request::ExitNow),
        ];
        for (first, now, want) in cases {
            assert_eq!(classify(first, now), want, "{first:?} → {now:?}");
        }
    }
}
