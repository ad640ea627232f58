//! The `cyclescope-worker` companion hosts every trial, so its own memory is part of each
//! record's baseline and peak RSS: it must stay free of the CLI, TUI, config and report
//! stacks. Read from the linked binary's symbol table; figures are bench/worker_rss.py's job.

use object::{Object, ObjectSymbol};

/// Crates the trial process has no use for (argument parsing, terminal, config, reports).
const NOT_IN_THE_WORKER: [&str; 10] = [
    "clap",
    "clap_builder",
    "ratatui",
    "crossterm",
    "toml",
    "regex",
    "sysinfo",
    "hdrhistogram",
    "chrono",
    "sha2",
];

/// Whether a (legacy-mangled) Rust symbol belongs to `krate` or instantiates one of its types:
/// `_ZN4clap…` for its own items, `…$LT$clap..…` inside generic arguments.
fn mentions(symbol: &str, krate: &str) -> bool {
    symbol.starts_with(&format!("_ZN{}{krate}", krate.len()))
        || symbol.contains(&format!("$LT${krate}.."))
        || symbol.contains(&format!("$u20${krate}.."))
}

#[test]
fn the_companion_links_none_of_the_cli_tui_or_report_crates() {
    let path = env!("CARGO_BIN_EXE_cyclescope-worker");
    let data = std::fs::read(path).unwrap();
    let file = object::File::parse(&*data).unwrap();
    let names: Vec<&str> = file.symbols().filter_map(|s| s.name().ok()).collect();
    assert!(
        names.iter().any(|n| mentions(n, "cyclescope_core")),
        "the symbol table of {path} names no engine item: the check below would prove nothing"
    );
    for krate in NOT_IN_THE_WORKER {
        let found: Vec<&&str> = names
            .iter()
            .filter(|n| mentions(n, krate))
            .take(3)
            .collect();
        assert!(found.is_empty(), "{path} links {krate}: {found:?}");
    }
    // The main binary does link them: the test can tell the two apart.
    let main = std::fs::read(env!("CARGO_BIN_EXE_cyclescope")).unwrap();
    let main = object::File::parse(&*main).unwrap();
    assert!(
        main.symbols()
            .filter_map(|s| s.name().ok())
            .any(|n| mentions(n, "clap_builder")),
        "cyclescope itself should link clap_builder"
    );
}
