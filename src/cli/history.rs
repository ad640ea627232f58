//! `cyclescope history LABEL`: the tuning journal read back — per length, one row per build
//! with its figure and interval, flags, date and the verdict against the build before it (the
//! rule of `compare`), as Markdown, JSON or CSV. `history --rebuild DIR…` indexes run folders
//! (or folders of runs) into the journal again: they are the evidence, the journal their index.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;

use super::arg_value;
use super::output::{Format, OutputFormat};
use crate::journal::{self, Journal, JournalTarget};

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The instance whose builds to show (e.g. FIXH-256).
    #[arg(value_name = "LABEL", required_unless_present = "rebuild")]
    pub label: Option<String>,
    /// Only this message length, bytes (default: every length the journal holds).
    #[arg(long, value_name = "BYTES", value_parser = arg_value::length)]
    pub length: Option<u64>,
    /// Index these run folders, or folders of runs, into the journal (again).
    #[arg(long, value_name = "DIR", num_args = 1.., conflicts_with_all = ["label", "length"])]
    pub rebuild: Vec<PathBuf>,
    #[command(flatten)]
    pub output: OutputFormat,
}

pub fn run(config: Option<&std::path::Path>, args: &HistoryArgs) -> anyhow::Result<ExitCode> {
    let settings = super::select::load_catalog(config)?.settings;
    let path = match JournalTarget::of_setting(settings.journal.as_deref()) {
        JournalTarget::At(p) => p,
        JournalTarget::Off => bail!(
            "the tuning journal is off ([settings] journal = \"off\"); run folders still hold every figure"
        ),
        JournalTarget::Unavailable(why) => bail!("{why}"),
    };
    if !args.rebuild.is_empty() {
        return rebuild(&path, &args.rebuild);
    }
    let label = args.label.as_deref().unwrap_or_default();
    if !path.exists() {
        bail!(
            "no tuning journal yet at {} (runs, the workbench, compare --live and sweep write it; \
             `cyclescope history --rebuild DIR…` indexes run folders measured before)",
            crate::sanitize::terminal_path(&path)
        );
    }
    let j = Journal::open(&path)?;
    let entries = j.entries(label, args.length)?;
    if entries.is_empty() {
        let near = j
            .nearest_label(label)?
            .map(|k| format!(" (did you mean {}?)", crate::sanitize::terminal(&k)))
            .unwrap_or_default();
        let at = args
            .length
            .map(|l| format!(" at {}", crate::format::size(l)))
            .unwrap_or_default();
        bail!(
            "the journal {} holds no measurement of {}{at}{near}",
            crate::sanitize::terminal_path(&path),
            crate::sanitize::terminal(label)
        );
    }
    let rows = journal::history(&entries);
    match args.output.format() {
        Format::Markdown => out!("{}", journal::table(&rows)),
        Format::Json => outln!(
            "{}",
            serde_json::to_string_pretty(&journal::rows_json(&rows)).context("JSON")?
        ),
        Format::Csv => out!("{}", journal::rows_csv(&rows)),
    }
    Ok(ExitCode::SUCCESS)
}

fn rebuild(path: &std::path::Path, dirs: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let j = Journal::open(path)?;
    let s = journal::rebuild(&j, dirs)?;
    for d in &s.not_runs {
        eprintln!(
            "{}: no run here (no campaign.json, nor runs inside)",
            crate::sanitize::terminal_path(d)
        );
    }
    eprintln!(
        "indexed {} measurements of {} runs into {}",
        s.indexed,
        s.runs,
        crate::sanitize::terminal_path(path)
    );
    Ok(if s.not_runs.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
