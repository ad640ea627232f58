//! The profile's two trials: the counted calls in a trial worker under valgrind's callgrind,
//! collecting only inside the worker's counted-calls function (`--toggle-collect`, and
//! refused when the library steered that collection: `callgrind::collection`), then the
//! same calls in a native trial worker for the overhead. Both are ordinary trial workers —
//! pinned, limited, sandboxed as far as valgrind lets them be (what it relaxes is recorded),
//! their protocol checked — and neither is ever one of the guide's timed trials.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

mod callgrind_files;
mod sampling;

pub use sampling::sampled;

use callgrind_files::{OUT_FILES, counted_part, valgrind_args};

use super::graph::{self, Graph};
use super::{Counts, EVENT, FunctionShare, LineShare, Overhead, Profile, ProfileError};
use crate::catalog::Instance;
use crate::counter::callgrind::{self, COUNTED_FN};
use crate::measure::trial::{SandboxInForce, TrialMessage, TrialSpec};
use crate::measure::trial_args::MeasureInvocation;
use crate::plugin::sealed::SealedLibrary;
use crate::worker::{self, Exit, Limits, Tampering, WorkerCommand};

/// The longest one profile trial may take (valgrind runs the calls some 50× slower).
const PROFILE_TIMEOUT: Duration = Duration::from_secs(600);

/// What to profile, where.
#[derive(Debug, Clone)]
pub struct ProfileRequest {
    pub instance: Instance,
    pub input_bytes: u64,
    /// The CPU the workers are pinned to.
    pub cpu: usize,
    /// Calls profiled (the shares are exact counts: a few suffice).
    pub calls: u64,
    pub limits: Limits,
    pub cancel: Option<Arc<AtomicBool>>,
}

/// One worker's report: its loop's nanoseconds, its sandbox, its wall time, and the sampled
/// profile's instruction pointers.
struct TrialRun {
    loop_ns: u64,
    /// Nanoseconds of the loop the worker waited for the CPU, where the kernel told.
    waited_ns: Option<u64>,
    sandbox: Option<SandboxInForce>,
    wall: Duration,
    samples: Samples,
}

/// What a sampling worker sent.
#[derive(Default)]
struct Samples {
    event: String,
    base: u64,
    ips: Vec<u64>,
    lost: u64,
}

/// How a profile worker runs.
enum Mode<'a> {
    /// Under valgrind's callgrind, writing to this file, loading this copy of the sealed
    /// library (valgrind reads symbols by path: `SealedLibrary::copy_into`), running this
    /// trial worker (a copy beside the library for root's unprivileged worker user).
    Callgrind(&'a Path, &'a Path, &'a Path, &'a Path),
    /// Natively, sampling its instruction pointers.
    Sampled,
    /// Natively, timed only.
    Native,
}

/// The steps of an exact profile, told as they happen (a frontend shows the profile filling).
#[derive(Debug)]
pub enum ProfileStep<'a> {
    /// The counted calls run under valgrind's callgrind.
    Counting,
    /// Callgrind's counts, read and checked; the native trial for the overhead starts next.
    Counted(&'a Counts),
}

/// Profiles `req.instance` at `req.input_bytes`.
pub fn profile(req: &ProfileRequest) -> Result<Profile, ProfileError> {
    profile_observed(req, &mut |_| {})
}

