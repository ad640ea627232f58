//! The exact instruction counter: a trial worker run under valgrind's callgrind (the
//! distribution's `valgrind` package), and callgrind's call graph read back. The worker
//! (`--count`) makes its warm-up calls from `cyclescope_warmup_calls` and its counted calls
//! from `cyclescope_counted_calls`; the count is the inclusive cost of the calls out of the
//! latter, which are the candidate's entry point and nothing else: the worker's set-up, its
//! loop and the first call's lazy binding are not in it. The same library, length and message
//! give the same count to the instruction. Cache simulation (`--cache-sim=yes`) adds the
//! misses of a simulated L1/LL hierarchy, from which [`ESTIMATE_FORMULA`] makes a cycle
//! *estimate*. Valgrind cannot run AVX-512 code: its "unhandled instruction" report is
//! recognised and named. A library that can steer what callgrind collects (valgrind's client
//! requests) is refused, before it runs (`client_requests`) and from what callgrind saw
//! (`collection`). This module builds the command line and parses; it runs nothing.

pub mod client_requests;
pub mod collection;

use std::path::Path;

use serde::{Deserialize, Serialize};

/// The function of the worker whose outgoing calls are counted.
pub(crate) const COUNTED_FN: &str = "cyclescope_counted_calls";
/// Calls each count makes (after one warm-up call): the count is exact, so a few suffice.
pub const COUNTED_CALLS: u64 = 3;
/// The cycle estimate, as KCachegrind and CodSpeed make it from callgrind's events.
pub const ESTIMATE_FORMULA: &str = "Ir + 10·(I1mr + D1mr + D1mw) + 100·(ILmr + DLmr + DLmw)";
/// RLIMIT_FSIZE of a counted worker: valgrind writes its output file at exit.
pub const OUTPUT_FILE_LIMIT_BYTES: u64 = 256 << 20;
/// What the sandbox gives up under valgrind, whatever the worker reports besides.
pub const RELAXED: [&str; 2] = [
    "RLIMIT_FSIZE raised to 256 MiB: valgrind writes its call graph to a file when the worker \
     exits (the candidate still cannot open a file for writing where Landlock is in force)",
    "RLIMIT_NOFILE: only the soft limit is set; valgrind refuses to move the hard limit, \
     because it keeps descriptors of its own above it",
];
/// Said when the worker reports Landlock not in force under valgrind.
pub const LANDLOCK_RELAXED: &str = "Landlock write ban not in force: valgrind answers \
     landlock_create_ruleset with ENOSYS (it does not pass the call through)";
/// Said when the worker reports no seccomp filter under valgrind.
pub const SECCOMP_RELAXED: &str = "seccomp filter not in force: valgrind passed neither \
     seccomp(2) nor prctl(PR_SET_SECCOMP) through";

/// One count's figures, as the record keeps them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstructionCount {
    /// `valgrind-3.19.0 callgrind`, from valgrind's own output.
    pub tool: String,
    /// Calls counted, as callgrind saw them (the worker made [`COUNTED_CALLS`]).
    pub calls: u64,
    /// Instructions executed by the candidate in those calls (callgrind's Ir, inclusive).
    pub instructions: u64,
    /// Simulated first-level misses (instruction reads, data reads, data writes).
    pub l1_misses: u64,
    /// Simulated last-level misses (the same three).
    pub ll_misses: u64,
    /// [`ESTIMATE_FORMULA`] over those calls: an estimate, not a measurement.
    pub estimated_cycles: u64,
    pub estimate_formula: String,
    /// What the sandbox gave up under valgrind, and why.
    pub sandbox_relaxed: Vec<String>,
    /// Wall time of the valgrind process, seconds.
    pub wall_s: f64,
}

impl InstructionCount {
    pub fn per_call(&self) -> f64 {
        self.instructions as f64 / self.calls.max(1) as f64
    }

    pub fn estimated_cycles_per_call(&self) -> f64 {
        self.estimated_cycles as f64 / self.calls.max(1) as f64
    }
}

