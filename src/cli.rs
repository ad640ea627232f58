//! The command line: clap definitions and dispatch. No subcommand opens the TUI; every
//! subcommand is a thin headless frontend over the engine modules. `anyhow` lives here only.

/// `println!` for command output: a closed pipe (`cyclescope list | head`) ends the program
/// quietly instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cli::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` counterpart of `outln!`.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::write_stdout(format_args!($($arg)*))
    };
}

pub(crate) mod arg_value;
pub(crate) mod build;
mod check;
mod compare;
mod hash;
mod history;
mod kat;
pub(crate) mod kat_refs;
mod lanes;
mod list;
mod merge;
mod output;
mod profile;
mod report;
mod run;
mod screenshots;
pub(crate) mod select;
mod shell;
mod slurm;
mod supercop_cmd;
mod sweep;
mod tui_cmd;
pub(crate) mod tune;
mod validate;
mod watch;
pub(crate) mod worker_cmd;

pub use select::InstanceArgs;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// `cyclescope --version`: the version, and which checkout, profile and target built it.
const BUILD: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("CYCLESCOPE_BUILD_COMMIT"),
    ", ",
    env!("CYCLESCOPE_BUILD_PROFILE"),
    ", ",
    env!("CYCLESCOPE_BUILD_TARGET"),
    ")"
);

