//! Catalog panel: candidates → instances with digest width and KAT state, the selection
//! marks, the S1–S8 length toggles and one line of detail (filter, KAT failure reason, or the
//! chosen lengths).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{
    ACCENT, BAD, DIM, WARN, block, cursor_style, fit, kat_span, scroll_hint, scroll_start,
};
use crate::catalog::GUIDE_LENGTHS;
use crate::format;
use crate::tui::app::{App, KatState, Mode, Panel, TreeRow};

/// Draws the panel; returns the tree's row area and its first visible row.
pub fn render(frame: &mut Frame, area: Rect, app: &App) -> Option<(Rect, usize)> {
    let title = format!("Catalog · {} selected", app.selected.len());
    let blk = block(app, Panel::Catalog, title);
    let inner = blk.inner(area);
    let [tree, lengths, detail] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(inner);

    let rows = app.tree_rows();
    let height = usize::from(tree.height);
    let first = scroll_start(app.cursor, height);
    let blk = match scroll_hint(first, height, rows.len()) {
        Some(h) => blk.title_bottom(Line::from(h).right_aligned()),
        None => blk,
    };
    frame.render_widget(blk, area);
    let focused = app.focus == Panel::Catalog;
    let width = usize::from(tree.width);
    // The KAT column fits the longest status word shown (MISMATCH, CRYPTOFAIL, …).
    let kat_w = rows
        .iter()
        .filter_map(|r| match r {
            TreeRow::Instance(ci, ii) => {
                Some(kat_span(app.kat_state(&app.candidates[*ci].instances[*ii].label)).width())
            }
            TreeRow::Candidate(_) => None,
        })
        .max()
        .unwrap_or(4)
        .max(4);
    let lines: Vec<Line> = rows
        .iter()
        .enumerate()
        .skip(first)
        .take(height)
        .map(|(i, row)| {
            let mut line = tree_line(app, *row, width, kat_w);
            if i == app.cursor {
                line = line.patch_style(cursor_style(focused));
            }
            line
        })
        .collect();
    if rows.is_empty() {
        frame.render_widget(
            Paragraph::new(Span::styled(
                "nothing matches the filter",
                Style::new().fg(DIM),
            )),
            tree,
        );
    } else {
        frame.render_widget(Paragraph::new(lines), tree);
    }
    frame.render_widget(length_toggles(app), lengths);
    frame.render_widget(detail_line(app, usize::from(detail.width)), detail);
    Some((tree, first))
}

fn tree_line(app: &App, row: TreeRow, width: usize, kat_w: usize) -> Line<'static> {
    match row {
        TreeRow::Candidate(ci) => {
            let c = &app.candidates[ci];
            Line::from(vec![
                Span::styled(
                    format!("▾ {} ", c.id),
                    Style::new().add_modifier(Modifier::BOLD),
                ),
                Span::styled(
                    fit(
                        &crate::sanitize::terminal(&c.algorithm),
                        width.saturating_sub(c.id.len() + 3),
                    ),
                    Style::new().fg(DIM),
                ),
            ])
        }
        TreeRow::Instance(ci, ii) => {
            let inst = &app.candidates[ci].instances[ii];
            let on = app.selected.contains(&inst.label);
            let mark = if on { "[x] " } else { "[ ] " };
            // " [x] " + label + bits(5) + " " + KAT(kat_w), the status right-aligned
            let label_w = width.saturating_sub(1 + 4 + 5 + 1 + kat_w).max(4);
            let kat = kat_span(app.kat_state(&inst.label));
            let pad = " ".repeat(kat_w.saturating_sub(kat.width()));
            Line::from(vec![
                Span::raw(" "),
                Span::styled(
                    mark,
                    if on {
                        Style::new().fg(ACCENT)
                    } else {
                        Style::new().fg(DIM)
                    },
                ),
                Span::raw(format!("{:<label_w$}", fit(&row_label(app, inst), label_w))),
                Span::styled(format!("{:>5} ", inst.digest_bits), Style::new().fg(DIM)),
                Span::raw(pad),
                kat,
            ])
        }
    }
}

/// The label, and for an instance built from sources its flags (`FIXH-256 guide → -O0`).
fn row_label(app: &App, inst: &crate::catalog::Instance) -> String {
    match app
        .sources
        .as_ref()
        .and_then(|s| s.profile_text(&inst.label))
    {
        Some(p) => format!("{} {p}", shown_label(inst)),
        None => shown_label(inst),
    }
}