/// Why a count has no figure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallgrindError {
    #[error(
        "valgrind cannot run this library: it uses AVX-512 (EVEX-encoded) instructions, which \
         valgrind does not implement ({bytes}); count it on a build without AVX-512, or use \
         the cycles counter"
    )]
    Avx512 { bytes: String },
    #[error(
        "valgrind met an instruction it does not implement ({bytes}) and stopped the worker \
         with SIGILL"
    )]
    Unhandled { bytes: String },
    #[error(
        "valgrind is not installed (no `valgrind` on PATH): install the distribution's valgrind package"
    )]
    NotInstalled,
    #[error("valgrind wrote no call graph ({why})")]
    NoOutput { why: String },
    #[error("callgrind's call graph has no calls out of {COUNTED_FN} (the worker counted nothing)")]
    NoCountedCalls,
    #[error("callgrind saw {seen} counted calls where the worker made {made}")]
    CallsMismatch { seen: u64, made: u64 },
    #[error("callgrind's output is not in the format cyclescope reads: {why}")]
    Format { why: String },
    #[error(
        "the library contains valgrind client requests at offset {offset:#x} (the {arch} \
         preamble): it could change what callgrind collects, so cyclescope does not count it; \
         build it without them (-DNVALGRIND), or use the cycles counter"
    )]
    ClientRequests { offset: u64, arch: &'static str },
    #[error(
        "the library issued valgrind client requests that change what callgrind collects: \
         callgrind executed {executed} instructions and collected {collected}, so the counts \
         are not the candidate's full work and cyclescope gives none"
    )]
    Steered { executed: u64, collected: u64 },
    #[error(
        "the library issued valgrind client requests that change what callgrind collects: \
         callgrind's call graph came in {parts} parts (a dump or a reset the options did not \
         ask for), so the counts are not the candidate's full work and cyclescope gives none"
    )]
    Dumped { parts: u64 },
    #[error("cannot read the library to search it for valgrind client requests: {why}")]
    Unreadable { why: String },
}

/// Refuses a library that carries valgrind's client-request preamble in its code
/// ([`client_requests`]), before valgrind runs it.
pub fn refuse_client_requests(library: &Path) -> Result<(), CallgrindError> {
    match client_requests::find_in_file(library) {
        Ok(None) => Ok(()),
        Ok(Some(f)) => Err(CallgrindError::ClientRequests {
            offset: f.offset,
            arch: f.arch,
        }),
        Err(e) => Err(CallgrindError::Unreadable { why: e.to_string() }),
    }
}

/// valgrind's arguments before the worker's program and arguments.
pub fn valgrind_args(out_file: &Path) -> Vec<String> {
    [
        // Quiet: no banner naming the worker's path in the stderr the record keeps; but the
        // report of an instruction valgrind cannot run (AVX-512) still, which names it.
        "-q",
        "--sigill-diagnostics=yes",
        // No gdbserver: its FIFOs would need unlink(2), which the worker's filter refuses.
        "--vgdb=no",
        "--tool=callgrind",
        // Every block one instruction: callgrind's block counter then counts what ran,
        // collected or not (`collection`).
        collection::ONE_INSTRUCTION_BLOCKS,
        "--cache-sim=yes",
        "--compress-strings=no",
        "--compress-pos=no",
    ]
    .map(String::from)
    .into_iter()
    .chain([format!("--callgrind-out-file={}", out_file.display())])
    .collect()
}

/// Finds `valgrind` on PATH.
pub fn find_valgrind() -> Result<std::path::PathBuf, CallgrindError> {
    let path = std::env::var_os("PATH").ok_or(CallgrindError::NotInstalled)?;
    std::env::split_paths(&path)
        .map(|d| d.join("valgrind"))
        .find(|p| p.is_file())
        .ok_or(CallgrindError::NotInstalled)
}

