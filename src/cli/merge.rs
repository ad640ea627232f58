//! `cyclescope merge RUN… --out DATASET`: the shards of a campaign (run directories from one
//! machine or several) joined into one dataset for `validate`, `report` and `compare`.
//! Refusals name the runs and what differs; nothing is written then.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::record::merge::merge;

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The run directories to join (e.g. the shards 1/N … N/N).
    #[arg(required = true, value_name = "RUN")]
    pub runs: Vec<PathBuf>,
    /// The dataset folder to create.
    #[arg(long, value_name = "DATASET")]
    pub out: PathBuf,
    /// Where two runs measured the same job (or hold different KAT evidence for an
    /// instance), keep this run's.
    #[arg(long, value_name = "RUN")]
    pub prefer: Option<PathBuf>,
    /// The dataset's system id (default: the first run's).
    #[arg(long, value_name = "ID")]
    pub system: Option<String>,
}

pub fn run(args: &MergeArgs) -> anyhow::Result<ExitCode> {
    let m = merge(
        &args.runs,
        &args.out,
        args.prefer.as_deref(),
        args.system.as_deref(),
    )?;
    outln!(
        "merged {} run(s) into {}: {} record(s), {} KAT log(s){}",
        args.runs.len(),
        crate::sanitize::terminal_path(&args.out),
        m.records,
        m.kat_logs,
        if m.duplicates > 0 {
            format!(", {} job(s) found twice (kept once)", m.duplicates)
        } else {
            String::new()
        }
    );
    Ok(ExitCode::SUCCESS)
}
