//! The results as the operator sees them, to files: the printed Markdown (one §4 table per
//! run folder, with the ⚠ explanations) and a CSV of the visible rows in their current order,
//! one column per figure (the mean's CI and the doubts included); with a tuning history of
//! the followed instance, its builds (build, flags, figure, verdict) as a Markdown section and
//! a third CSV. Writes only the new files it names; never touches records.

use std::path::{Path, PathBuf};

use super::app::App;
use super::panel::results;
use crate::campaign::ab_result::EXPORT_COLUMNS;
use crate::report::export::ROBUST_COLUMNS;

/// The CSV columns, in order (then `export::ROBUST_COLUMNS`, then the A/B's).
const COLUMNS: [&str; 22] = [
    "run",
    "run_folder",
    "baseline",
    "candidate",
    "instance",
    "message_bytes",
    "mark",
    "mean_cycles",
    "ci95_relative",
    "cycles_per_byte",
    "mean_seconds",
    "mb_per_second",
    "measurements",
    "trials",
    "iterations_per_trial",
    "disturbed_retries_rerun",
    "doubts",
    "failure",
    "x_pseudoxof",
    "x_pseudoxof_doubtful",
    "reference_job",
    "built_with",
];

/// The visible results rows as CSV (the `csv` crate quotes), header first; after them one
/// row per length of each interleaved A/B result (mark `=`, B's figure, B/A and its interval
/// in the `ab_*` columns), as the Results panel lists them.
pub fn csv(app: &App) -> String {
    use crate::report::export::number;
    // How each run's instances were built, from its records.
    let builds: Vec<_> = app
        .runs
        .iter()
        .map(|d| crate::report::readback::builds(d))
        .collect();
    let folder_of = |run: usize| {
        app.runs
            .get(run)
            .map(|d| crate::catalog::display_path(d))
            .unwrap_or_default()
    };
    let mut rows: Vec<Vec<String>> = app
        .result_rows()
        .iter()
        .map(|r| {
            let folder = folder_of(r.run);
            let s = r.summary;
            let doubts: Vec<String> = results::doubts(r).iter().map(|d| d.text()).collect();
            vec![
                (r.run + 1).to_string(),
                folder,
                (app.baseline == Some(r.run)).to_string(),
                r.key.candidate.clone(),
                r.key.label.clone(),
                r.key.input_bytes.to_string(),
                results::mark(r).0.to_string(),
                number(s.and_then(|s| s.mean_cycles)),
                number(s.and_then(|s| s.ci95_relative)),
                number(
                    s.and_then(|s| s.mean_cycles)
                        .map(|c| c / r.key.input_bytes.max(1) as f64),
                ),
                number(s.map(|s| s.mean_seconds)),
                number(s.map(|s| s.throughput_mb_per_second)),
                s.map_or_else(String::new, |s| s.measurements.to_string()),
                s.map_or_else(String::new, |s| s.trials.to_string()),
                s.map_or_else(String::new, |s| s.iterations_per_trial.to_string()),
                r.retries.to_string(),
                doubts.join("; "),
                r.failure.unwrap_or_default().to_string(),
                number(r.x_pseudoxof.map(|x| x.value)),
                r.x_pseudoxof.is_some_and(|x| x.doubtful).to_string(),
                r.reference.to_string(),
                builds
                    .get(r.run)
                    .and_then(|b| b.get(&(r.key.candidate.clone(), r.key.label.clone())))
                    .cloned()
                    .unwrap_or_default(),
            ]
            .into_iter()
            .chain(crate::report::export::robust_cells(
                s.and_then(|s| s.robust.as_ref()),
            ))
            .chain(std::iter::repeat_n(String::new(), EXPORT_COLUMNS.len()))
            .collect()
        })
        .collect();
    for (run, ab) in &app.ab_results {
        for c in &ab.lengths {
            let mut cells = vec![String::new(); COLUMNS.len() + ROBUST_COLUMNS.len()];
            cells[0] = (run + 1).to_string();
            cells[1] = folder_of(*run);
            cells[2] = (app.baseline == Some(*run)).to_string();
            cells[3] = ab.b.candidate.clone();
            cells[4] = ab.b.label.clone();
            cells[5] = c.input_bytes.to_string();
            cells[6] = "=".into();
            cells[7] = number(c.b_mean_cycles);
            cells.extend(ab.export_cells(c));
            rows.push(cells);
        }
    }
    let header: Vec<&str> = COLUMNS
        .iter()
        .chain(&ROBUST_COLUMNS)
        .chain(&EXPORT_COLUMNS)
        .copied()
        .collect();
    crate::report::export::csv(&header, &rows)
}

