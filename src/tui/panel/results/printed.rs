//! What leaving prints for the scrollback: each run's results as the report's §4 Markdown
//! table with the `× pseudoXOF` column (as `run` prints it) under its run folder (the baseline named), the ⚠ explanations and the counter line,
//! and for a run left unfinished how to resume it. Reads the app; draws nothing.

use std::path::{Path, PathBuf};

use crate::tui::app::{App, ResultRow, RunState};

/// The finished jobs of one run as the report's §4 Markdown table, with the lines that
/// explain its ⚠ marks (empty when the run has no results).
fn run_table(app: &App, run: usize) -> String {
    let rows: Vec<ResultRow> = app
        .result_rows()
        .into_iter()
        .filter(|r| r.run == run)
        .collect();
    let counter = crate::report::counter_of(rows.iter().filter_map(|r| r.summary));
    let mut out = crate::report::perf_table_with_ratio(
        counter,
        rows.iter().map(|r| {
            let mut cells = crate::report::perf_cells(r.key, r.summary, r.failure);
            crate::report::mark_kat(&mut cells, r.summary);
            (cells, r.reference, r.x_pseudoxof)
        }),
    );
    let mut notes =
        crate::report::doubt_notes(rows.iter().filter_map(|r| Some((r.key, r.summary?))));
    notes.extend(crate::report::kat_notes(
        rows.iter().filter_map(|r| Some((r.key, r.summary?))),
    ));
    if !notes.is_empty() {
        out.push('\n');
        for n in notes {
            out += &format!("{n}\n");
        }
    }
    if rows.iter().any(|r| r.x_pseudoxof.is_some()) {
        out += &format!(
            "\n{}\n",
            crate::baseline::divides_by(&app.xof_baseline, counter)
        );
    }
    if rows
        .iter()
        .any(|r| r.x_pseudoxof.is_some_and(|x| x.doubtful))
    {
        out += &format!("{}\n", crate::baseline::DOUBTFUL_RATIO_NOTE);
    }
    out
}

/// The lines under a run's table, as `run` prints them too: how each instance was built,
/// what measured the figures, and how the run was made.
pub fn run_readback(dir: Option<&Path>) -> String {
    use crate::report::readback;
    let Some(dir) = dir else {
        return String::new();
    };
    let mut out = String::new();
    if let Some(line) = readback::built_with_line(dir) {
        out += &format!("\n{line}\n");
    }
    if let Some(line) = readback::measured_by(dir) {
        out += &format!("\n{line}\n");
    }
    for note in readback::run_notes(dir) {
        out += &format!("{note}\n");
    }
    out
}

/// The finished jobs as the report's §4 Markdown table (all runs, one table per run folder
/// when there are several); empty when nothing finished.
#[cfg(test)]
pub fn markdown(app: &App) -> String {
    let runs = app.result_runs();
    if runs.len() == 1 {
        return run_table(app, runs[0]);
    }
    leaving_text(app)
}

/// What leaving prints: each run's table under its folder (oldest first, the baseline
/// named), what measured it, and for a run left unfinished how to resume it.
pub fn leaving_text(app: &App) -> String {
    let runs = app.result_runs();
    let mut out = String::new();
    for &run in &runs {
        let table = run_table(app, run);
        let dir = app.runs.get(run).filter(|d| !d.as_os_str().is_empty());
        if runs.len() > 1 || dir.is_some() {
            let base = if app.baseline == Some(run) {
                " (baseline)"
            } else {
                ""
            };
            let folder = dir.map_or_else(String::new, |d| {
                format!(" {}", crate::sanitize::terminal_path(d))
            });
            out += &format!("run #{}{folder}{base}\n\n", run + 1);
        }
        out += &table;
        for (_, ab) in app.ab_results.iter().filter(|(r, _)| *r == run) {
            out += &format!("\n{}\n\n{}", ab.title(), ab.markdown());
        }
        out += &run_readback(dir.map(PathBuf::as_path));
        out.push('\n');
    }
    for line in incomplete_lines(app) {
        out += &format!("{line}\n");
    }
    out.trim_end().to_string() + if out.trim().is_empty() { "" } else { "\n" }
}

