//! What a shell user expects of a command-line tool: completion scripts and a manual page
//! generated from the real command definitions, and `NO_COLOR` honoured on a real terminal
//! (tmux, so colour would be on without it).

mod common;

use std::process::Output;

use common::output_text as text;
use common::tmux::Tmux;

fn cyclescope(args: &[&str]) -> Output {
    common::cyclescope()
        .args(args)
        .output()
        .expect("running cyclescope")
}

/// The subcommands a user sees, read from `--help` (the hidden `worker` and `screenshots` are
/// internal), so a new one is covered without editing this test.
fn subcommands() -> Vec<String> {
    let o = cyclescope(&["--help"]);
    let help = String::from_utf8_lossy(&o.stdout).into_owned();
    let names: Vec<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|n| n != "help")
        .collect();
    for known in ["list", "kat", "run", "completions", "man"] {
        assert!(
            names.iter().any(|n| n == known),
            "{known} not in --help:\n{help}"
        );
    }
    names
}

#[test]
fn completions_for_each_shell_know_every_subcommand() {
    for shell in ["bash", "zsh", "fish"] {
        let o = cyclescope(&["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", text(&o));
        let script = String::from_utf8_lossy(&o.stdout);
        assert!(script.len() > 1000, "{shell}: {script}");
        for sub in subcommands() {
            assert!(script.contains(&sub), "{shell} completion lacks {sub}");
        }
        // The options of the subcommands are there too.
        assert!(script.contains("allow-unfixed-host"), "{shell}");
    }
    let o = cyclescope(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn the_manual_pages_cover_every_subcommand() {
    let o = cyclescope(&["man"]);
    assert!(o.status.success(), "{}", text(&o));
    let page = String::from_utf8_lossy(&o.stdout);
    assert!(
        page.starts_with(".ie") || page.contains(".TH cyclescope 1"),
        "{page}"
    );
    let subs = subcommands();
    for sub in &subs {
        assert!(
            page.contains(&format!("cyclescope\\-{}(1)", sub.replace('-', "\\-"))),
            "lacks {sub}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let o = cyclescope(&["man", "--out", dir.path().to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    for sub in &subs {
        let file = dir.path().join(format!("cyclescope-{sub}.1"));
        let body = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{sub}: {e}"));
        assert!(
            body.contains(".SH OPTIONS") || body.contains(".SH SYNOPSIS"),
            "{sub}"
        );
    }
    assert!(!dir.path().join("cyclescope-worker.1").exists());
}

/// The parameters of every SGR sequence (`ESC [ … m`) in `screen` (tmux `capture-pane -e`).
fn sgr_params(screen: &str) -> Vec<u32> {
    screen
        .split("\x1b[")
        .skip(1)
        .filter_map(|seq| seq.find('m').map(|end| &seq[..end]))
        .filter(|p| p.chars().all(|c| c.is_ascii_digit() || c == ';'))
        .flat_map(|p| p.split(';').filter_map(|n| n.parse().ok()))
        .collect()
}

/// Whether `screen` sets a colour: a foreground or background parameter (30–49, 90–107;
/// 38/48 introduce 256 colours and RGB), other than 39/49, which go back to the default.
fn sets_colour(screen: &str) -> bool {
    sgr_params(screen)
        .iter()
        .any(|n| ((30..=49).contains(n) || (90..=107).contains(n)) && ![39, 49].contains(n))
}

#[test]
fn no_color_takes_the_colour_out_of_help_and_the_workbench() {
    let bin = env!("CARGO_BIN_EXE_cyclescope");
    let cwd = tempfile::tempdir().unwrap();
    let cfg = format!("--config {}/config.toml", env!("CARGO_MANIFEST_DIR"));
    for (name, env) in [("colour", ""), ("nocolour", "NO_COLOR=1 ")] {
        // On a terminal clap colours its help unless NO_COLOR is set.
        let help = format!("{env}{bin} run --help; echo HELP-DONE; sleep 60");
        let t = Tmux::start_in(&format!("help-{name}"), 120, 60, cwd.path(), &help);
        t.wait_for("HELP-DONE");
        let screen = t.capture_escapes();
        let raw = common::cyclescope()
            .args(["run", "--help"])
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert!(!raw.stdout.contains(&0x1b), "ESC in piped help");
        if env.is_empty() {
            assert!(
                screen.contains('\x1b'),
                "help without NO_COLOR is styled:\n{screen}"
            );
        } else {
            assert!(
                !screen.contains('\x1b'),
                "NO_COLOR help has escapes:\n{screen:?}"
            );
        }
        drop(t);

        let tui = format!("{env}{bin} {cfg}; echo EXIT:$?; sleep 60");
        let t = Tmux::start_in(&format!("tui-{name}"), 120, 36, cwd.path(), &tui);
        t.wait_for("Catalog · 0 selected");
        t.wait_for("s start");
        let screen = t.capture_escapes();
        assert_eq!(sets_colour(&screen), env.is_empty(), "{name}:\n{screen:?}");
        // Without colour, the cursor row is still marked (reverse video).
        assert!(
            sgr_params(&screen).contains(&7),
            "{name}: no reverse video:\n{screen:?}"
        );
        t.send(&["q"]);
        t.wait_for("EXIT:0");
    }
}