/// The Markdown section of a tuning history: the builds, their flags, figures and verdicts.
pub fn history_markdown(label: &str, rows: &[crate::journal::BuildRow]) -> String {
    format!(
        "\n## Tuning history of {}\n\nEvery build the journal holds, per length, each judged \
         against the build before it.\n\n{}",
        crate::sanitize::markdown_code(label),
        crate::journal::table(rows)
    )
}

/// Writes `results-<UTC>.md` and `.csv` into `dir`, and with a tuning history of the
/// followed instance (`history`) its section in the Markdown and `history-<UTC>.csv`;
/// returns the paths written.
pub fn write(
    app: &App,
    history: Option<&(String, Vec<crate::journal::BuildRow>)>,
    dir: &Path,
) -> std::io::Result<Vec<PathBuf>> {
    // Never through a link or into another user's folder (cyclescope may run as root).
    let own = |e: crate::owned::OwnedError| std::io::Error::other(e.to_string());
    crate::owned::create_run_folder(dir).map_err(own)?;
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
    let md = dir.join(format!("results-{stamp}.md"));
    let csv_path = dir.join(format!("results-{stamp}.csv"));
    let mut text = results::leaving_text(app);
    if let Some((label, rows)) = history {
        text += &history_markdown(label, rows);
    }
    crate::owned::write_own_file(&md, text.as_bytes()).map_err(own)?;
    crate::owned::write_own_file(&csv_path, csv(app).as_bytes()).map_err(own)?;
    let mut written = vec![md, csv_path];
    if let Some((_, rows)) = history {
        let path = dir.join(format!("history-{stamp}.csv"));
        crate::owned::write_own_file(&path, crate::journal::rows_csv(rows).as_bytes())
            .map_err(own)?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::demo;

    #[test]
    fn the_csv_has_every_visible_row_in_order_with_its_run_and_doubts() {
        let app = demo::rerun();
        let text = csv(&app);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 7, "{text}");
        assert!(lines[0].starts_with("run,run_folder,baseline,candidate,instance"));
        assert!(
            lines[1].starts_with(
                "2,runs/demo-20260101T000100Z,false,iccs,sm3hash-256,32,✓,1455,0.004,"
            ),
            "{}",
            lines[1]
        );
        let disturbed = lines
            .iter()
            .find(|l| l.contains(",pseudoXOF-512,1024,"))
            .expect("the disturbed row");
        assert!(
            disturbed.starts_with("1,runs/demo-20260101T000000Z,true,"),
            "{disturbed}"
        );
        assert!(disturbed.contains(",⚠,46200,0.031,"), "{disturbed}");
        assert!(
            disturbed.contains(",2,1 kept trial(s) disturbed"),
            "{disturbed}"
        );
        // The ratio to the session's pseudoXOF of the same width, last.
        let xof = lines
            .iter()
            .find(|l| l.contains(",pseudoXOF-512,32,"))
            .expect("the baseline row");
        assert!(xof.ends_with(",1,false,false,,,,,,,,,,,"), "{xof}");
    }

    #[test]
    fn writing_makes_two_new_files_with_the_tables() {
        let dir = tempfile::tempdir().unwrap();
        let written = write(&demo::finished(), None, dir.path()).unwrap();
        let [md, csv_path] = &written[..] else {
            panic!("{written:?}")
        };
        let md = std::fs::read_to_string(md).unwrap();
        assert!(
            md.contains("| `pseudoXOF-512` | 1024 B | 46.2 k ±3.1 % ⚠ |"),
            "{md}"
        );
        let csv_text = std::fs::read_to_string(csv_path).unwrap();
        assert_eq!(csv_text.lines().count(), 5);
    }
}

#[cfg(test)]
mod history_tests;
