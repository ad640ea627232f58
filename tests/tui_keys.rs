//! `[keys]` of config.toml drives the real workbench in tmux: the rebound keys act, the old
//! ones no longer do, and the footer and the help overlay name the keys in force. A mistake
//! in the table is a config error with its line and column, before any terminal is needed.

mod common;

use common::tmux::Tmux;

const KEYS: &str = r#"
[settings]
trials = 2
trial_target_s = 0.02

[keys]
start = "S"
toggle = "x"
help = "F1"
quit = ["Q", "Ctrl-q"]
cpu-next = "."
"#;

#[test]
fn rebound_keys_drive_the_workbench_and_the_footer_and_help_name_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("config.toml"), KEYS).expect("config");
    let bin = env!("CARGO_BIN_EXE_cyclescope");
    let script = format!("{bin} --allow-unfixed-host; echo \"EXIT:$?\"; sleep 600");
    let t = Tmux::start_in("keys", 120, 50, dir.path(), &script);
    let s = t.wait_for("Catalog · 0 selected");
    assert!(
        s.contains("S start") && s.contains("x select") && s.contains("Q quit"),
        "{s}"
    );
    assert!(
        s.contains("F1 keys"),
        "the title bar names the help key:\n{s}"
    );
    // The built-in keys are free now: Space and q do nothing.
    t.send(&["j", "Space", "q"]);
    t.send(&["F1"]);
    let help = t.wait_for("Keys · Esc/F1/Q closes");
    assert!(
        help.contains("Catalog · 0 selected"),
        "Space no longer selects:\n{help}"
    );
    assert!(!help.contains("EXIT:"), "q no longer leaves:\n{help}");
    let row = |needle: &str| {
        help.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no help row {needle:?}:\n{help}"))
            .to_string()
    };
    assert!(row("start: KAT").contains(" S  "), "{help}");
    assert!(
        row("the results table is printed").contains("Q/Ctrl-Q"),
        "{help}"
    );
    assert!(row("measurement CPU").contains("</."), "{help}");
    t.send(&["Escape"]);
    let s = t.wait("help closed", |s| !s.contains("Keys · Esc/F1/Q closes"));
    // Keys act in order: Space came before F1, and selected nothing.
    assert!(
        s.contains("Catalog · 0 selected"),
        "Space no longer selects:\n{s}"
    );
    t.send(&["x"]);
    t.wait_for("Catalog · 1 selected");
    for k in ["2", "3", "4", "5", "6", "7", "8"] {
        t.send(&[k]);
    }
    t.wait("32 B alone", |s| s.contains("32 B") && !s.contains("128 B"));
    t.send(&["S"]);
    t.wait_for("cyclescope │ finished");
    t.send(&["C-q"]);
    t.wait_for("EXIT:0");
}

#[test]
fn a_mistake_in_keys_is_a_config_error_with_line_and_column() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cases = [
        (
            "[keys]\nstart = \"S\"\nstrat = \"s\"\n",
            "config.toml:3:1: [keys]: no action \"strat\"",
        ),
        (
            "[keys]\nstart = \"c\"\n",
            "config.toml:2:1: [keys]: key c would mean both start and cancel",
        ),
    ];
    for (text, want) in cases {
        std::fs::write(dir.path().join("config.toml"), text).expect("config");
        let out = common::cyclescope_in(dir.path(), &[]);
        let all = common::output_text(&out);
        assert!(!out.status.success(), "{all}");
        assert!(all.contains(want), "{all}");
    }
}
