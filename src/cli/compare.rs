//! `cyclescope compare RUN_A RUN_B`: job by job, mean cycles of two runs (or datasets), their
//! ratio and whether the difference lies beyond the noise between runs (on the `× pseudoXOF`
//! ratios where both runs measured the baseline, counter-free across two counters), as
//! Markdown, JSON or CSV; a ⚠ figure gets `doubtful`, and a record that `validate` rejects is
//! named (stderr) and its job gets no verdict. `--fail-above 2%` makes it a CI gate: exit 1
//! when a job of B is slower than A beyond the noise by more than the margin, or when a
//! compared record is invalid; else exit 0.
//! `compare --live A B` measures two instances now, interleaved (`live`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::output::{Format, OutputFormat};
use crate::report::compare::{RunRecords, compare_runs, rows_csv, rows_json, table};

mod live;

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline run directory (A), a published dataset, or a published page saved as
    /// text; with --live, the baseline instance's label.
    pub a: PathBuf,
    /// The run to compare with it (B); with --live, the other instance's label.
    pub b: PathBuf,
    /// Measure A and B now, trial by trial alternately, and report B/A with its 95 % CI.
    #[arg(long)]
    pub live: bool,
    #[command(flatten)]
    pub live_opts: live::LiveArgs,
    #[command(flatten)]
    pub output: OutputFormat,
    /// Exit 1 when some job of B is slower than A beyond the between-run noise (the judged
    /// ratio's lower 95 % bound) by more than this share (`2%` or `0.02`), or when a record of
    /// either run is invalid (what `validate` rejects). Doubtful (⚠) jobs are not counted.
    #[arg(long, value_name = "MARGIN", value_parser = margin)]
    pub fail_above: Option<f64>,
    /// Only the jobs both sides have (the default when a side is a published dataset).
    #[arg(long, conflicts_with = "all")]
    pub common: bool,
    /// Every job of either side, those only in A or only in B too (the default between two
    /// runs).
    #[arg(long)]
    pub all: bool,
}

/// `2%`, `2 %` or `0.02` → 0.02; 0 … 1000 %.
fn margin(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, scale) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), 0.01),
        None => (t, 1.0),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a margin such as 2% or 0.02"))?;
    let v = v * scale;
    if !(0.0..=10.0).contains(&v) {
        return Err(format!("{s:?}: a margin is 0 % … 1000 %"));
    }
    Ok(v)
}