/// One `incomplete k/n — resume with …` line for every run of the session left unfinished,
/// oldest first: those cancelled with `c` earlier, then the one still running when leaving.
pub fn incomplete_lines(app: &App) -> Vec<String> {
    if app.read_only {
        return Vec::new();
    }
    // The current run's own line, when it has one, says where its folder stands now.
    let current = incomplete_line(app);
    let mut lines: Vec<String> = app
        .unfinished_runs
        .iter()
        .filter(|u| current.is_none() || Some(u.dir.as_path()) != app.run_dir.as_deref())
        .map(|u| resume_line(u.done, u.total, &u.dir))
        .collect();
    lines.extend(current);
    lines
}

fn resume_line(done: usize, total: usize, dir: &Path) -> String {
    format!(
        "incomplete {done}/{total} — resume with `cyclescope run --resume {}`",
        crate::sanitize::shell_path(dir)
    )
}

/// `incomplete k/n — resume with …` when leaving a run (not a watched one) that did not
/// finish all its jobs.
pub fn incomplete_line(app: &App) -> Option<String> {
    if app.read_only {
        return None;
    }
    let unfinished = match &app.run {
        RunState::Running { .. } => true,
        RunState::Finished { cancelled, .. } => *cancelled,
        _ => false,
    };
    let (done, total) = app.run_counts();
    let dir = app.run_dir.as_deref()?;
    (unfinished && done < total).then(|| resume_line(done, total, dir))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use super::*;
    use crate::tui::demo;
    use crate::vocabulary::EngineEvent;

    fn cancel(app: &mut App) {
        app.apply(EngineEvent::RunFinished {
            cancelled: true,
            wall: Duration::from_secs(5),
            finished: 1,
            failed: 0,
        });
    }

    fn start_second(app: &mut App, dir: &str) {
        app.apply(EngineEvent::RunStarted {
            run_dir: PathBuf::from(dir),
            labels: vec!["sm3hash-256".into()],
            lengths: vec![32, 1024],
            cpus: vec![1],
            reference_jobs: Vec::new(),
        });
    }

    fn incomplete(out: &str) -> Vec<&str> {
        out.lines()
            .filter(|l| l.starts_with("incomplete "))
            .collect()
    }

    /// A run cancelled with `c` keeps its line after another run, whether that one was left
    /// running (`q`) or ran to its end.
    #[test]
    fn every_run_cancelled_in_the_session_gets_its_resume_line() {
        let mut app = demo::measuring();
        cancel(&mut app);
        let first =
            "incomplete 1/4 — resume with `cyclescope run --resume runs/demo-20260101T000000Z`";
        assert_eq!(incomplete(&leaving_text(&app)), [first]);

        start_second(&mut app, "runs/demo-20260101T000100Z");
        let out = leaving_text(&app);
        assert_eq!(
            incomplete(&out),
            [
                first,
                "incomplete 0/2 — resume with `cyclescope run --resume runs/demo-20260101T000100Z`"
            ],
            "{out}"
        );

        app.apply(EngineEvent::RunFinished {
            cancelled: false,
            wall: Duration::from_secs(5),
            finished: 2,
            failed: 0,
        });
        assert_eq!(incomplete(&leaving_text(&app)), [first]);
    }

    /// A run written into a cancelled run's folder again replaces its line: a complete one
    /// removes it, so a folder is never named twice nor with stale counts.
    #[test]
    fn a_folder_run_again_is_named_once_with_its_latest_counts() {
        let mut app = demo::measuring();
        cancel(&mut app);
        start_second(&mut app, "runs/demo-20260101T000000Z");
        let out = leaving_text(&app);
        assert_eq!(incomplete(&out).len(), 1, "{out}");
        app.apply(EngineEvent::RunFinished {
            cancelled: false,
            wall: Duration::from_secs(5),
            finished: 0,
            failed: 0,
        });
        let out = leaving_text(&app);
        assert!(incomplete(&out).is_empty(), "{out}");
        app.read_only = true;
        assert!(incomplete_lines(&app).is_empty());
    }
}