fn length_toggles(app: &App) -> Line<'static> {
    let mut spans = vec![Span::styled("len ", Style::new().fg(DIM))];
    for i in 0..GUIDE_LENGTHS.len() {
        let style = if app.has_guide_length(i) {
            Style::new().fg(ACCENT).add_modifier(Modifier::BOLD)
        } else {
            Style::new().fg(DIM)
        };
        // Chosen or not shows without colour too (NO_COLOR): `S4` chosen, `·4` not.
        let text = if app.has_guide_length(i) {
            format!("S{}", i + 1)
        } else {
            format!("·{}", i + 1)
        };
        spans.push(Span::styled(text, style));
        spans.push(Span::raw(" "));
    }
    let custom = app.custom_lengths().count();
    if custom > 0 {
        spans.push(Span::styled(format!("+{custom}"), Style::new().fg(ACCENT)));
    }
    Line::from(spans)
}

fn detail_line(app: &App, width: usize) -> Line<'static> {
    match &app.mode {
        Mode::Filter => {
            return Line::from(vec![
                Span::styled("/", Style::new().fg(ACCENT)),
                Span::raw(format!("{}▏", app.filter)),
            ]);
        }
        Mode::LengthInput(buf) => {
            return Line::from(vec![
                Span::styled("length: ", Style::new().fg(ACCENT)),
                Span::raw(format!("{buf}▏")),
            ]);
        }
        Mode::ProfileInput(buf) => {
            return Line::from(vec![
                Span::styled("profile/flags: ", Style::new().fg(ACCENT)),
                Span::raw(format!("{buf}▏")),
            ]);
        }
        _ => {}
    }
    if !app.filter.is_empty() {
        return Line::from(Span::styled(
            fit(&format!("/{} (Esc clears)", app.filter), width),
            Style::new().fg(ACCENT),
        ));
    }
    if let Some(inst) = app.cursor_instance()
        && let KatState::Done { status, detail, .. } = app.kat_state(&inst.label)
        && !status.is_pass()
    {
        let nokat = !status.blames_library();
        // The way on comes first: a long detail is cut at the panel's edge.
        let way = if app.allow_kat_fail || app.read_only {
            ""
        } else {
            "A times it anyway · "
        };
        // The detail can quote a manifest the submission shipped: escaped like the log.
        return Line::from(Span::styled(
            fit(
                &crate::sanitize::terminal(&format!("{way}KAT {status}: {detail}")),
                width,
            ),
            Style::new().fg(if nokat { WARN } else { BAD }),
        ));
    }
    // A pass with findings: measured like any pass, the findings said where the cursor is.
    if let Some(inst) = app.cursor_instance()
        && let KatState::Done {
            status, findings, ..
        } = app.kat_state(&inst.label)
        && let Some(note) = crate::conform::findings_note(findings)
    {
        let text = format!("KAT {status} ({note})");
        return Line::from(Span::styled(
            fit(&crate::sanitize::terminal(&text), width),
            Style::new().fg(WARN),
        ));
    }
    let lengths: Vec<String> = app.lengths.iter().map(|&l| format::size(l)).collect();
    let text = if lengths.is_empty() {
        "no length chosen (1–8, l)".to_string()
    } else {
        lengths.join(" · ")
    };
    Line::from(Span::styled(fit(&text, width), Style::new().fg(DIM)))
}

