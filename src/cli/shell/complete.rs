//! Dynamic shell completion (clap_complete's `CompleteEnv`): the shell calls cyclescope back
//! with the words typed so far, and cyclescope answers from the clap definitions plus what it
//! knows at that moment: the catalog's labels, and the run folders under the one being typed.
//! The completers read files only; they never load a library or start a worker.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use clap::{Arg, Command, CommandFactory};
use clap_complete::engine::{ArgValueCompleter, CompletionCandidate};

/// The variable that turns a run of cyclescope into a completion request (its own name, so
/// that a `COMPLETE` some other tool sets changes nothing here).
pub(crate) const VAR: &str = "CYCLESCOPE_COMPLETE";

/// Answers a completion request and exits when the shell made one; returns otherwise.
pub(crate) fn answer_if_asked() {
    clap_complete::CompleteEnv::with_factory(command)
        .var(VAR)
        .complete();
}

/// The command line with its completers attached: labels wherever an argument takes
/// `LABEL`s, run folders where a command reads runs.
pub(crate) fn command() -> Command {
    attach(super::super::Cli::command(), 0)
}

/// Commands whose positional arguments are run folders (or datasets of runs).
const READS_RUNS: [&str; 4] = ["watch", "validate", "report", "compare"];

/// `cmd` at `depth` (0: cyclescope itself, 1: its commands) with its completers and its
/// subcommands'.
fn attach(cmd: Command, depth: usize) -> Command {
    let reads_runs = depth == 1 && READS_RUNS.contains(&cmd.get_name());
    let ids: Vec<(String, Completer)> = cmd
        .get_arguments()
        .filter_map(|a| completer_for(a, reads_runs).map(|c| (a.get_id().to_string(), c)))
        .collect();
    let mut cmd = cmd;
    for (id, completer) in ids {
        cmd = cmd.mut_arg(id, |a| match completer {
            Completer::Labels => a.add(ArgValueCompleter::new(labels)),
            Completer::Runs => a.add(ArgValueCompleter::new(run_folders)),
        });
    }
    let subs: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for sub in subs {
        cmd = cmd.mut_subcommand(sub, |s| attach(s, depth + 1));
    }
    cmd
}

#[derive(Clone, Copy)]
enum Completer {
    Labels,
    Runs,
}

fn completer_for(a: &Arg, reads_runs: bool) -> Option<Completer> {
    let value = a
        .get_value_names()
        .and_then(|v| v.first().map(|s| s.as_str()));
    match value {
        Some("LABEL") if a.is_positional() => Some(Completer::Labels),
        _ if reads_runs && a.is_positional() => Some(Completer::Runs),
        _ => None,
    }
}

/// The labels of the catalog a command would run on without `--config` (./config.toml or the
/// built-in settings, with the bundled baselines), that start with what was typed.
fn labels(current: &OsStr) -> Vec<CompletionCandidate> {
    let Some(typed) = current.to_str() else {
        return Vec::new();
    };
    let Ok(catalog) = crate::cli::select::load_catalog(None) else {
        return Vec::new();
    };
    catalog
        .instances()
        .filter(|i| i.label.starts_with(typed))
        .map(|i| {
            CompletionCandidate::new(&i.label).help(Some(format!("{} bits", i.digest_bits).into()))
        })
        .collect()
}

/// Folders beside the one being typed: runs (a `campaign.json`) first, marked, then the
/// others with a trailing `/` to descend into.
fn run_folders(current: &OsStr) -> Vec<CompletionCandidate> {
    let typed = Path::new(current);
    let text = current.to_string_lossy();
    let (dir, prefix) = if text.is_empty() || text.ends_with('/') {
        (typed.to_path_buf(), String::new())
    } else {
        (
            typed.parent().map(Path::to_path_buf).unwrap_or_default(),
            typed
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default(),
        )
    };
    let read_from = if dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        dir.clone()
    };
    let Ok(entries) = std::fs::read_dir(&read_from) else {
        return Vec::new();
    };
    let mut found: Vec<(bool, PathBuf)> = entries
        .flatten()
        .filter(|e| e.path().is_dir())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.') || prefix.starts_with('.'))
        .map(|e| {
            let path = dir.join(e.file_name());
            (e.path().join("campaign.json").is_file(), path)
        })
        .collect();
    found.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    found
        .into_iter()
        .map(|(run, path)| {
            let shown = path.to_string_lossy().into_owned();
            if run {
                CompletionCandidate::new(shown).help(Some("run".into()))
            } else {
                CompletionCandidate::new(format!("{shown}/"))
            }
        })
        .collect()
}