#[derive(Debug, Parser)]
#[command(
    name = "cyclescope",
    version = BUILD,
    about = "Measure ICCS CryptHash libraries the NGCC way: KAT gate, host checks, cycles per call and per byte",
    long_about = None
)]
pub struct Cli {
    /// Catalog and settings file (default: ./config.toml when it exists, else built-in settings;
    /// the bundled ICCS baselines stand beside either).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Options of the workbench (no subcommand).
    #[command(flatten)]
    pub tui: tui_cmd::TuiArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List candidates and instances, and whether each library loads.
    List(list::ListArgs),
    /// Check that the host is fit for cycle measurements on the measurement CPU (the harness's
    /// host problems, plus advisories); exit 0 when ready, 1 with problems.
    Check(check::CheckArgs),
    /// Hash a message with one instance and print the digest (lowercase hex).
    Hash(hash::HashArgs),
    /// Build NGCC submission sources into an ngcc-harness tree (libraries, build.json, KAT
    /// manifest from the shipped KAT files), KAT-checked; exit 1 when any instance failed.
    Build(build::BuildArgs),
    /// Known-answer tests: generate the official ICCS KAT files and check them against a
    /// manifest or reference files (exit code = the worst status, 0 = PASS).
    Kat(kat::KatArgs),
    /// KAT gate, host check, plan and measure: cycles per call and per byte, with records.
    Run(run::RunArgs),
    /// Report pages in the published layout (candidate, method, summary) from a run directory
    /// or a harness dataset; `--check` compares with pages already written (exit 1 on a difference).
    Report(report::ReportArgs),
    /// Cost model from a dense length sweep: block size, padding threshold, fixed cost, cycles
    /// per block and per byte with 95 % intervals.
    Sweep(sweep::SweepArgs),
    /// Where the cost goes: each instance's share per function (and per source line with
    /// debug information) at one length, exact from valgrind's callgrind, in profile trials of
    /// their own.
    Profile(profile::ProfileArgs),
    /// Compare two runs job by job: mean cycles, ratio, and whether it is beyond the noise;
    /// `--live A B` measures two instances interleaved and reports B/A with its 95 % CI.
    Compare(compare::CompareArgs),
    /// The tuning journal: per build of LABEL, the figure with its interval, the flags, the
    /// date and the verdict against the build before; `--rebuild DIR…` indexes run folders.
    History(history::HistoryArgs),
    /// Check run directories and datasets by the harness's validation rules.
    Validate(validate::ValidateArgs),
    /// Follow a run another process is writing, in the workbench, read-only (`--lanes`: its
    /// measurement CPUs, or a folder of shard runs, as text).
    Watch(watch::WatchArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(shell::CompletionsArgs),
    /// Print the manual page (roff; `--out DIR` writes one page per command).
    Man(shell::ManArgs),
    /// SUPERCOP's checksumsmall and checksumbig of instances (any ABI), for comparison with
    /// eBASH's published values (--expect-small/--expect-big: exit 1 on a mismatch).
    SupercopChecksum(supercop_cmd::SupercopArgs),
    /// Show (and with --apply, as root, apply) what makes the measurement CPU pass the host
    /// checks, with every previous value saved for --restore.
    Tune(tune::TuneArgs),
    /// Join run directories (shards) into one dataset that `validate` and `report` accept.
    Merge(merge::MergeArgs),
    /// Write (and with --submit, submit) a Slurm job array of shards plus a merge job that
    /// merges, validates and reports once every shard succeeded.
    Slurm(slurm::SlurmArgs),
    /// Internal: render the workbench's demo states to SVG and text.
    #[command(hide = true)]
    Screenshots(screenshots::ScreenshotsArgs),
    /// Internal: the worker process that hosts candidate code (its job comes on stdin).
    #[command(hide = true)]
    Worker,
}

/// Parses the command line, runs it, and maps errors to exit status 2 with a message.
pub fn main() -> ExitCode {
    // A shell asking for completions gets them and nothing else.
    shell::complete::answer_if_asked();
    let cli = Cli::parse();
    let config = cli.config.clone();
    if cli.command.is_some() && cli.tui != tui_cmd::TuiArgs::default() {
        eprintln!(
            "cyclescope: --run, --trial-target, --cpu, --allow-*, --lib, --scan and the like before \
             a subcommand belong to the workbench; give them after the subcommand"
        );
        return ExitCode::from(2);
    }
    // A host tuning whose owner died (crash, SIGKILL) is put back before anything else runs;
    // workers are skipped (they start by the hundred, sandboxed, while their parent is alive).
    if !matches!(cli.command, Some(Command::Worker)) {
        // The image workers start from, held before a rebuild could replace the file.
        crate::worker::image::keep_own();
        tune::recover_at_start(&crate::host::HostRoot::new("/"));
    }
    let result = match cli.command {
        None => tui_cmd::run(config.as_deref(), &cli.tui),
        Some(Command::Watch(a)) => watch::run(config.as_deref(), &a),
        Some(Command::Screenshots(a)) => screenshots::run(&a),
        Some(Command::List(a)) => list::run(config.as_deref(), &a),
        Some(Command::Check(a)) => check::run(config.as_deref(), &a),
        Some(Command::Hash(a)) => hash::run(config.as_deref(), &a),
        Some(Command::Kat(a)) => kat::run(config.as_deref(), &a),
        Some(Command::Build(a)) => build::run(config.as_deref(), &a),
        Some(Command::Run(a)) => run::run(config.as_deref(), &a),
        Some(Command::Report(a)) => report::run(&a),
        Some(Command::Sweep(a)) => sweep::run(config.as_deref(), &a),
        Some(Command::Profile(a)) => profile::run(config.as_deref(), &a),
        Some(Command::Compare(a)) => compare::run(config.as_deref(), &a),
        Some(Command::History(a)) => history::run(config.as_deref(), &a),
        Some(Command::Validate(a)) => validate::run(&a),
        Some(Command::Tune(a)) => tune::run(config.as_deref(), &a),
        Some(Command::SupercopChecksum(a)) => supercop_cmd::run(config.as_deref(), &a),
        Some(Command::Merge(a)) => merge::run(&a),
        Some(Command::Slurm(a)) => slurm::run(config.as_deref(), &a),
        Some(Command::Worker) => worker_cmd::run(),
        Some(Command::Completions(a)) => shell::completions(&a),
        Some(Command::Man(a)) => shell::man(&a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("cyclescope: {}", error_text(&e));
            ExitCode::from(2)
        }
    }
}

/// Writes command output to stdout; on a closed pipe the reader is gone, so stop quietly.
/// Whatever a field forgot, no control character reaches the terminal as itself.
pub(crate) fn write_stdout(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let text = args.to_string();
    let text = crate::sanitize::terminal_text(&text);
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("cyclescope: cannot write to stdout: {e}");
        std::process::exit(2);
    }
}

/// An error and its causes, each cause only once: layer errors often embed their source in
/// their own message already, and `{:#}` would then print it twice. Each part is escaped and
/// bounded for the terminal (errors quote paths, config values and library output).
fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = cause.to_string();
        let part = crate::sanitize::terminal_message(&part).into_owned();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::error_text;

    #[test]
    fn causes_already_in_the_message_are_not_repeated() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let e = anyhow::Error::new(crate::catalog::ConfigError::Read {
            path: "x.toml".into(),
            source: io,
        });
        assert_eq!(error_text(&e), "cannot read config x.toml: gone");
        let e = anyhow::anyhow!("inner").context("outer");
        assert_eq!(error_text(&e), "outer: inner");
    }
}
