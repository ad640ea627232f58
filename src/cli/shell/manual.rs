//! The manual pages: clap_mangen renders the name, description, options and commands from the
//! clap definitions; this adds what clap cannot know (a synopsis that names every value, the
//! workbench's keys from the keymap table, exit statuses, the environment, the files and
//! examples). Nothing here is written by hand twice: keys, variables and exit codes come from
//! the tables the program itself uses.

use clap::{Arg, ArgAction, Command};
use roff::{Roff, bold, italic, roman};

use crate::tui::app::Panel;
use crate::tui::keymap::{Keymap, Scope};

/// The section every page is in.
const SECTION: &str = "1";

/// One page per command: `cyclescope.1` first, then `cyclescope-run.1` and so on (file name,
/// roff text). `cmd` must be built (`Command::build`), so that each subcommand knows its
/// `cyclescope run` name.
pub(crate) fn pages(cmd: &Command) -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let mut out = Vec::new();
    collect(cmd, true, &mut out)?;
    Ok(out)
}

fn collect(cmd: &Command, main: bool, out: &mut Vec<(String, Vec<u8>)>) -> std::io::Result<()> {
    let name = cmd
        .get_display_name()
        .unwrap_or_else(|| cmd.get_name())
        .to_string();
    out.push((format!("{name}.{SECTION}"), page(cmd, main)?));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect(sub, false, out)?;
    }
    Ok(())
}

/// One page: clap_mangen's sections with our synopsis, then the sections of our own.
fn page(cmd: &Command, main: bool) -> std::io::Result<Vec<u8>> {
    let with_synopsis = cmd.clone().override_usage(synopsis(cmd, main));
    let mut text = Vec::new();
    clap_mangen::Man::new(with_synopsis).render(&mut text)?;
    let mut roff = Roff::new();
    if main {
        workbench_keys(&mut roff);
    }
    exit_status(&mut roff, cmd, main);
    if main {
        environment(&mut roff);
        files(&mut roff);
        examples(&mut roff);
    } else {
        roff.control("SH", ["SEE ALSO"]);
        roff.text([bold("cyclescope"), roman("(1)")]);
    }
    roff.to_writer(&mut text)?;
    Ok(text)
}

/// The usage lines, every option with its value: `cyclescope run [--lengths LIST] … LABEL…`.
/// The main page has two forms: the workbench with its options, and a command.
fn synopsis(cmd: &Command, main: bool) -> String {
    let name = cmd.get_bin_name().unwrap_or_else(|| cmd.get_name());
    let mut words = vec![name.to_string()];
    let args: Vec<&Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !matches!(a.get_long(), Some("help" | "version")))
        .collect();
    for a in args.iter().filter(|a| !a.is_positional()) {
        words.push(option_usage(a));
    }
    for a in args.iter().filter(|a| a.is_positional()) {
        words.push(positional_usage(a));
    }
    let mut form = words.join(" ");
    if main {
        form.push_str(&format!("\n{name} COMMAND [OPTIONS] [ARGS]"));
    }
    form
}

/// `[--name VALUE]`, `[--name VALUE]…` when it repeats, `[--name]` for a switch; a required
/// option without brackets.
fn option_usage(a: &Arg) -> String {
    let flag = match (a.get_short(), a.get_long()) {
        (Some(s), Some(l)) => format!("-{s}|--{l}"),
        (Some(s), None) => format!("-{s}"),
        (None, Some(l)) => format!("--{l}"),
        (None, None) => a.get_id().to_string(),
    };
    let body = if takes_value(a) {
        format!("{flag} {}", value_name(a))
    } else {
        flag
    };
    let repeats = matches!(a.get_action(), ArgAction::Append | ArgAction::Count);
    let body = if a.is_required_set() {
        body
    } else {
        format!("[{body}]")
    };
    if repeats { format!("{body}…") } else { body }
}

fn positional_usage(a: &Arg) -> String {
    let many = matches!(a.get_action(), ArgAction::Append)
        || a.get_num_args().is_some_and(|n| n.max_values() > 1);
    let value = format!("{}{}", value_name(a), if many { "…" } else { "" });
    if a.is_required_set() {
        value
    } else {
        format!("[{value}]")
    }
}