/// The label, and the ABI when it is not the ICCS `CryptHash` (a SUPERCOP `crypto_hash`).
fn shown_label(inst: &crate::catalog::Instance) -> String {
    if inst.abi.is_iccs() {
        inst.label.clone()
    } else {
        format!("{} ({})", inst.label, inst.abi.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kat::KatStatus;
    use crate::tui::demo;

    #[test]
    fn rows_show_selection_width_and_kat() {
        let app = demo::fault();
        let text = demo::draw_text(32, 16, |f| {
            render(f, f.area(), &app);
        });
        assert!(text.contains("Catalog · 3 selected"), "{text}");
        // The status by its name; the column widens to the longest word shown.
        assert!(text.contains("[x] pseudohash…  512 MISMATCH"), "{text}");
        assert!(text.contains("[x] sm3hash-256  256     PASS"), "{text}");
        assert!(text.contains("[ ] pseudoXOF-…  256        ·"), "{text}");
        assert!(text.contains("len S1 ·2 ·3 S4 ·5 ·6 ·7 ·8"), "{text}");
        // 14 rows of tree in 13: the border says how many are hidden below.
        assert!(text.contains(" ↓1 ┛"), "{text}");
        assert!(text.contains("32 B · 1 KiB"), "{text}");
    }

    #[test]
    fn a_nonconforming_instance_names_its_failed_check_in_the_kat_column() {
        let mut app = demo::fault();
        app.apply(crate::vocabulary::EngineEvent::KatFinished {
            label: "sm3hash-256".into(),
            status: KatStatus::Nonconform,
            detail: "alignment: the digest with the message at offset 1 …".into(),
            log: None,
            check: Some(crate::conform::Check::Alignment),
            findings: Vec::new(),
        });
        app.cursor = 1;
        let text = demo::draw_text(60, 16, |f| {
            render(f, f.area(), &app);
        });
        assert!(text.contains("256 ✗ alignment┃"), "{text}");
        assert!(
            text.contains("KAT NONCONFORM: alignment: the digest"),
            "{text}"
        );
    }

    #[test]
    fn a_pass_with_a_finding_marks_it_and_says_it_on_the_detail_line() {
        let mut app = demo::fault();
        let crash = crate::conform::CheckResult {
            check: crate::conform::Check::DigestLength,
            outcome: crate::conform::Outcome::Finding {
                evidence: crate::conform::Evidence {
                    bits: 256,
                    offset: None,
                    byte: None,
                    what: "the worker ended (signal=SIGFPE)\x1b[2J".into(),
                },
            },
        };
        app.apply(crate::vocabulary::EngineEvent::KatFinished {
            label: "sm3hash-256".into(),
            status: KatStatus::Pass,
            detail: String::new(),
            log: None,
            check: None,
            findings: vec![crash],
        });
        assert!(app.kat_state("sm3hash-256").passed(), "it is measured");
        app.cursor = 1;
        let text = demo::draw_text(80, 16, |f| {
            render(f, f.area(), &app);
        });
        assert!(text.contains("256 PASS ⚑ digest_length┃"), "{text}");
        assert!(
            text.contains("KAT PASS (finding, not blocking: digest_length: the worker ended"),
            "{text}"
        );
        assert!(!text.contains('\x1b'), "{text}");
    }

    #[test]
    fn a_supercop_instance_says_so() {
        let mut app = demo::fault();
        app.candidates[0].instances[0].abi = crate::plugin::Abi::Supercop;
        let label = app.candidates[0].instances[0].label.clone();
        let text = demo::draw_text(60, 16, |f| {
            render(f, f.area(), &app);
        });
        assert!(text.contains(&format!("{label} (supercop)")), "{text}");
    }

    /// A manifest error quotes the manifest (a submission ships its own): the detail line
    /// shows its control characters escaped, never as themselves.
    #[test]
    fn a_manifest_error_on_the_detail_line_is_escaped() {
        let mut app = demo::bad_manifest();
        app.apply(crate::vocabulary::EngineEvent::KatFinished {
            label: "sm3hash-256".into(),
            status: KatStatus::BadManifest,
            detail: "kat.sha256:4: \u{1b}[2J\u{7}x is listed twice".into(),
            log: None,
            check: None,
            findings: Vec::new(),
        });
        let text = demo::draw_text(200, 16, |f| {
            render(f, f.area(), &app);
        });
        let line = text
            .lines()
            .find(|l| l.contains("KAT BADMANIFEST: kat.sha256:4: "))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(
            !line.contains('\u{1b}') && !line.contains('\u{7}'),
            "{line:?}"
        );
        assert!(line.contains("x is listed twice"), "{line}");
        // Shown, not dropped: the reader sees what the manifest holds.
        let esc = crate::sanitize::terminal("\u{1b}");
        assert!(line.contains(esc.as_ref()), "{line:?}");
    }

    #[test]
    fn the_detail_line_shows_a_kat_failure_and_the_filter() {
        let mut app = demo::fault();
        app.cursor = 2; // pseudohash-512
        let text = demo::draw_text(40, 16, |f| {
            render(f, f.area(), &app);
        });
        assert!(text.contains("A times it anyway · KAT MISMATCH"), "{text}");
        app.filter = "1024".into();
        let text = demo::draw_text(40, 16, |f| {
            render(f, f.area(), &app);
        });
        assert!(
            text.contains("pseudohash-1024") && text.contains("pseudoXOF-1024"),
            "{text}"
        );
        assert!(
            !text.contains("sm3hash") && text.contains("/1024 (Esc clears)"),
            "{text}"
        );
    }
}