pub fn run(config: Option<&std::path::Path>, args: &CompareArgs) -> anyhow::Result<ExitCode> {
    if args.live {
        return live::run(config, args);
    }
    if args.live_opts != live::LiveArgs::default() {
        anyhow::bail!("those options belong to `compare --live`; comparing two runs takes none");
    }
    // The same reading and record check as the report's: a folder that is not a run is
    // refused, a record that cannot be placed is named, never taken for a job "only in A", and
    // a record the check rejects is named and given no verdict.
    let (a, page) = side_a(&args.a)?;
    if args.b.is_file() {
        anyhow::bail!(
            "{}: a published page is side A (`compare PAGE RUN`)",
            crate::sanitize::path_as_given(&args.b)
        );
    }
    let b = RunRecords::read(&args.b)?;
    // A run or dataset that holds no record at all would make every row "only in" the other
    // side: a comparison that says nothing, so it is refused, naming the empty side.
    for (dir, run) in [(&args.a, &a), (&args.b, &b)] {
        if run.valid.is_empty() && run.rejected.is_empty() {
            anyhow::bail!(
                "{}: no record under records/ (an empty run or dataset): nothing to compare",
                crate::sanitize::path_as_given(dir)
            );
        }
    }
    let mut rows = compare_runs(&a, &b);
    if page.is_some() {
        crate::report::published_page::no_verdict_beside_a_page(&mut rows);
    }
    if rows.is_empty() {
        anyhow::bail!("neither run has a complete record");
    }
    let rows = only_common(rows, args, [&a, &b])?;
    for (dir, run) in [(&args.a, &a), (&args.b, &b)] {
        for f in run.rejected.iter().flat_map(|c| &c.findings) {
            let line = format!("{}: {}", dir.join(f.path()).display(), f.message());
            eprintln!("INVALID {}", crate::sanitize::terminal(&line));
        }
    }
    print_rows(&rows, args, page.as_ref(), &b)?;
    let Some(m) = args.fail_above else {
        return Ok(ExitCode::SUCCESS);
    };
    let regressed: Vec<_> = rows.iter().filter(|r| r.regressed(m)).collect();
    for r in &regressed {
        eprintln!(
            "REGRESSION {} @ {} B: slower than A by {:.1} % beyond the noise between runs (margin {:.1} %)",
            crate::sanitize::terminal(&r.label),
            r.input_bytes(),
            100.0 * r.excess_slowdown().unwrap_or(0.0),
            100.0 * m
        );
    }
    let not_comparable = rows.iter().filter(|r| !r.is_comparable()).count();
    if not_comparable > 0 {
        eprintln!(
            "{not_comparable} job(s) not comparable (see the verdicts): not counted by the gate"
        );
    }
    let doubtful = rows.iter().filter(|r| r.is_doubtful()).count();
    if doubtful > 0 {
        eprintln!(
            "{doubtful} job(s) doubtful (⚠ on a side: see the verdicts): not counted by the gate; measure them again"
        );
    }
    let invalid = rows.iter().filter(|r| r.is_invalid()).count();
    if invalid > 0 {
        eprintln!(
            "{invalid} job(s) with an invalid record (`cyclescope validate` lists why): the gate fails"
        );
    }
    Ok(if regressed.is_empty() && invalid == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The rows in the chosen format; beside a page, what the page and the run each say of how
/// they measured: on stdout above the table, on stderr beside an export (whose rows stay as
/// they are).
fn print_rows(
    rows: &[crate::report::compare::Comparison],
    args: &CompareArgs,
    page: Option<&crate::report::published_page::PublishedPage>,
    b: &RunRecords,
) -> anyhow::Result<()> {
    let checks: Vec<String> = page
        .map(|p| crate::report::published_page::checks::lines(p, &b.valid))
        .unwrap_or_default();
    match args.output.format() {
        Format::Json => outln!("{}", serde_json::to_string_pretty(&rows_json(rows))?),
        Format::Csv => out!("{}", rows_csv(rows)),
        Format::Markdown => {
            outln!(
                "A = {}{}\nB = {}\n",
                crate::sanitize::path_as_given(&args.a),
                page.map_or(String::new(), page_note),
                crate::sanitize::path_as_given(&args.b)
            );
            for l in &checks {
                outln!("- {}", crate::sanitize::markdown(l));
            }
            if !checks.is_empty() {
                outln!("");
            }
            out!("{}", table(rows));
            return Ok(());
        }
    }
    for l in &checks {
        eprintln!("{}", crate::sanitize::terminal(l));
    }
    Ok(())
}

/// Side A: a run or dataset folder, or a published page (a file: its §4 table as records).
fn side_a(
    path: &std::path::Path,
) -> anyhow::Result<(
    RunRecords,
    Option<crate::report::published_page::PublishedPage>,
)> {
    if !path.is_file() {
        return Ok((RunRecords::read(path)?, None));
    }
    let page = crate::report::published_page::PublishedPage::read(path)?;
    let records = RunRecords {
        valid: page.records(),
        rejected: Vec::new(),
        published: true,
    };
    Ok((records, Some(page)))
}

/// ` (published page of system x86_1, hash-10: 24 rows of its §4 table)`.
fn page_note(p: &crate::report::published_page::PublishedPage) -> String {
    let of = [
        p.system.as_deref().map(|s| format!("system {s}")),
        p.candidate.clone(),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(", ");
    let of = if of.is_empty() {
        String::new()
    } else {
        format!(" of {of}")
    };
    format!(
        " (published page{}: {} rows of its §4 table)",
        crate::sanitize::markdown(&of),
        p.rows.len()
    )
}

/// The rows to show: with `--common`, or by default when a side is a published dataset (most
/// of whose jobs a run never has), only the jobs both sides have, and a line on stderr saying
/// how many were left out; none in common is an error naming both sides.
fn only_common(
    rows: Vec<crate::report::compare::Comparison>,
    args: &CompareArgs,
    sides: [&RunRecords; 2],
) -> anyhow::Result<Vec<crate::report::compare::Comparison>> {
    let common = args.common || (!args.all && sides.iter().any(|s| s.published));
    if !common {
        return Ok(rows);
    }
    let total = rows.len();
    let kept: Vec<_> = rows.into_iter().filter(|r| !r.is_one_sided()).collect();
    if kept.is_empty() {
        anyhow::bail!(
            "{} and {}: no job in common (no instance measured at the same length on both \
             sides): nothing to compare; `--all` lists each side's jobs",
            crate::sanitize::path_as_given(&args.a),
            crate::sanitize::path_as_given(&args.b)
        );
    }
    if kept.len() < total {
        eprintln!(
            "{} job(s) only in A or only in B left out (only the jobs both sides have{}): \
             `--all` lists them",
            total - kept.len(),
            if args.common {
                ""
            } else {
                ", the default beside a published dataset"
            }
        );
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    #[test]
    fn margins_read_as_percent_or_fraction() {
        assert_eq!(super::margin("2%"), Ok(0.02));
        assert_eq!(super::margin(" 2.5 % "), Ok(0.025));
        assert_eq!(super::margin("0.02"), Ok(0.02));
        assert!(super::margin("-1%").is_err());
        assert!(super::margin("two").is_err());
    }
}
