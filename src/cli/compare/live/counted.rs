//! `compare --live A B --counter instructions`: no interleaving, since an exact count has no
//! noise to cancel: each side is counted once per length under valgrind by the campaign, and
//! B's count over A's is printed with the exact verdict (fewer, the same or more instructions;
//! no interval). Exit 0 when both sides got a count at every length.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::campaign::{self, RunRequest};
use crate::cli::run::progress::Progress;
use crate::record::TimingRecord;
use crate::report::compare::{Figure, Verdict, judge};

/// Counts both sides and prints the table (or `--json`).
pub(super) fn run(
    req: &RunRequest,
    json: bool,
    cancel: &Arc<AtomicBool>,
) -> anyhow::Result<ExitCode> {
    let mut progress = Progress::new(req);
    campaign::run(req, &mut |ev| progress.show(&ev), cancel)?;
    progress.clear();
    let records = crate::record::run_dir::list_records(&req.run_dir);
    let of = |i: usize, len: u64| -> Option<TimingRecord> {
        let inst = &req.instances[i];
        records
            .iter()
            .map(|(_, r)| r)
            .find(|r| {
                r.candidate == inst.candidate
                    && r.label == inst.label
                    && r.input_bytes == len
                    && r.status.is_complete()
            })
            .cloned()
    };
    let [a, b] = [&req.instances[0], &req.instances[1]];
    let mut rows = Vec::new();
    for &len in &req.lengths {
        let (ra, rb) = (of(0, len), of(1, len));
        let (fa, fb) = (
            ra.as_ref().and_then(|r| Figure::of_summary(&r.summary())),
            rb.as_ref().and_then(|r| Figure::of_summary(&r.summary())),
        );
        let verdict = match (&fa, &fb) {
            (Some(x), Some(y)) => Some(judge(x, y)),
            _ => None,
        };
        rows.push((
            len,
            fa.map(|f| f.mean_cycles),
            fb.map(|f| f.mean_cycles),
            verdict,
        ));
    }
    let complete = rows.iter().all(|r| matches!(r.3, Some(Verdict::Exact(_))));
    if json {
        let list: Vec<serde_json::Value> = rows
            .iter()
            .map(|(len, ia, ib, v)| {
                serde_json::json!({
                    "input_bytes": len,
                    "a_instructions_per_call": ia,
                    "b_instructions_per_call": ib,
                    "ratio": ia.zip(*ib).map(|(x, y)| y / x),
                    "verdict": v.as_ref().map(Verdict::word),
                    "counter": crate::counter::CycleSource::CallgrindInstructions.name(),
                })
            })
            .collect();
        outln!("{}", serde_json::to_string_pretty(&list)?);
    } else {
        let mut out = format!(
            "A = {}/{}\nB = {}/{}\ncounted exactly under valgrind (valgrind:callgrind:Ir), one process per side and length: no interleaving, no interval\n\n\
             | message | A instructions/call | B instructions/call | B / A | verdict |\n|---|---|---|---|---|\n",
            crate::sanitize::markdown(&a.candidate),
            crate::sanitize::markdown(&a.label),
            crate::sanitize::markdown(&b.candidate),
            crate::sanitize::markdown(&b.label),
        );
        for (len, ia, ib, v) in &rows {
            out += &format!(
                "| {len} B | {} | {} | {} | {} |\n",
                crate::format::int(*ia),
                crate::format::int(*ib),
                crate::format::ratio(*ib, *ia),
                v.as_ref()
                    .map_or_else(|| "no count on both sides".to_string(), |v| v.to_string())
            );
        }
        out!("{out}");
    }
    eprintln!(
        "run directory: {}  (each side's count is its record there)",
        crate::sanitize::terminal_path(&req.run_dir)
    );
    Ok(if complete {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
