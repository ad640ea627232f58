//! `cyclescope report DATASET_DIR`: the published report pages of a run directory or harness
//! dataset, written under `--out` or, with `--check`, compared with the pages already there
//! (exit 1 naming the first differing line of each differing file).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use crate::report::{ReportOptions, build_pages, check_pages, write_pages};

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A cyclescope run directory or a harness dataset such as performance/data/arm_1.
    pub dataset_dir: PathBuf,
    /// System ID in page names and titles (default: campaign.json `system_id`).
    #[arg(long, value_name = "ID", value_parser = super::arg_value::name)]
    pub system: Option<String>,
    /// Output folder: `<cand>/perf_<ID>.md`, `performance/{method,summary}_<ID>.md`.
    #[arg(long, value_name = "DIR", default_value = "pages")]
    pub out: PathBuf,
    /// Regenerate in memory and compare with the pages in --out instead of writing.
    #[arg(long)]
    pub check: bool,
    /// `ID;Algorithm;URL` file with the candidates' names and NICCS pages.
    #[arg(long, value_name = "FILE")]
    pub candidates: Option<PathBuf>,
    /// Folder with systems.csv, kat_issues.csv, summary_notes.csv (default: DATASET_DIR/../..
    /// when it has systems.csv).
    #[arg(long, value_name = "DIR")]
    pub side: Option<PathBuf>,
    /// Leave out the SVG figures (`<cand>/figures/*.svg`: cycles/byte against length, and the
    /// per-call histogram of each job) and their links.
    #[arg(long)]
    pub no_figures: bool,
    /// The candidate whose pseudoXOF the figures draw and the CSV divides by (default: iccs,
    /// the bundled helpers; iccs-c: the official C ones).
    #[arg(long, value_name = "CANDIDATE", value_parser = super::arg_value::name)]
    pub baseline: Option<String>,
    /// A published dataset (e.g. performance/data/arm_1) whose `× pseudoXOF` ratios the summary
    /// page shows beside this dataset's, job by job; or a published page saved as text (its §4
    /// mean cycles beside ours, with both sides' counter, clock and flags). Refused when no
    /// hash job is in both.
    #[arg(long, value_name = "DATASET_DIR|PAGE")]
    pub published: Option<PathBuf>,
    /// Also write every record of the dataset as CSV to FILE (with `x_pseudoxof`).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
}

pub fn run(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    let opts = ReportOptions {
        system: args.system.clone(),
        side_dir: args.side.clone(),
        candidates: args.candidates.clone(),
        method_facts: None,
        figures: !args.no_figures,
        baseline: args.baseline.clone(),
        published: args.published.clone(),
    };
    if let Some(path) = &args.csv {
        let records: Vec<_> = crate::report::Dataset::open(&args.dataset_dir)?
            .into_records()
            .into_iter()
            .map(|(_, r)| r)
            .collect();
        let baseline = crate::baseline::Baseline::new(
            args.baseline
                .as_deref()
                .unwrap_or(crate::baseline::DEFAULT_CANDIDATE),
        );
        let text = crate::report::export::records_csv(&records, &baseline);
        crate::owned::write_own_file(path, text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
        outln!(
            "wrote {} ({} records)",
            crate::sanitize::path_as_given(path),
            records.len()
        );
    }
    let pages = build_pages(&args.dataset_dir, &opts)
        .with_context(|| format!("cannot build pages from {}", args.dataset_dir.display()))?;
    if args.check {
        let diffs = check_pages(&args.out, &pages);
        for d in &diffs {
            let named = d.to_string().replacen(
                &d.path.display().to_string(),
                &args.out.join(&d.path).display().to_string(),
                1,
            );
            // The lines compared come from files in --out: escaped and bounded.
            outln!("DIFF {}", crate::sanitize::terminal(&named));
        }
        outln!(
            "{} page(s) checked in {}: {}",
            pages.len(),
            crate::sanitize::path_as_given(&args.out),
            if diffs.is_empty() {
                "identical".to_string()
            } else {
                format!("{} differ", diffs.len())
            }
        );
        return Ok(if diffs.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        });
    }
    write_pages(&args.out, &pages)?;
    for p in &pages {
        outln!(
            "wrote {}",
            crate::sanitize::path_as_given(&args.out.join(&p.path))
        );
    }
    Ok(ExitCode::SUCCESS)
}
