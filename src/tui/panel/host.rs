//! Host panel: every host check with its coloured verdict and value, and the fix hint of the
//! check under the cursor. Re-checking is an action (`r`); this file only draws.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::{BAD, DIM, GOOD, WARN, block, cursor_style, fit, scroll_start};
use crate::host::Status as CheckStatus;
use crate::tui::app::{App, HostRow, Panel};

/// A row as shown: the busy-CPU row says what this run's trials measured once they waited
/// for their CPU more than a trial may (their run-queue wait, kept and re-run trials alike),
/// whatever the look at the process list found; every other row as checked.
fn shown(app: &App, r: &HostRow) -> (CheckStatus, String, Option<String>) {
    let busy = r.check == Some(crate::host::HostCheck::BusyCpu) && app.run_queue.disturbs();
    match app.run_queue.share().filter(|_| busy) {
        Some(share) => (
            CheckStatus::Warn,
            format!("trials waited {:.0} % of their time", 100.0 * share),
            Some(format!(
                "something else runs on CPU {}: stop it, or measure on another CPU",
                app.cpu
            )),
        ),
        None => (r.status, r.value.clone(), r.hint.clone()),
    }
}

pub fn status_span(s: CheckStatus) -> Span<'static> {
    match s {
        CheckStatus::Pass => Span::styled("Pass", Style::new().fg(GOOD)),
        CheckStatus::Warn => Span::styled("Warn", Style::new().fg(WARN)),
        CheckStatus::Fail => {
            Span::styled("Fail", Style::new().fg(BAD).add_modifier(Modifier::BOLD))
        }
        CheckStatus::Unknown | CheckStatus::Skip => Span::styled("  ? ", Style::new().fg(DIM)),
    }
}

/// Draws the panel; returns the check list's area and first visible row.
pub fn render(frame: &mut Frame, area: Rect, app: &App) -> Option<(Rect, usize)> {
    let blk = block(app, Panel::Host, format!("Host · CPU {}", app.cpu));
    let inner = blk.inner(area);
    frame.render_widget(blk, area);
    let hint_h = if inner.height >= 8 { 2 } else { 1 };
    let [list, hint] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(hint_h)]).areas(inner);
    let height = usize::from(list.height);
    let first = scroll_start(app.host_cursor, height);
    let focused = app.focus == Panel::Host;
    let name_w = app
        .host
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(4)
        .min(16);
    let value_w = usize::from(list.width).saturating_sub(name_w + 6);
    let lines: Vec<Line> = app
        .host
        .iter()
        .enumerate()
        .skip(first)
        .take(height)
        .map(|(i, r)| {
            let (status, value, _) = shown(app, r);
            let line = Line::from(vec![
                status_span(status),
                Span::raw(format!(" {:<name_w$} ", fit(&r.name, name_w))),
                Span::styled(fit(&value, value_w), Style::new().fg(DIM)),
            ]);
            if i == app.host_cursor {
                line.patch_style(cursor_style(focused))
            } else {
                line
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), list);
    let text = app
        .host
        .get(app.host_cursor)
        .and_then(|r| shown(app, r).2)
        .map(|h| format!("→ {h}"))
        .unwrap_or_default();
    frame.render_widget(
        Paragraph::new(Span::styled(text, Style::new().fg(WARN))).wrap(Wrap { trim: true }),
        hint,
    );
    Some((list, first))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::demo;

    #[test]
    fn checks_show_verdict_value_and_the_selected_hint() {
        let mut app = demo::idle();
        app.host_cursor = 1;
        let text = demo::draw_text(60, 12, |f| {
            render(f, f.area(), &app);
        });
        assert!(text.contains("Host · CPU 1"), "{text}");
        assert!(text.contains("Pass architecture  x86_64"), "{text}");
        assert!(text.contains("Fail clock         not steady"), "{text}");
        assert!(
            text.contains("→ sysctl kernel.perf_event_paranoid=2"),
            "{text}"
        );
    }

    #[test]
    fn the_busy_cpu_row_says_what_the_trials_measured_not_only_the_process_list() {
        use crate::vocabulary::{EngineEvent, RunQueueWait};
        let mut app = demo::measuring();
        app.host.push(HostRow {
            check: Some(crate::host::HostCheck::BusyCpu),
            name: "busy CPU".into(),
            status: CheckStatus::Pass,
            value: "no other task running on CPU 1".into(),
            hint: None,
        });
        app.host_cursor = app.host.len() - 1;
        let draw = |app: &App| {
            demo::draw_text(60, 14, |f| {
                render(f, f.area(), app);
            })
        };
        // Waits within what a trial may have leave the row as the process list saw it.
        let wait = |waited_s, timed_s| RunQueueWait { waited_s, timed_s };
        let retried = |w| EngineEvent::TrialRetried {
            job: demo::key("sm3hash-256", 32),
            trial: 3,
            reason: "preempted".into(),
            cpu_wait: Some(w),
        };
        app.apply(retried(wait(0.001, 0.2)));
        let text = draw(&app);
        assert!(text.contains("Pass busy CPU      no other task"), "{text}");
        // A run-queue wait of 41 % over the trials, re-run and kept ones alike: a warning with
        // the share, whatever the process list showed.
        app.apply(retried(wait(0.16, 0.2)));
        app.apply(retried(wait(0.089, 0.4)));
        let text = draw(&app);
        assert!(
            text.contains("Warn busy CPU      trials waited 31 % of their time"),
            "{text}"
        );
        insta::assert_snapshot!("busy_cpu_measured_60x14", text);
        // A new run starts from its own trials.
        app.apply(EngineEvent::RunStarted {
            run_dir: "runs/next".into(),
            labels: vec!["sm3hash-256".into()],
            lengths: vec![32],
            cpus: vec![1],
            reference_jobs: Vec::new(),
        });
        assert!(draw(&app).contains("Pass busy CPU"));
    }
}
