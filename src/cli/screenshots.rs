//! `cyclescope screenshots [DIR]` (hidden): renders every demo state of the workbench at 80×24
//! and 160×48 to `DIR/<state>-<w>x<h>.svg` and `.txt`, deterministically, for the README.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use crate::tui::{demo, svg};

#[derive(Debug, Args)]
pub struct ScreenshotsArgs {
    /// Where to write the pictures.
    #[arg(default_value = "screenshots")]
    pub out: PathBuf,
}

/// The sizes each state is drawn at.
fn sizes(state: &str) -> &'static [(u16, u16)] {
    if state == "too-small" {
        &[(70, 20)]
    } else {
        &[(80, 24), (160, 48)]
    }
}

pub fn run(args: &ScreenshotsArgs) -> anyhow::Result<ExitCode> {
    crate::owned::create_run_folder(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    for state in demo::STATES {
        let Some(app) = demo::state(state) else {
            continue;
        };
        for &(w, h) in sizes(state) {
            let buf = demo::render(&app, w, h);
            let stem = args.out.join(format!("{state}-{w}x{h}"));
            let title = format!("cyclescope TUI, {state} state, {w}×{h} (demo data)");
            for (ext, body) in [
                ("svg", svg::render(&buf, &title)),
                ("txt", demo::text(&buf)),
            ] {
                let path = stem.with_extension(ext);
                crate::owned::write_own_file(&path, body.as_bytes())
                    .with_context(|| format!("writing {}", path.display()))?;
                println!("{}", path.display());
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
