//! `cyclescope compare RUN_A RUN_B`: job by job, mean cycles of two runs (or datasets), their
//! ratio and whether the difference exceeds both runs' confidence intervals. Exit 0.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::record::run_dir::list_records;
use crate::report::compare::{compare, table};

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline run directory (A).
    pub a: PathBuf,
    /// The run to compare with it (B).
    pub b: PathBuf,
}

pub fn run(args: &CompareArgs) -> anyhow::Result<ExitCode> {
    let load = |dir: &PathBuf| -> anyhow::Result<Vec<crate::record::TimingRecord>> {
        if !dir.join("records").is_dir() {
            anyhow::bail!(
                "{} has no records/ folder (not a run directory)",
                dir.display()
            );
        }
        Ok(list_records(dir).into_iter().map(|(_, r)| r).collect())
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
