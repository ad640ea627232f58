//! Progress panel: the current job, its trial k/n and calls done, the run's jobs done and
//! ETA with a bar, then the event log (KAT results, disturbed retries, faults with the
//! worker's stderr tail), newest last, scrollable.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Gauge, Paragraph};

use super::{ACCENT, DIM, WARN, block, fit, log_color};
use crate::format;
use crate::tui::app::{App, JobState, KatState, Panel, RunState};

/// What the engine is doing right now, in one line.
pub fn status_line(app: &App) -> String {
    if let Some(j) = app.current.as_ref().and_then(|k| app.job(k)) {
        if let (Some(o), JobState::Running { .. }) = (&j.overdue, &j.state) {
            return format!(
                "▶ {} · {} ⚠",
                j.key,
                format::overdue(o.trial, o.trials, o.elapsed, o.expected)
            );
        }
        if let JobState::Running {
            trial,
            trials,
            calls_done,
            calls_total,
        } = &j.state
        {
            // The effective clock of the last witnessed trial, where the hardware has one.
            let clock = j.clock_hz.map_or(String::new(), |(hz, in_band)| {
                format!(
                    " · {} GHz{}",
                    format::ghz(hz),
                    if in_band { "" } else { " ⚠" }
                )
            });
            return format!(
                "▶ {} · trial {trial}/{trials} · calls {} / {}{clock}",
                j.key,
                format::int(Some(*calls_done as f64)),
                format::int(Some(*calls_total as f64)),
            );
        }
        return format!("▶ {} · starting", j.key);
    }
    if let Some((label, done, total)) = app.kat.iter().find_map(|(l, s)| match s {
        KatState::Running { done, total } => Some((l, *done, *total)),
        _ => None,
    }) {
        return format!("▶ KAT {label}: {done}/{total} vectors");
    }
    match &app.run {
        RunState::Idle if app.read_only => "watching · waiting for the run to start".into(),
        RunState::Idle => "idle · Space selects, 1–8 picks lengths, s starts".into(),
        RunState::Running { cancelling: true } | RunState::Kats { cancelling: true } => {
            "cancelling…".into()
        }
        RunState::Running { .. } if app.read_only => "watching: the writer prepares…".into(),
        RunState::Running { .. } if app.cpu_wait.is_some() => {
            format!("⏸ {}", app.cpu_wait_line().unwrap_or_default())
        }
        RunState::Running { .. } => "preparing: KAT, host check, calibration…".into(),
        RunState::Kats { .. } => "checking KATs…".into(),
        // The way on first: the reasons can be long and are cut at the edge.
        RunState::Refused { host: true, .. } => format!(
            "refused: {} host check(s) fail · A: measure anyway · r: re-check",
            app.host
                .iter()
                .filter(|r| r.status == crate::host::Status::Fail)
                .count()
        ),
        RunState::Refused { reason, .. } => format!("refused: {reason}"),
        RunState::Finished {
            cancelled,
            wall,
            finished,
            failed,
        } => {
            let again = if app.read_only {
                " · read-only"
            } else {
                " · s runs again"
            };
            let resume = crate::tui::panel::results::incomplete_line(app)
                .map_or_else(String::new, |l| format!(" · {l}"));
            format!(
                "{} · {finished} done, {failed} failed in {}{again}{resume}",
                if *cancelled { "cancelled" } else { "finished" },
                format::duration(*wall)
            )
        }
        RunState::Lost(why) => match &app.run_dir {
            // The way on first: the reason can be long and is cut at the edge; it can quote a
            // journal or a path, so it is shown escaped.
            Some(dir) => format!(
                "writer gone · resume with `cyclescope run --resume {}` · {}",
                crate::sanitize::shell_path(dir),
                crate::sanitize::terminal(why)
            ),
            None => format!(
                "the writing process is gone: {}",
                crate::sanitize::terminal(why)
            ),
        },
    }
}

/// The bottom border while the log is scrolled back: `↓ N new` for lines that arrived
/// unseen, else how many lines lie below the view (None while it follows).
fn scrolled_back(app: &App) -> Option<String> {
    match (app.log_back, app.log_unseen) {
        (0, _) => None,
        (_, 0) => Some(format!(" ↓{} ", app.log_back)),
        (_, n) => Some(format!(" ↓ {n} new ")),
    }
}

pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let mut blk = block(app, Panel::Progress, "Progress".into());
    if let Some(hint) = scrolled_back(app) {
        blk = blk.title_bottom(
            Line::from(Span::styled(
                hint,
                Style::new().fg(WARN).add_modifier(Modifier::BOLD),
            ))
            .right_aligned(),
        );
    }
    let inner = blk.inner(area);
    frame.render_widget(blk, area);
    let [status, bar, log] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(0),
    ])
    .areas(inner);
    let width = usize::from(inner.width);
    frame.render_widget(
        Line::from(Span::styled(
            fit(&status_line(app), width),
            Style::new().add_modifier(Modifier::BOLD),
        )),
        status,
    );

    let (done, total) = app.run_counts();
    let eta = app.eta_seconds().map_or(String::new(), |s| {
        format!(
            " · ETA {}",
            format::duration(std::time::Duration::from_secs_f64(s.max(0.0)))
        )
    });
    // Queueing for the CPU, the run has no jobs yet: the last run's count would mislead.
    let (label, ratio) = if app.cpu_wait.is_some() {
        ("no job yet · the run waits for its CPU".to_string(), 0.0)
    } else if total > 0 {
        (
            format!("jobs {done}/{total}{eta}"),
            done as f64 / total as f64,
        )
    } else {
        (format!("jobs {done}/{total}{eta}"), 0.0)
    };
    frame.render_widget(
        Gauge::default()
            .ratio(ratio.clamp(0.0, 1.0))
            .label(label)
            .gauge_style(Style::new().fg(ACCENT).bg(ratatui::style::Color::Black))
            .use_unicode(true),
        bar,
    );

    let h = usize::from(log.height);
    let end = app.log.len().saturating_sub(app.log_back);
    let start = end.saturating_sub(h);
    let lines: Vec<Line> = app.log[start..end]
        .iter()
        .map(|l| {
            Line::from(Span::styled(
                fit(&l.text, width),
                Style::new().fg(log_color(l.level)),
            ))
        })
        .collect();
    if lines.is_empty() {
        frame.render_widget(
            Span::styled("events appear here", Style::new().fg(DIM)),
            log,
        );
    } else {
        frame.render_widget(Paragraph::new(lines), log);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::demo;

    #[test]
    fn shows_the_trial_the_eta_and_the_log() {
        let app = demo::measuring();
        assert_eq!(
            status_line(&app),
            "▶ sm3hash-256 @ 32 B · trial 3/5 · calls 40.0 k / 100.0 k"
        );
        let text = demo::draw_text(90, 8, |f| {
            render(f, f.area(), &app);
        });
        assert!(text.contains("jobs 1/4 · ETA"), "{text}");
        assert!(text.contains("trial 2 disturbed, re-run"), "{text}");
    }

    #[test]
    fn a_trial_far_past_its_plan_shows_how_long_against_what_was_expected() {
        use crate::vocabulary::EngineEvent;
        use std::time::Duration;
        let mut app = demo::measuring();
        let job = app.current.clone().unwrap();
        let overdue = |elapsed| EngineEvent::TrialOverdue {
            job: job.clone(),
            trial: 3,
            trials: 5,
            elapsed: Duration::from_secs(elapsed),
            expected: Duration::from_millis(42),
        };
        app.apply(overdue(2));
        app.apply(overdue(12));
        assert_eq!(
            status_line(&app),
            "▶ sm3hash-256 @ 32 B · trial 3/5: 12 s, expected 42 ms ⚠"
        );
        let text = demo::draw_text(90, 8, |f| {
            render(f, f.area(), &app);
        });
        // One log line for the trial, from its first notice; the status line keeps counting.
        assert_eq!(text.matches("far past its plan").count(), 1, "{text}");
        assert!(text.contains("trial 3/5: 2 s, expected 42 ms"), "{text}");
        // The next trial's progress ends the notice.
        let snapshot = app.job(&job).and_then(|j| j.snapshot.clone()).unwrap();
        app.apply(EngineEvent::TrialProgress {
            job: job.clone(),
            trial: 4,
            trials: 5,
            calls_done: 60_000,
            calls_total: 100_000,
            snapshot,
        });
        assert!(
            status_line(&app).contains("trial 4/5 · calls"),
            "{}",
            status_line(&app)
        );
    }

    /// Scrolled back, the log keeps its view and counts the lines that arrive below; back at
    /// the bottom it follows again.
    #[test]
    fn a_scrolled_log_counts_new_lines_and_follows_again_at_the_bottom() {
        use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
        let mut app = demo::log_scrolled();
        let draw = |app: &App| {
            demo::draw_text(100, 8, |f| {
                render(f, f.area(), app);
            })
        };
        let text = draw(&app);
        assert!(text.contains("↓ 3 new"), "{text}");
        assert!(!text.contains("B faster"), "the view stayed:\n{text}");
        let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
        // The two older lines below the view come first: nothing new is seen yet.
        app.on_key(key(KeyCode::Down));
        app.on_key(key(KeyCode::Down));
        let text = draw(&app);
        assert!(
            text.contains("↓ 3 new") && !text.contains("B faster"),
            "{text}"
        );
        app.on_key(key(KeyCode::Down));
        let text = draw(&app);
        assert!(
            text.contains("↓ 2 new") && text.contains("B faster"),
            "{text}"
        );
        for _ in 0..2 {
            app.on_key(key(KeyCode::Down));
        }
        let text = draw(&app);
        assert!(!text.contains(" new ") && !text.contains('↓'), "{text}");
        app.push_log(crate::tui::app::LogLevel::Info, "one more line");
        let text = draw(&app);
        assert!(
            text.contains("one more line") && !text.contains('↓'),
            "{text}"
        );
    }

    #[test]
    fn a_fault_shows_the_workers_stderr_tail() {
        let app = demo::fault();
        let text = demo::draw_text(90, 10, |f| {
            render(f, f.area(), &app);
        });
        assert!(
            text.contains("FAULT CRASH: worker killed by SIGSEGV"),
            "{text}"
        );
        assert!(text.contains("stderr│ Segmentation fault"), "{text}");
        assert!(status_line(&app).starts_with("finished · 1 done, 1 failed"));
    }
}
