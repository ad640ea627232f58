//! The Results panel's Δ columns: for a row measured earlier too (`App::delta`), the earlier
//! mean cycles and its run, this figure over it (`×0.82`), and the `compare` verdict in a word
//! (faster / slower beyond run-to-run noise, ≈ within noise, ⚠ doubtful when either figure is
//! and their uninterrupted-call means cannot settle it; a `*` when they did). Only these cells
//! and their detail line live here; the panel appends them after the §4 columns it shows.

use ratatui::style::Color;

use super::super::{BAD, DIM, GOOD, WARN};
use crate::report::compare::Verdict;
use crate::tui::app::{App, Delta, ResultRow};

/// The column headers.
pub const HEADER: [&str; 3] = ["earlier", "×", "Δ"];

/// The verdict in a word, and its colour.
pub fn word(v: &Verdict) -> (&'static str, Color) {
    match v {
        Verdict::Faster => ("faster", GOOD),
        Verdict::Slower => ("slower", BAD),
        Verdict::WithinNoise => ("≈ noise", DIM),
        Verdict::Doubtful(..) => ("⚠ doubt", WARN),
        Verdict::Exact(std::cmp::Ordering::Less) => ("fewer (exact)", GOOD),
        Verdict::Exact(std::cmp::Ordering::Equal) => ("= same (exact)", DIM),
        Verdict::Exact(std::cmp::Ordering::Greater) => ("more (exact)", BAD),
        Verdict::NotComparable(_) | Verdict::Invalid(..) | Verdict::OnlyInA | Verdict::OnlyInB => {
            ("n/c", WARN)
        }
    }
}

/// The three cells of a row with an earlier figure.
pub fn cells(d: &Delta) -> [String; 3] {
    [
        format!(
            "{} {}",
            d.from,
            crate::format::int(Some(d.earlier.mean_cycles))
        ),
        format!("×{:.3}", d.ratio),
        format!("{}{}", word(&d.verdict).0, if d.robust { "*" } else { "" }),
    ]
}

/// The rows' Δ cells (None where a row has no earlier figure); empty when no row has one.
pub fn table(app: &App, rows: &[ResultRow]) -> Vec<Option<(Delta, [String; 3])>> {
    let all: Vec<Option<(Delta, [String; 3])>> = rows
        .iter()
        .map(|r| app.delta(r).map(|d| (d.clone(), cells(&d))))
        .collect();
    if all.iter().all(Option::is_none) {
        return Vec::new();
    }
    all
}

/// The widths of the three columns over `table`.
pub fn widths(table: &[Option<(Delta, [String; 3])>]) -> [u16; 3] {
    let mut w = HEADER.map(|h| h.chars().count() as u16);
    for (_, c) in table.iter().flatten() {
        for (wi, ci) in w.iter_mut().zip(c) {
            *wi = (*wi).max(ci.chars().count() as u16);
        }
    }
    w
}

/// What settles a doubtful Δ, or one within the noise of two runs, first on its line (a line
/// is cut at the panel's edge): the A/B of the two builds (`B`) where the instance has an
/// earlier build in this session, else the A/B of two instances (`=`), and the instruction
/// counts (`i`), which load does not move. Two separate runs stray with the host by up to
/// ×1.74 (`compare`'s rule), so a smaller change reads `≈ noise` until interleaved.
fn settle(app: &App, r: &ResultRow, d: &Delta) -> String {
    use crate::tui::action::Action;
    let mark = match d.verdict {
        Verdict::Doubtful(..) => "⚠",
        Verdict::WithinNoise => "≈",
        _ => return String::new(),
    };
    let rebuilt = app
        .sources
        .as_ref()
        .is_some_and(|s| s.previous.contains_key(&r.key.label));
    let ab = if rebuilt {
        format!("{}: A/B of builds", app.keys.key_of(Action::CompareBuilds))
    } else {
        format!(
            "{}: A/B of 2 instances",
            app.keys.key_of(Action::CompareLive)
        )
    };
    format!(
        " {mark} {ab} · {}: instructions ·",
        app.keys.key_of(Action::ToggleCounter)
    )
}

/// The detail line of a row with an earlier figure: both figures, the ratio, the verdict; a
/// doubtful one leads with the keys that settle it.
pub fn detail(app: &App, r: &ResultRow) -> Option<(String, Color)> {
    let d = app.delta(r)?;
    let now = r.summary?.mean_cycles?;
    let (_, colour) = word(&d.verdict);
    let settle = settle(app, r, &d);
    if d.robust {
        let (a, b) = (d.earlier.robust.as_ref()?, r.summary?.robust.as_ref()?);
        return Some((
            format!(
                "Δ*{settle} vs {}: the mean is doubtful, so judged on the uninterrupted-call means {} → {}, ×{:.3}, {}",
                from_text(&d.from),
                crate::format::int(Some(a.mean_cycles)),
                crate::format::int(Some(b.mean_cycles)),
                d.ratio,
                d.verdict
            ),
            colour,
        ));
    }
    Some((
        format!(
            "Δ{settle} vs {}: {} → {} cycles, ×{:.3}, {}",
            from_text(&d.from),
            crate::format::int(Some(d.earlier.mean_cycles)),
            crate::format::int(Some(now)),
            d.ratio,
            d.verdict
        ),
        colour,
    ))
}

/// `build 3 of the history` for `b3`, `run #2` for `#2`.
fn from_text(from: &str) -> String {
    match from.strip_prefix('b') {
        Some(n) => format!("build {n} of the history"),
        None => format!("run {from}"),
    }
}
