//! The `cyclescope` binary: the headless CLI (`cli`) and the terminal workbench (`tui`), two thin
//! frontends over the engine in `cyclescope-core`.

mod cli;
mod interrupt;
mod tui;

// The engine's modules under their short names, so both frontends read `crate::catalog::…`.
use cyclescope_core::{
    baseline, build, campaign, catalog, conform, counter, cpu, format, host, journal, kat, measure,
    owned, plugin, profile, record, report, sanitize, supercop, sweep, tune, vocabulary, worker,
};

use std::process::ExitCode;

fn main() -> ExitCode {
    // Not dumpable: no core file of the engine, and its /proc/PID/mem, environ and the like are
    // closed to processes of the same uid (the workers and whatever a candidate starts).
    // Failing is no reason not to run: the workers' own jail still holds.
    let _ = nix::sys::prctl::set_dumpable(false);
    // Started beside a shielded CPU (`tune --apply`): back to the root cpuset first, so the
    // CPUs read next include the measurement CPU again.
    if let Err(e) = tune::join_measuring_set(&host::HostRoot::new("/")) {
        eprintln!("cyclescope: {e}");
    }
    // The CPUs this process was given, read before any thread steps off a measurement CPU.
    cpu::allowed();
    cli::main()
}
