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
        let o = cyclescope(&["completions", shell, "--static"]);
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

/// What bash's completion function, as `completions bash` registers it, offers for `line`
/// (the words typed so far, the last one being completed), run in `cwd`.
fn bash_completes(line: &str, cwd: &std::path::Path) -> Vec<String> {
    let script = cyclescope(&["completions", "bash"]);
    assert!(script.status.success(), "{}", text(&script));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("complete.bash");
    std::fs::write(&file, &script.stdout).unwrap();
    let mut words: Vec<&str> = line.split(' ').collect();
    let current = words.last().copied().unwrap_or("");
    let previous = words.len().checked_sub(2).map_or("", |i| words[i]);
    let call = format!(
        "source {}; COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}; COMP_WORDS=({}); \
         COMP_CWORD={}; COMP_TYPE=9; _clap_complete_cyclescope cyclescope '{current}' \
         '{previous}' 2>/dev/null; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        file.display(),
        words
            .iter_mut()
            .map(|w| format!("'{w}'"))
            .collect::<Vec<_>>()
            .join(" "),
        words.len() - 1,
    );
    let o = std::process::Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &call])
        .current_dir(cwd)
        .output()
        .expect("running bash");
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn bash_completes_labels_from_the_catalog_and_run_folders_from_the_disk() {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let got = bash_completes("cyclescope kat pseudo", here);
    assert!(got.iter().any(|c| c == "pseudoXOF-512"), "{got:?}");
    assert!(got.iter().any(|c| c == "pseudohash-512"), "{got:?}");
    assert!(got.iter().all(|c| c.starts_with("pseudo")), "{got:?}");
    let got = bash_completes("cyclescope run --len", here);
    assert_eq!(got, ["--lengths"]);
    let got = bash_completes("cyclescope hi", here);
    assert_eq!(got, ["history"]);

    // Run folders: a run (its campaign.json) first, then folders to descend into.
    let cwd = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(cwd.path().join("runs/r1")).unwrap();
    std::fs::write(cwd.path().join("runs/r1/campaign.json"), "{}").unwrap();
    std::fs::create_dir_all(cwd.path().join("runs/older")).unwrap();
    std::fs::write(cwd.path().join("runs/notes.txt"), "").unwrap();
    for command in ["watch", "validate", "report", "compare"] {
        let got = bash_completes(&format!("cyclescope {command} runs/"), cwd.path());
        assert_eq!(got, ["runs/r1", "runs/older/"], "{command}");
    }
    let got = bash_completes("cyclescope compare runs/r1 runs/o", cwd.path());
    assert_eq!(got, ["runs/older/"]);
}

/// The `.SH` headings of a roff page, in order.
fn sections(page: &str) -> Vec<String> {
    page.lines()
        .filter_map(|l| l.strip_prefix(".SH "))
        .map(|h| h.trim_matches('"').to_string())
        .collect()
}

/// The text of one section (up to the next `.SH`), roff escapes of `-` undone.
fn section(page: &str, name: &str) -> String {
    let start = page
        .find(&format!(".SH {name}\n"))
        .or_else(|| page.find(&format!(".SH \"{name}\"\n")))
        .unwrap_or_else(|| panic!("no section {name}"));
    let body = &page[start..];
    let end = body[4..].find("\n.SH ").map_or(body.len(), |e| e + 4);
    body[..end].replace("\\-", "-")
}

#[test]
fn the_manual_has_values_in_its_synopsis_and_the_sections_a_user_looks_for() {
    let o = cyclescope(&["man"]);
    assert!(o.status.success(), "{}", text(&o));
    let page = String::from_utf8_lossy(&o.stdout).into_owned();
    let want = [
        "NAME",
        "SYNOPSIS",
        "DESCRIPTION",
        "OPTIONS",
        "WORKBENCH KEYS",
        "EXIT STATUS",
        "ENVIRONMENT",
        "FILES",
        "EXAMPLES",
    ];
    let have = sections(&page);
    for w in want {
        assert!(have.iter().any(|h| h == w), "no {w} in {have:?}");
    }
    let synopsis = section(&page, "SYNOPSIS");
    for s in ["[--config FILE]", "[--lib PATH]", "[--cpu N]", "COMMAND"] {
        assert!(synopsis.contains(s), "{s} not in {synopsis}");
    }
    // Every public CYCLESCOPE_ variable the engine defines is documented.
    let env = section(&page, "ENVIRONMENT");
    let mut defined = Vec::new();
    let mut stack = vec![std::path::PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/crates/cyclescope-core/src"
    ))];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let src = std::fs::read_to_string(&p).unwrap();
                for l in src.lines().filter(|l| l.starts_with("pub const ")) {
                    if let Some(v) = l.split('"').nth(1).filter(|v| v.starts_with("CYCLESCOPE_")) {
                        defined.push(v.to_string());
                    }
                }
            }
        }
    }
    assert!(defined.len() >= 6, "{defined:?}");
    for v in defined.iter().chain(&["NO_COLOR".to_string()]) {
        assert!(env.contains(v.as_str()), "{v} not in ENVIRONMENT:\n{env}");
    }
    let exit = section(&page, "EXIT STATUS");
    for s in ["130", "NONCONFORM", "usage error"] {
        assert!(exit.contains(s), "{s} not in {exit}");
    }
    // The workbench's keys, from the same table as its help: start and quit at least.
    let keys = section(&page, "WORKBENCH KEYS");
    assert!(keys.contains("start: KAT"), "{keys}");
    assert!(keys.contains("In the Results panel"), "{keys}");

    // Each command's own page: a synopsis with values, and what its exit status means.
    let dir = tempfile::tempdir().unwrap();
    let o = cyclescope(&["man", "--out", dir.path().to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let run = std::fs::read_to_string(dir.path().join("cyclescope-run.1")).unwrap();
    let synopsis = section(&run, "SYNOPSIS");
    assert!(synopsis.contains("cyclescope run"), "{synopsis}");
    assert!(synopsis.contains("[--lengths BYTES]"), "{synopsis}");
    assert!(synopsis.contains("[LABEL…]"), "{synopsis}");
    assert!(
        section(&run, "EXIT STATUS").contains("KAT blocked"),
        "{run}"
    );
    let kat = std::fs::read_to_string(dir.path().join("cyclescope-kat.1")).unwrap();
    assert!(section(&kat, "EXIT STATUS").contains("MISMATCH"), "{kat}");
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
