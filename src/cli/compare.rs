//! `cyclescope compare RUN_A RUN_B`: job by job, mean cycles of two runs (or datasets), their
//! ratio and whether the difference exceeds both runs' confidence intervals. Exit 0.
//! `compare --live A B` measures two instances now, interleaved (`live`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::report::Dataset;
use crate::report::compare::{compare, table};

mod live;

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline run directory (A); with --live, the baseline instance's label.
    pub a: PathBuf,
    /// The run to compare with it (B); with --live, the other instance's label.
    pub b: PathBuf,
    /// Measure A and B now, trial by trial alternately, and report B/A with its 95 % CI.
    #[arg(long)]
    pub live: bool,
    #[command(flatten)]
    pub live_opts: live::LiveArgs,
}

pub fn run(config: Option<&std::path::Path>, args: &CompareArgs) -> anyhow::Result<ExitCode> {
    if args.live {
        return live::run(config, args);
    }
    if args.live_opts != live::LiveArgs::default() {
        anyhow::bail!("those options belong to `compare --live`; comparing two runs takes none");
    }
    // The same reading as the report's: a folder that is not a run is refused, and a record
    // that cannot be read is named, never taken for a job "only in A".
    let load = |dir: &PathBuf| -> anyhow::Result<Vec<crate::record::TimingRecord>> {
        Ok(Dataset::open(dir)?
            .into_records()
            .into_iter()
            .map(|(_, r)| r)
            .collect())
    };
    let (a, b) = (load(&args.a)?, load(&args.b)?);
    let rows = compare(&a, &b);
    if rows.is_empty() {
        anyhow::bail!("neither run has a complete record");
    }
    outln!("A = {}\nB = {}\n", args.a.display(), args.b.display());
    out!("{}", table(&rows));
    Ok(ExitCode::SUCCESS)
}
