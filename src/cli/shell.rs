//! `cyclescope completions SHELL` and `cyclescope man [--out DIR]`: shell completion scripts
//! and manual pages generated from the clap definitions, so they cannot fall behind the
//! options. Prints or writes text only; runs nothing else.

pub(crate) mod complete;
mod manual;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, CommandFactory};
use clap_complete::env::EnvCompleter;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for (bash, zsh, fish, elvish, powershell).
    #[arg(value_name = "SHELL")]
    pub shell: clap_complete::Shell,
    /// A script that completes commands and options only, without calling cyclescope back
    /// (no labels, no run folders).
    #[arg(long = "static")]
    pub static_only: bool,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write one page per command (cyclescope.1, cyclescope-run.1, …) into DIR instead of
    /// printing the main page.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

pub fn completions(args: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut script = Vec::new();
    if args.static_only {
        let mut cmd = super::Cli::command();
        clap_complete::generate(args.shell, &mut cmd, "cyclescope", &mut script);
    } else {
        // The script calls this very program back with the words typed so far.
        let exe = std::env::current_exe().context("finding this program's path")?;
        let exe = exe.to_string_lossy();
        registration(args.shell)
            .write_registration(complete::VAR, "cyclescope", "cyclescope", &exe, &mut script)
            .context("writing the completion script")?;
    }
    out!("{}", String::from_utf8_lossy(&script));
    Ok(ExitCode::SUCCESS)
}

/// The dynamic completer of `shell`.
fn registration(shell: clap_complete::Shell) -> &'static dyn EnvCompleter {
    use clap_complete::env::{Bash, Elvish, Fish, Powershell, Zsh};
    match shell {
        clap_complete::Shell::Bash => &Bash,
        clap_complete::Shell::Elvish => &Elvish,
        clap_complete::Shell::Fish => &Fish,
        clap_complete::Shell::PowerShell => &Powershell,
        clap_complete::Shell::Zsh => &Zsh,
        _ => &Bash,
    }
}

pub fn man(args: &ManArgs) -> anyhow::Result<ExitCode> {
    let mut cmd = super::Cli::command().disable_help_subcommand(true);
    cmd.build();
    let pages = manual::pages(&cmd).context("rendering the manual pages")?;
    match &args.out {
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            for (name, text) in &pages {
                let path = dir.join(name);
                std::fs::write(&path, text)
                    .with_context(|| format!("writing {}", path.display()))?;
            }
            eprintln!(
                "cyclescope: manual pages written to {}",
                crate::sanitize::path_as_given(dir)
            );
        }
        None => {
            let (_, main) = pages.first().context("no manual page")?;
            out!("{}", String::from_utf8_lossy(main));
        }
    }
    Ok(ExitCode::SUCCESS)
}
