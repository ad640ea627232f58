//! A small companion binary for measurement workers: the same trial code as
//! `cyclescope worker measure`, without the CLI and TUI, so the memory a trial process adds
//! to the candidate's (baseline and peak RSS, which the report publishes) stays close to the
//! harness's C driver. Arguments as `cyclescope worker measure …`.

use std::process::ExitCode;

fn main() -> ExitCode {
    cyclescope_core::measure::trial_args::worker_main(std::env::args().skip(1).collect())
}
