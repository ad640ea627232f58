//! `cyclescope supercop-checksum`: SUPERCOP's `checksumsmall` and `checksumbig` of each
//! instance, computed in a worker process, and — given eBASH's published values — whether they
//! match. It renders what `supercop` computes; the procedure is in docs/supercop.md.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;

use super::InstanceArgs;
use crate::cli::worker_cmd;

#[derive(Debug, Args)]
pub struct SupercopArgs {
    #[command(flatten)]
    pub select: InstanceArgs,
    /// eBASH's published checksumsmall (64 hex digits) to compare with.
    #[arg(long, value_name = "HEX")]
    pub expect_small: Option<String>,
    /// eBASH's published checksumbig (64 hex digits) to compare with.
    #[arg(long, value_name = "HEX")]
    pub expect_big: Option<String>,
}

pub fn run(config: Option<&Path>, args: &SupercopArgs) -> anyhow::Result<ExitCode> {
    let (_, instances) = args.select.resolve(config, false)?;
    let expected = |e: &Option<String>| e.as_ref().map(|h| h.trim().to_ascii_lowercase());
    let (want_small, want_big) = (expected(&args.expect_small), expected(&args.expect_big));
    let mut worst = ExitCode::SUCCESS;
    for inst in &instances {
        match worker_cmd::supercop_checksums(inst) {
            Ok((small, big)) => {
                let verdict = |got: &str, want: &Option<String>| match want {
                    None => String::new(),
                    Some(w) if w == got => "  (matches)".into(),
                    Some(w) => format!("  (MISMATCH: expected {w})"),
                };
                let bad = want_small.as_ref().is_some_and(|w| *w != small)
                    || want_big.as_ref().is_some_and(|w| *w != big);
                outln!(
                    "{} [{}] checksumsmall {small}{}",
                    inst.label,
                    inst.abi.name(),
                    verdict(&small, &want_small)
                );
                outln!(
                    "{} [{}] checksumbig   {big}{}",
                    inst.label,
                    inst.abi.name(),
                    verdict(&big, &want_big)
                );
                if bad {
                    worst = ExitCode::from(1);
                }
            }
            Err(e) => {
                outln!("{} [{}] FAILED: {e}", inst.label, inst.abi.name());
                worst = ExitCode::from(1);
            }
        }
    }
    Ok(worst)
}
