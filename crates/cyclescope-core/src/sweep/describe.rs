//! The fit of a swept instance in words, for the CLI and the workbench alike.

use super::InstanceSweep;
use super::fit::Interval;

/// The fit of one instance in lines of text, for the CLI and the workbench alike.
pub fn describe(s: &InstanceSweep) -> Vec<String> {
    use crate::format::with_interval;
    let iv = |i: &Interval| with_interval(i.value, i.low, i.high);
    let what = s.statistic.describe();
    let Some(m) = &s.model else {
        return vec![format!(
            "{}: no cost model ({})",
            s.label,
            s.unfitted.as_deref().unwrap_or("not fitted")
        )];
    };
    let outliers = if m.outliers.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = m.outliers.iter().map(|n| format!("{n} B")).collect();
        format!(", outliers {}", list.join(" "))
    };
    let open = if m.padding_alternatives.is_empty() {
        String::new()
    } else {
        format!(" (equally: {:?})", m.padding_alternatives)
    };
    let unit = if crate::counter::CycleSource::from_name(&s.counter).is_some_and(|c| c.is_exact()) {
        "instructions"
    } else {
        "cycles"
    };
    let whence = match m.structure.as_str() {
        "instructions" => " (B and p exact, from the instruction counts' jumps)",
        "given" => " (B and p given by an instruction sweep)",
        _ => "",
    };
    let head = if m.block_determined() {
        String::new()
    } else {
        let close: Vec<String> = m
            .close_blocks
            .iter()
            .map(|c| {
                format!(
                    "{} B (p = {}, {:.2}× the loss)",
                    c.block_bytes, c.padding_bytes, c.loss_ratio
                )
            })
            .collect();
        format!(
            "{}: block size undetermined: {} B fits best, but {} fit nearly as well; the figures \
             below hold only if B = {} B (`sweep --counter instructions` settles it)",
            s.label,
            m.block_bytes,
            close.join(", "),
            m.block_bytes
        )
    };
    let mut lines = Vec::new();
    if !head.is_empty() {
        lines.push(head);
    }
    lines.extend([
        format!(
            "{}: block {} B, padding threshold {} B{open}{whence}; T(n) = a + b·⌈(n + {})/{}⌉{}",
            s.label,
            m.block_bytes,
            m.padding_bytes,
            m.padding_bytes,
            m.block_bytes,
            if m.cycles_per_extra_byte.is_some() {
                " + c·n"
            } else {
                ""
            }
        ),
        format!(
            "  fixed cost a       {} {unit}/call{}",
            iv(&m.fixed_cycles),
            if m.fixed_at_zero {
                " (held at 0: the free fit put it below zero)"
            } else {
                ""
            }
        ),
        format!("  per block b        {} {unit}", iv(&m.cycles_per_block)),
    ]);
    if let Some(c) = &m.cycles_per_extra_byte {
        lines.push(format!("  per byte c         {} {unit}", iv(c)));
    }
    lines.push(format!(
        "  long messages      {} {unit}/byte",
        iv(&m.cycles_per_byte)
    ));
    lines.push(format!(
        "  {} lengths fitted ({what}, {}; 95 % intervals; residual sd {:.2} %{outliers})",
        m.points_fitted,
        if s.counter.is_empty() {
            "counter unknown"
        } else {
            &s.counter
        },
        100.0 * m.residual_relative_sd
    ));
    if let Some(r) = &m.runner_up {
        lines.push(format!(
            "  next best block size {} B (p = {}) fits {:.1}× worse",
            r.block_bytes, r.padding_bytes, r.loss_ratio
        ));
    }
    lines
}
