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
    // The CPUs this process was given, read before any thread steps off a measurement CPU.
    cpu::allowed();
    cli::main()
}
