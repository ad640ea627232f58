//! `cyclescope validate RUN_DIR`: the harness's validation rules over a run directory or a
//! published dataset. Exit 0 when every rule holds, 1 otherwise.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::record::validate::validate;

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// A run directory (or a published dataset such as performance/data/arm_1).
    pub run_dir: PathBuf,
}

pub fn run(args: &ValidateArgs) -> anyhow::Result<ExitCode> {
    let v = validate(&args.run_dir)?;
    for f in &v.findings {
        outln!("FAIL {}", crate::sanitize::terminal(&f.to_string()));
    }
    outln!(
        "{} record(s) ({} complete), {} KAT log(s), {} file(s) scanned for absolute paths: {}",
        v.records,
        v.complete,
        v.kat_logs,
        v.files_scanned,
        if v.ok() {
            "valid".to_string()
        } else {
            format!("{} problem(s)", v.findings.len())
        }
    );
    Ok(if v.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
