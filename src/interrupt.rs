//! Stopping on a signal: SIGINT, SIGTERM and SIGHUP set a flag that the run, the KAT jobs and
//! the workbench poll, so workers are killed (their whole process group), records and the
//! journal's cancelled state are written, and `--resume` can continue. A second signal while
//! the first is being handled ends the process at once (its workers die with it through
//! `PR_SET_PDEATHSIG`). This module never kills anything itself.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

/// The exit status of a process ended by a second signal (128 + SIGINT, as shells report it).
const SECOND_SIGNAL_EXIT: i32 = 130;

/// Makes SIGINT, SIGTERM and SIGHUP set `flag` (a second one while it is set exits at once).
pub fn stop_on_signals(flag: &Arc<AtomicBool>) -> std::io::Result<()> {
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        // Registered first, so it sees the flag as it was before this signal set it.
        signal_hook::flag::register_conditional_shutdown(sig, SECOND_SIGNAL_EXIT, flag.clone())?;
        signal_hook::flag::register(sig, flag.clone())?;
    }
    Ok(())
}
