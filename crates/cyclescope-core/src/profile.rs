//! Where the cost of a candidate goes: its share per function, and per source line where the
//! library has debug information. A profile comes from trials of its own, never from the
//! guide's timed ones: a trial worker runs the calls under valgrind's callgrind with collection
//! switched on only inside the worker's counted-calls function (`counter::callgrind`), so the
//! shares are exact instruction counts of the candidate's calls and nothing else; beside it the
//! same calls run natively, which gives the profile's overhead. This module owns the figures
//! and their comparison after a rebuild; it prints nothing.

mod error;
mod file;
mod graph;
mod run;
mod symbols;

pub use error::ProfileError;
pub use file::{FILE_NAME, ProfileFile, add, read};
pub use graph::GraphError;
pub use run::{ProfileRequest, ProfileStep, native_seconds, profile, profile_observed, sampled};

use serde::{Deserialize, Serialize};

/// The cost event the exact profile's shares are of.
pub const EVENT: &str = "valgrind:callgrind:Ir";
/// Nanoseconds of cpu-clock between two samples of a sampled profile.
pub const SAMPLE_PERIOD_NS: u64 = 100_000;

/// One function's share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionShare {
    /// As valgrind names it (demangled), from the object's symbols.
    pub function: String,
    /// The file name of the object it is in (the candidate library, the C library, …).
    pub object: String,
    /// What landed in it over the profiled calls: instructions executed in it (self cost) for
    /// the exact profile, samples for a sampled one.
    pub count: u64,
    /// Its fraction of all the instructions of the calls, 0–1.
    pub share: f64,
}

/// One source line's share (only lines the library has debug information for).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LineShare {
    pub file: String,
    pub line: u64,
    pub function: String,
    pub count: u64,
    pub share: f64,
}

/// A candidate's profile at one length.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    #[serde(default)]
    pub candidate: String,
    /// The profiled library's file name: the object its own functions are in ("" in
    /// profiles of earlier versions).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub library: String,
    pub label: String,
    pub input_bytes: u64,
    /// What the shares count ([`EVENT`]), and the tool that counted (`valgrind-3.19.0
    /// callgrind`).
    pub event: String,
    pub tool: String,
    /// The calls profiled.
    pub calls: u64,
    /// What the shares are of: instructions of those calls (the sum of the functions' self
    /// costs), or the samples taken in them.
    pub total: u64,
    /// Functions, most instructions first.
    pub functions: Vec<FunctionShare>,
    /// Source lines, most instructions first (empty without debug information).
    pub lines: Vec<LineShare>,
    pub overhead: Overhead,
    /// What the sandbox gave up under valgrind.
    pub sandbox_relaxed: Vec<String>,
    /// Samples the kernel dropped (a sampled profile's ring buffer ran full).
    #[serde(default)]
    pub lost: u64,
}

/// What the profile cost, measured: the profiled calls' loop under valgrind against the same
/// calls natively (both timed by the worker with CLOCK_MONOTONIC_RAW), and the whole profile
/// process's wall time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Overhead {
    pub profiled_loop_s: f64,
    pub native_loop_s: f64,
    /// `profiled_loop_s / native_loop_s`.
    pub slowdown: f64,
    pub profile_wall_s: f64,
    /// Seconds the native calls sat runnable but not running (preempted), where the kernel
    /// tells: time in `native_loop_s` the candidate did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_waited_s: Option<f64>,
}

/// The share of the native loop spent waiting for the CPU above which the slowdown ratio is
/// marked doubtful: the ratio divides by that loop, so it reads too low (a preempted native
/// leg once made valgrind look 1.39× slower, where it runs these calls 14–27× slower).
pub const NATIVE_WAIT_DOUBT: f64 = 0.05;

impl Overhead {
    /// Why the slowdown ratio is doubtful (`⚠ the native calls waited 41.0 % of their loop for
    /// the CPU`), or None.
    pub fn doubt(&self) -> Option<String> {
        let share = self.native_waited_s? / self.native_loop_s.max(1e-12);
        (share > NATIVE_WAIT_DOUBT).then(|| {
            format!(
                "⚠ the native calls waited {} of their loop for the CPU, so the ratio reads low",
                crate::format::share(share.min(1.0))
            )
        })
    }

    /// `1.39× slower ⚠ …` or `52× slower`: the ratio with its doubt.
    pub fn slower(&self) -> String {
        let ratio = format!("{}× slower", crate::format::g3(self.slowdown));
        match self.doubt() {
            Some(why) => format!("{ratio} {why}"),
            None => ratio,
        }
    }
}

impl Profile {
    /// The count per call (instructions, or samples).
    pub fn per_call(&self) -> f64 {
        self.total as f64 / self.calls.max(1) as f64
    }

    /// True for the exact profile (instruction counts), false for a sampled one.
    pub fn is_exact(&self) -> bool {
        self.event == EVENT
    }