fn takes_value(a: &Arg) -> bool {
    matches!(a.get_action(), ArgAction::Set | ArgAction::Append)
}

fn value_name(a: &Arg) -> String {
    a.get_value_names()
        .map(|v| v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| a.get_id().as_str().to_uppercase())
}

/// The keymap table as the help overlay shows it, everywhere first, then per panel.
fn workbench_keys(roff: &mut Roff) {
    let keys = Keymap::default();
    roff.control("SH", ["WORKBENCH KEYS"]);
    roff.text([roman(
        "Started without a command, cyclescope opens the workbench. Its keys (rebind them in the \
         [keys] table of the configuration file):",
    )]);
    let scopes = std::iter::once(Scope::Global)
        .chain(Panel::ALL.into_iter().map(Scope::In))
        .chain(std::iter::once(Scope::Help));
    for scope in scopes {
        let rows: Vec<_> = keys.help_rows().filter(|b| b.scope == scope).collect();
        if rows.is_empty() {
            continue;
        }
        let heading = match scope {
            Scope::Global => "Everywhere".to_string(),
            Scope::In(p) => format!("In the {} panel", p.title()),
            Scope::Help => "While the help is open".to_string(),
        };
        roff.control("SS", [heading.as_str()]);
        for b in rows {
            tagged(roff, bold(keys.keys_text(b)), b.help);
        }
    }
}

/// What the exit status means: every command's 0 and 2, its own 1, and `kat`'s statuses.
fn exit_status(roff: &mut Roff, cmd: &Command, main: bool) {
    roff.control("SH", ["EXIT STATUS"]);
    let name = cmd.get_name();
    let one = match name {
        "check" => Some("the host has a problem for cycle measurements"),
        "build" => Some("an instance did not build or failed its KAT"),
        "run" => Some("a job failed, a KAT blocked an instance, or the run was cancelled"),
        "compare" => Some("a job regressed beyond the noise, or a row is invalid"),
        "validate" => Some("a run or dataset breaks a validation rule"),
        "report" => Some("with --check, a page differs from the one written before"),
        "list" => Some("a library does not load"),
        "sweep" => Some("no cost model could be fitted, a job failed, or it was cancelled"),
        "history" => Some("with --rebuild, a folder given is not a run"),
        "supercop-checksum" => Some("a checksum differs from the one expected, or failed"),
        "watch" => Some("with --lanes, a lane failed"),
        _ => None,
    };
    let mut rows: Vec<(String, String)> = vec![("0".into(), "success".into())];
    if main {
        rows.push((
            "1".into(),
            "the command ran and found what it looks for: a host problem (check), a failed \
             instance or job (build, run, sweep), a regression (compare), an invalid record \
             (validate), a differing page (report --check); each command's page says which"
                .into(),
        ));
    } else if let Some(why) = one {
        rows.push(("1".into(), why.into()));
    }
    rows.push((
        "2".into(),
        "the command could not do its work: a usage error, or input it could not read or \
         accept (the message says which)"
            .into(),
    ));
    if main || name == "kat" {
        // A broken manifest stops `kat` as input it cannot accept (2), in the manifest's
        // words: BADMANIFEST is the status the workbench and `run` give the instance.
        let statuses = <crate::kat::KatStatus as strum::IntoEnumIterator>::iter()
            .filter(|s| *s != crate::kat::KatStatus::BadManifest)
            .map(|s| format!("{} {s}", s.exit_code()))
            .collect::<Vec<_>>()
            .join(", ");
        rows.push((
            "0\u{2013}9".into(),
            format!("kat: the worst KAT status of the instances ({statuses})"),
        ));
        rows.push(("130".into(), "kat: cancelled (SIGINT, SIGTERM)".into()));
    }
    for (code, text) in rows {
        tagged(roff, bold(code), text);
    }
}

