//! `cyclescope hash`: one digest, for ad-hoc checks. The call runs in a worker process.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;

use super::InstanceArgs;
use crate::measure::proof::reference;

#[derive(Debug, Args)]
pub struct HashArgs {
    #[command(flatten)]
    pub select: InstanceArgs,
    /// The message in hex ('' is the empty message).
    #[arg(long, conflicts_with = "file", value_name = "HEX")]
    pub hex: Option<String>,
    /// The message from a file.
    #[arg(long, value_name = "PATH")]
    pub file: Option<PathBuf>,
    /// Message length in bits (default: all bytes); allows a message ending mid-byte.
    #[arg(long)]
    pub bits: Option<u64>,
}

pub fn run(config: Option<&Path>, args: &HashArgs) -> anyhow::Result<ExitCode> {
    let (_, instances) = args.select.resolve(config, false)?;
    let [inst] = instances.as_slice() else {
        bail!("name exactly one instance to hash with");
    };
    let msg = match (&args.hex, &args.file) {
        (Some(h), None) => hex::decode(h.trim()).context("--hex is not valid hex")?,
        (None, Some(f)) => std::fs::read(f).with_context(|| format!("reading {}", f.display()))?,
        _ => bail!("give the message with --hex HEX or --file PATH"),
    };
    let bits = args.bits.unwrap_or(8 * msg.len() as u64);
    if bits > 8 * msg.len() as u64 {
        bail!(
            "--bits {bits} is longer than the message ({} bits)",
            8 * msg.len()
        );
    }
    let digest = reference::hash_once(inst, &msg, bits)?;
    outln!("{}", hex::encode(digest));
    Ok(ExitCode::SUCCESS)
}