    /// The profile's lines of text: the share table per function, then the top lines.
    pub fn describe(&self, top_lines: usize) -> Vec<String> {
        use crate::format;
        let mut out = vec![format!(
            "{} @ {}: {} {} over {} calls ({}, {})",
            crate::sanitize::terminal(&self.label),
            format::size(self.input_bytes),
            format::int(Some(if self.is_exact() {
                self.per_call()
            } else {
                self.total as f64
            })),
            if self.is_exact() {
                "instructions per call"
            } else {
                "samples"
            },
            self.calls,
            self.event,
            crate::sanitize::terminal(&self.tool),
        )];
        for f in &self.functions {
            out.push(format!(
                "  {:>7}  {:>12}  {}  ({})",
                format::share(f.share),
                format::int(Some(if self.is_exact() {
                    f.count as f64 / self.calls.max(1) as f64
                } else {
                    f.count as f64
                })),
                crate::sanitize::terminal(&f.function),
                crate::sanitize::terminal(&f.object),
            ));
        }
        // Lines of another object (the C library's) say nothing of a library built without
        // line information: say that instead.
        let no_lines = top_lines > 0
            && !self.library.is_empty()
            && self.counts().own_lines(&self.library) == OwnLines::NoLineInformation;
        if no_lines {
            out.push(format!(
                "  no source lines: {} has no line information (building it with -g adds it)",
                crate::sanitize::terminal(&self.library)
            ));
        } else if !self.lines.is_empty() && top_lines > 0 {
            out.push("  by source line:".to_string());
        }
        for l in self.lines.iter().take(if no_lines { 0 } else { top_lines }) {
            out.push(format!(
                "  {:>7}  {}:{}  ({})",
                format::share(l.share),
                crate::sanitize::terminal(&l.file),
                l.line,
                crate::sanitize::terminal(&l.function),
            ));
        }
        if self.lost > 0 {
            out.push(format!(
                "  {} samples lost (the ring buffer ran full)",
                self.lost
            ));
        }
        let o = &self.overhead;
        out.push(format!(
            "overhead: the profiled calls took {} {}, {} natively ({}); {} for the whole \
             profile process",
            format::time(o.profiled_loop_s),
            if self.is_exact() {
                "under valgrind"
            } else {
                "sampled"
            },
            format::time(o.native_loop_s),
            o.slower(),
            format::time(o.profile_wall_s),
        ));
        out
    }
}

/// What a profile counted, apart from what it cost: known as soon as callgrind's output is
/// read, before the native trial times the overhead (so a frontend can show it at once).
#[derive(Debug, Clone, PartialEq)]
pub struct Counts {
    pub event: String,
    pub tool: String,
    pub calls: u64,
    pub total: u64,
    pub functions: Vec<FunctionShare>,
    pub lines: Vec<LineShare>,
}

impl Counts {
    /// A function's count per call.
    pub fn per_call(&self, f: &FunctionShare) -> f64 {
        f.count as f64 / self.calls.max(1) as f64
    }

    /// True for the exact profile (instruction counts), false for a sampled one.
    pub fn is_exact(&self) -> bool {
        self.event == EVENT
    }
}

/// The source lines of a library's own top function, as far as its debug information goes.
#[derive(Debug, PartialEq)]
pub enum OwnLines<'a> {
    /// The library's top function that has line information, and its lines, most first.
    Lines {
        function: &'a str,
        lines: Vec<&'a LineShare>,
    },
    /// None of the library's functions has line information (it was built without `-g`):
    /// lines of another object (the C library's) say nothing of the candidate.
    NoLineInformation,
    /// None of the counted functions is the library's.
    NoFunction,
}

impl Counts {
    /// The lines of `object`'s (the library's file name) top function that has any.
    pub fn own_lines(&self, object: &str) -> OwnLines<'_> {
        let mut own = self
            .functions
            .iter()
            .filter(|f| f.object == object)
            .peekable();
        if own.peek().is_none() {
            return OwnLines::NoFunction;
        }
        own.find_map(|f| {
            let lines: Vec<&LineShare> = self
                .lines
                .iter()
                .filter(|l| l.function == f.function)
                .collect();
            (!lines.is_empty()).then_some(OwnLines::Lines {
                function: &f.function,
                lines,
            })
        })
        .unwrap_or(OwnLines::NoLineInformation)
    }
}

impl Profile {
    /// The profile's counts (a copy).
    pub fn counts(&self) -> Counts {
        Counts {
            event: self.event.clone(),
            tool: self.tool.clone(),
            calls: self.calls,
            total: self.total,
            functions: self.functions.clone(),
            lines: self.lines.clone(),
        }
    }
}

/// How one function's count moved between two profiles (after a rebuild).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionMove {
    pub function: String,
    /// Instructions per call before and after (None: absent from that profile).
    pub before: Option<f64>,
    pub after: Option<f64>,
}

impl FunctionMove {
    /// After minus before, instructions per call (an absent side counts as 0). Exact: both
    /// are counts.
    pub fn delta(&self) -> f64 {
        self.after.unwrap_or(0.0) - self.before.unwrap_or(0.0)
    }
}

/// Per function, how the count per call moved from `before` to `after`, largest move first.
/// Functions are matched by name: a rebuild moves them to other addresses and may inline
/// some away (they are gone) or split others out (they are new).
pub fn moved(before: &Counts, after: &Counts) -> Vec<FunctionMove> {
    let mut out: Vec<FunctionMove> = Vec::new();
    for f in &before.functions {
        out.push(FunctionMove {
            function: f.function.clone(),
            before: Some(before.per_call(f)),
            after: None,
        });
    }
    for f in &after.functions {
        let v = after.per_call(f);
        match out.iter_mut().find(|m| m.function == f.function) {
            Some(m) => m.after = Some(v),
            None => out.push(FunctionMove {
                function: f.function.clone(),
                before: None,
                after: Some(v),
            }),
        }
    }
    out.sort_by(|a, b| b.delta().abs().total_cmp(&a.delta().abs()));
    out
}

#[cfg(test)]
mod tests;
