//! `cyclescope completions SHELL` and `cyclescope man [--out DIR]`: shell completion scripts
//! and manual pages generated from the clap definitions, so they cannot fall behind the
//! options. Prints or writes text only; runs nothing else.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, CommandFactory};

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for (bash, zsh, fish, elvish, powershell).
    #[arg(value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write one page per command (cyclescope.1, cyclescope-run.1, …) into DIR instead of
    /// printing the main page.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

pub fn completions(args: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut cmd = super::Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "cyclescope", &mut script);
    out!("{}", String::from_utf8_lossy(&script));
    Ok(ExitCode::SUCCESS)
}

pub fn man(args: &ManArgs) -> anyhow::Result<ExitCode> {
    let cmd = super::Cli::command();
    match &args.out {
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            clap_mangen::generate_to(cmd, dir)
                .with_context(|| format!("writing manual pages into {}", dir.display()))?;
            eprintln!(
                "cyclescope: manual pages written to {}",
                crate::sanitize::path_as_given(dir)
            );
        }
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut page)?;
            out!("{}", String::from_utf8_lossy(&page));
        }
    }
    Ok(ExitCode::SUCCESS)
}