/// The instruction valgrind stopped at, from its stderr: `vex amd64->IR: unhandled instruction
/// bytes: 0x62 0xF1 …` (AVX-512 when the first byte is the EVEX prefix 0x62).
pub fn unhandled_instruction(stderr: &str) -> Option<CallgrindError> {
    let line = stderr
        .lines()
        .find(|l| l.contains("unhandled instruction bytes:"))?;
    let bytes: String = line
        .split("bytes:")
        .nth(1)
        .unwrap_or("")
        .split_whitespace()
        .take(6)
        .collect::<Vec<_>>()
        .join(" ");
    let evex = bytes
        .split_whitespace()
        .next()
        .is_some_and(|b| b.eq_ignore_ascii_case("0x62"));
    Some(if evex {
        CallgrindError::Avx512 { bytes }
    } else {
        CallgrindError::Unhandled { bytes }
    })
}

/// The counted figures of a callgrind output file (written with [`valgrind_args`]'s options).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counted {
    pub calls: u64,
    pub ir: u64,
    pub l1_misses: u64,
    pub ll_misses: u64,
}

impl Counted {
    /// [`ESTIMATE_FORMULA`].
    pub fn estimated_cycles(&self) -> u64 {
        self.ir + 10 * self.l1_misses + 100 * self.ll_misses
    }
}

/// Sums the inclusive costs of every call out of [`COUNTED_FN`].
pub fn parse(text: &str) -> Result<Counted, CallgrindError> {
    let format = |why: &str| CallgrindError::Format { why: why.into() };
    let mut events: Vec<String> = Vec::new();
    // Columns before the costs: one per position kind (`positions: line`, the default).
    let mut positions = 1;
    let mut in_counted = false;
    let mut pending_calls: Option<u64> = None;
    let mut c = Counted {
        calls: 0,
        ir: 0,
        l1_misses: 0,
        ll_misses: 0,
    };
    let mut seen_call = false;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("positions:") {
            positions = rest.split_whitespace().count();
        } else if let Some(rest) = line.strip_prefix("events:") {
            events = rest.split_whitespace().map(String::from).collect();
        } else if let Some(name) = line.strip_prefix("fn=") {
            in_counted = name.trim() == COUNTED_FN;
            pending_calls = None;
        } else if let Some(rest) = line.strip_prefix("calls=") {
            let n = rest
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .ok_or_else(|| format("a calls= line without a count"))?;
            pending_calls = Some(n);
        } else if line.starts_with(|ch: char| ch.is_ascii_digit() || ch == '+' || ch == '-') {
            // A cost line: the inclusive cost of the call just named, or a self cost.
            let Some(n) = pending_calls.take() else {
                continue;
            };
            if !in_counted {
                continue;
            }
            let costs: Vec<u64> = line
                .split_whitespace()
                .skip(positions)
                .map(|v| v.parse::<u64>())
                .collect::<Result<_, _>>()
                .map_err(|_| format("a cost that is not a number"))?;
            let event = |name: &str| {
                events
                    .iter()
                    .position(|e| e == name)
                    .and_then(|i| costs.get(i).copied())
                    .unwrap_or(0)
            };
            seen_call = true;
            c.calls += n;
            c.ir += event("Ir");
            c.l1_misses += event("I1mr") + event("D1mr") + event("D1mw");
            c.ll_misses += event("ILmr") + event("DLmr") + event("DLmw");
        }
    }
    if events.first().map(String::as_str) != Some("Ir") {
        return Err(format("no `events: Ir …` line"));
    }
    if !seen_call {
        return Err(CallgrindError::NoCountedCalls);
    }
    Ok(c)
}

/// `valgrind-3.19.0 callgrind` from the output's `creator:` line.
pub fn tool_of(text: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix("creator:"))
        .map_or_else(
            || "valgrind callgrind".to_string(),
            |c| {
                let c = c.trim();
                match c.strip_prefix("callgrind-") {
                    Some(v) => format!("valgrind-{v} callgrind"),
                    None => c.to_string(),
                }
            },
        )
}

#[cfg(test)]
mod tests;