/// As [`profile`], telling `observe` each step; the counts come before the overhead.
pub fn profile_observed(
    req: &ProfileRequest,
    observe: &mut dyn FnMut(ProfileStep<'_>),
) -> Result<Profile, ProfileError> {
    let valgrind = callgrind::find_valgrind()?;
    // One read of the library for the whole profile: the scan, both workers.
    let lib = crate::plugin::sealed::for_path(&req.instance.library)?;
    callgrind::refuse_client_requests(&lib.here())?;
    let scratch = tempfile::Builder::new()
        .prefix("cyclescope-profile-")
        .tempdir()
        .map_err(ProfileError::Scratch)?;
    let out_file = scratch.path().join(OUT_FILES[0]);
    observe(ProfileStep::Counting);
    // The copy in a folder of its own: valgrind's folder must hold its output alone.
    let copy_dir = tempfile::Builder::new()
        .prefix("cyclescope-profile-lib-")
        .tempdir()
        .map_err(ProfileError::Scratch)?;
    let copy = lib
        .copy_into(copy_dir.path())
        .map_err(ProfileError::Scratch)?;
    let worker = crate::catalog::bundled::trial_worker()?;
    // Root's worker user may not pass the folders above the cache: it runs a copy.
    let (_loans, worker_copy) = match crate::jail::identity::Identity::for_workers() {
        None => (Vec::new(), None),
        Some(id) => crate::measure::count::lend(id, &worker, &scratch, Some(&copy_dir))
            .map_err(ProfileError::Scratch)?,
    };
    let worker = worker_copy.unwrap_or(worker);
    let mode = Mode::Callgrind(&valgrind, &out_file, &copy, &worker);
    let profiled = run_worker(req, &lib, mode)?;
    let text = counted_part(scratch.path())?;
    let g = graph::parse(&text, COUNTED_FN)?;
    if g.root_calls != spec(req, true).iterations {
        return Err(callgrind::CallgrindError::CallsMismatch {
            seen: g.root_calls,
            made: spec(req, true).iterations,
        }
        .into());
    }
    let counts = shares(&g, callgrind::tool_of(&text))?;
    observe(ProfileStep::Counted(&counts));
    let native = run_worker(req, &lib, Mode::Native)?;
    let overhead = Overhead {
        profiled_loop_s: profiled.loop_ns as f64 / 1e9,
        native_loop_s: native.loop_ns as f64 / 1e9,
        slowdown: profiled.loop_ns as f64 / native.loop_ns.max(1) as f64,
        profile_wall_s: profiled.wall.as_secs_f64(),
        native_waited_s: native.waited_ns.map(|ns| ns as f64 / 1e9),
    };
    Ok(Profile {
        candidate: req.instance.candidate.clone(),
        library: library_name(req),
        label: req.instance.label.clone(),
        input_bytes: req.input_bytes,
        event: counts.event,
        tool: counts.tool,
        calls: counts.calls,
        total: counts.total,
        functions: counts.functions,
        lines: counts.lines,
        overhead,
        sandbox_relaxed: crate::measure::count::relaxed(profiled.sandbox),
        lost: 0,
    })
}

fn spec(req: &ProfileRequest, count: bool) -> TrialSpec {
    TrialSpec {
        library: req.instance.library.clone(),
        digest_bits: req.instance.digest_bits,
        input_bytes: req.input_bytes,
        iterations: req.calls.max(1),
        warmups: 1,
        trials: 1,
        sample_calls: 0,
        abi: req.instance.abi,
        fresh_seed: None,
        fresh_heads: None,
        offsets: None,
        count,
        hardware_instructions: false,
        loop_only: false,
        repeat: false,
        any_width: false,
    }
}

fn run_worker(
    req: &ProfileRequest,
    lib: &Arc<SealedLibrary>,
    mode: Mode<'_>,
) -> Result<TrialRun, ProfileError> {
    let under = match mode {
        Mode::Callgrind(v, out, copy, worker) => Some((v, out, copy, worker)),
        _ => None,
    };
    let mut spec = spec(req, under.is_some());
    spec.library = match under {
        Some((_, _, copy, _)) => copy.to_path_buf(),
        None => crate::plugin::sealed::worker_path(0),
    };
    let limits = match under {
        Some(_) => crate::measure::count::CountRun::limits(req.limits),
        None => req.limits,
    };
    let args = MeasureInvocation {
        spec: spec.clone(),
        cpu: Some(req.cpu),
        pmu_type: crate::host::core_pmu(&crate::host::HostRoot::system(), req.cpu)
            .ok()
            .flatten()
            .and_then(|p| p.extended_type()),
        sample_period_ns: matches!(mode, Mode::Sampled).then_some(super::SAMPLE_PERIOD_NS),
        limits,
    }
    .to_args();
    let cmd = WorkerCommand {
        exe: match under {
            Some((_, _, _, worker)) => worker.to_path_buf(),
            None => crate::catalog::bundled::trial_worker()?,
        },
        args,
        timeout: PROFILE_TIMEOUT,
        cancel: req.cancel.clone(),
        limits,
        pinned_cpu: Some(req.cpu),
        launcher: under.map(|(v, out, _, _)| (v.to_path_buf(), valgrind_args(out))),
        go_line: None,
        libraries: vec![lib.clone()],
        cwd: None,
        files: Some(match under {
            Some((_, out, copy, _)) => crate::worker::confine::JobFiles {
                readable: copy.parent().map(Path::to_path_buf).into_iter().collect(),
                writable: out.parent().map(Path::to_path_buf).into_iter().collect(),
            },
            None => Default::default(),
        }),
    };
    let mut loop_ns = None;
    let mut waited_ns = None;
    let mut sandbox = None;
    let mut fault = None;
    let mut done = false;
    let mut samples = Samples::default();
    let outcome = worker::run(&cmd, |m: TrialMessage| {
        match m {
            TrialMessage::Ready { sandbox: s, .. } => sandbox = s,
            TrialMessage::Trial {
                nanoseconds,
                waited_ns: waited,
                ..
            } => {
                loop_ns = Some(nanoseconds);
                waited_ns = waited;
            }
            TrialMessage::Samples { .. } => {}
            // A profile never probes fresh messages: a worker that says so is not ours.
            TrialMessage::Digests { .. } => {
                return Err(Tampering("probe digests from a profile trial".into()));
            }
            TrialMessage::IpSamples {
                event,
                base,
                ips,
                lost,
            } => {
                samples.event = event;
                samples.base = base;
                samples.ips.extend(ips);
                samples.lost += lost;
            }
            TrialMessage::Done { .. } => done = true,
            TrialMessage::Cryptofail { rc } => fault = Some(format!("CryptHash returned {rc}")),
            TrialMessage::Overflow { .. } => {
                fault = Some("the candidate wrote outside its buffers".into())
            }
            TrialMessage::InputChanged { offset } => {
                fault = Some(format!(
                    "the candidate changed its message at byte {offset}"
                ))
            }
            TrialMessage::Wrote { .. } => {
                fault = Some("a `wrote` line, which only a framed table sends".into())
            }
            TrialMessage::CounterFault {
                fault: kind,
                enabled_ns,
                running_ns,
            } => fault = Some(kind.explain(enabled_ns, running_ns)),
            TrialMessage::InstructionsUnavailable { refusal } => {
                fault = Some(refusal.explain_instructions())
            }
            TrialMessage::Error { detail, .. } => {
                fault = Some(crate::sanitize::log_field(&detail).into_owned())
            }
        }
        Ok::<(), Tampering>(())
    })
    .map_err(|e| ProfileError::Worker(e.to_string()))?;
    // valgrind's line may be long gone from the tail (its explanation and stack follow it).
    if let Some(e) = outcome
        .undecoded
        .as_deref()
        .and_then(callgrind::unhandled_instruction)
        .or_else(|| callgrind::unhandled_instruction(&outcome.stderr_tail))
    {
        return Err(ProfileError::undecoded(e));
    }
    if let Some(why) = fault {
        return Err(ProfileError::Worker(why));
    }
    match (&outcome.exit, loop_ns) {
        (Exit::Code(0), Some(ns)) if done => Ok(TrialRun {
            loop_ns: ns,
            waited_ns,
            sandbox,
            wall: outcome.wall,
            samples,
        }),
        (exit, _) => Err(ProfileError::Worker(format!(
            "{exit}{}; stderr: {}",
            outcome.death_note(),
            crate::sanitize::log_field(outcome.stderr_tail.trim())
        ))),
    }
}

/// The seconds `req`'s calls take natively (one timed native trial): what sizes a sampled
/// profile when there is no exact one to take it from.
pub fn native_seconds(req: &ProfileRequest) -> Result<f64, ProfileError> {
    let lib = crate::plugin::sealed::for_path(&req.instance.library)?;
    Ok(run_worker(req, &lib, Mode::Native)?.loop_ns as f64 / 1e9)
}

/// The file name of the profiled library: the object its own functions are in (the copy
/// valgrind loads keeps it).
fn library_name(req: &ProfileRequest) -> String {
    req.instance
        .library
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// The graph's self costs as shares of their sum.
fn shares(g: &Graph, tool: String) -> Result<Counts, ProfileError> {
    let total: u64 = g.functions.values().sum();
    if total == 0 {
        return Err(ProfileError::Empty {
            calls: g.root_calls,
        });
    }
    let share = |n: u64| n as f64 / total as f64;
    let file_name = |p: &str| {
        Path::new(p)
            .file_name()
            .map_or_else(|| p.to_string(), |n| n.to_string_lossy().into_owned())
    };
    let mut functions: Vec<FunctionShare> = g
        .functions
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, &n)| FunctionShare {
            function: k.function.clone(),
            object: file_name(&k.object),
            count: n,
            share: share(n),
        })
        .collect();
    functions.sort_by_key(|f| std::cmp::Reverse(f.count));
    let mut lines: Vec<LineShare> = g
        .lines
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, &n)| LineShare {
            file: k.file.clone(),
            line: k.line,
            function: k.function.clone(),
            count: n,
            share: share(n),
        })
        .collect();
    lines.sort_by_key(|l| std::cmp::Reverse(l.count));
    Ok(Counts {
        event: EVENT.to_string(),
        tool,
        calls: g.root_calls,
        total,
        functions,
        lines,
    })
}