/// The variables cyclescope reads, each with what it overrides.
fn environment(roff: &mut Roff) {
    use cyclescope_core::{catalog::bundled, cpu::lock, host as cache, journal, worker::limits};
    roff.control("SH", ["ENVIRONMENT"]);
    let rows: [(&str, String); 9] = [
        (
            bundled::CACHE_ENV,
            "the cache folder (the bundled libraries, placed workers); beats XDG_CACHE_HOME".into(),
        ),
        (
            journal::JOURNAL_ENV,
            "the tuning journal file; beats the settings and XDG_DATA_HOME".into(),
        ),
        (
            lock::LOCK_DIR_ENV,
            "the machine-wide folder of CPU locks, shared by every cyclescope that measures".into(),
        ),
        (
            lock::LOCK_WAIT_ENV,
            "seconds a run waits for a measurement CPU another process holds before it is \
             refused (unset or 0: refused at once)"
                .into(),
        ),
        (
            cache::MAX_AGE_ENV,
            format!(
                "seconds a host check's clock probe is reused (0: never; default {})",
                cache::DEFAULT_MAX_AGE.as_secs()
            ),
        ),
        (
            limits::ADDRESS_SPACE_ENV,
            format!(
                "the address-space limit of every worker, in MiB, where no flag or setting \
                 gives one (default {})",
                limits::DEFAULT_ADDRESS_SPACE_MIB
            ),
        ),
        (
            "NO_COLOR",
            "when set and not empty, no colour in the workbench or the help".into(),
        ),
        (
            "XDG_CACHE_HOME",
            "the cache is XDG_CACHE_HOME/cyclescope (else ~/.cache/cyclescope)".into(),
        ),
        (
            "XDG_DATA_HOME, XDG_RUNTIME_DIR",
            "the journal is under XDG_DATA_HOME/cyclescope (else ~/.local/share/cyclescope); \
             a user's CPU locks under XDG_RUNTIME_DIR/cyclescope"
                .into(),
        ),
    ];
    for (name, text) in rows {
        tagged(roff, bold(name), text);
    }
}

fn files(roff: &mut Roff) {
    roff.control("SH", ["FILES"]);
    let rows = [
        (
            "./config.toml",
            "the catalog and settings when --config names no other file",
        ),
        (
            "runs/",
            "where runs write their folders (records, KAT logs, build.json), unless the \
             settings or --out say otherwise",
        ),
        (
            "~/.cache/cyclescope/",
            "built bundled libraries and placed workers",
        ),
        (
            "~/.local/share/cyclescope/journal.sqlite",
            "the tuning journal; its host-cache/ folder keeps reusable host checks",
        ),
        (
            "/run/cyclescope/",
            "CPU locks (as root; a user's are under XDG_RUNTIME_DIR), and tune-restore.json, \
             the values tune --apply changed, for tune --restore",
        ),
    ];
    for (path, text) in rows {
        tagged(roff, italic(path), text);
    }
}

fn examples(roff: &mut Roff) {
    roff.control("SH", ["EXAMPLES"]);
    let rows = [
        ("cyclescope", "open the workbench on the bundled algorithms"),
        ("cyclescope check", "is this host fit to measure cycles?"),
        (
            "cyclescope kat pseudoXOF-512 sm3hash-256",
            "known-answer tests of two instances",
        ),
        (
            "cyclescope run --lib ./libX.so --lengths 32,1024",
            "KAT gate, then cycles per call and per byte of an ad-hoc library",
        ),
        (
            "cyclescope compare runs/a runs/b",
            "compare two runs job by job",
        ),
        (
            "cyclescope man --out DIR",
            "write these pages, one per command, into DIR",
        ),
        (
            "source <(cyclescope completions bash)",
            "complete commands, labels and run folders in bash",
        ),
    ];
    for (command, text) in rows {
        tagged(roff, bold(command), text);
    }
}

/// One tagged paragraph: the term on its line, the text indented below it.
fn tagged(roff: &mut Roff, term: roff::Inline, text: impl AsRef<str>) {
    roff.control("TP", []);
    roff.text([term]);
    roff.text([roman(text.as_ref())]);
}
