//! The sampled profile: the same native trial worker, its instruction pointers sampled by
//! perf_event and symbolised afterwards, for when callgrind cannot give an exact count.

use super::{Mode, ProfileRequest, library_name, run_worker};
use crate::profile::{FunctionShare, LineShare, Overhead, Profile, ProfileError};

/// The sampled profile: the calls run natively with their instruction pointers sampled
/// (hardware cycles where the PMU allows, else cpu-clock), symbolised with `addr2line`.
pub fn sampled(req: &ProfileRequest) -> Result<Profile, ProfileError> {
    let lib = crate::plugin::sealed::for_path(&req.instance.library)?;
    let run = run_worker(req, &lib, Mode::Sampled)?;
    let native = run_worker(req, &lib, Mode::Native)?;
    let s = &run.samples;
    if s.ips.is_empty() {
        return Err(ProfileError::NoSamples);
    }
    // The symbols come from the bytes that ran; errors name the library by its path.
    let t = crate::profile::symbols::tally(&lib.here(), s.base, &s.ips).map_err(|e| match e {
        ProfileError::Symbols { why, .. } => ProfileError::Symbols {
            path: req.instance.library.display().to_string(),
            why,
        },
        e => e,
    })?;
    let total = s.ips.len() as u64;
    let share = |n: u64| n as f64 / total as f64;
    let object = library_name(req);
    let mut functions: Vec<FunctionShare> = t
        .functions
        .iter()
        .map(|(f, &n)| FunctionShare {
            function: f.clone(),
            object: object.clone(),
            count: n,
            share: share(n),
        })
        .collect();
    if t.outside > 0 {
        functions.push(FunctionShare {
            function: crate::profile::symbols::OUTSIDE.to_string(),
            object: String::new(),
            count: t.outside,
            share: share(t.outside),
        });
    }
    functions.sort_by_key(|f| std::cmp::Reverse(f.count));
    let mut lines: Vec<LineShare> = t
        .lines
        .iter()
        .map(|((file, line, function), &n)| LineShare {
            file: file.clone(),
            line: *line,
            function: function.clone(),
            count: n,
            share: share(n),
        })
        .collect();
    lines.sort_by_key(|l| std::cmp::Reverse(l.count));
    let (event, tool) = match s.event.as_str() {
        "cycles" => (
            "perf_event:cycles:u samples",
            "perf_event sampling every 100 000 user cycles".to_string(),
        ),
        _ => (
            "perf_event:cpu-clock samples",
            format!(
                "perf_event sampling every {} of cpu-clock",
                crate::format::time(crate::profile::SAMPLE_PERIOD_NS as f64 / 1e9)
            ),
        ),
    };
    Ok(Profile {
        candidate: req.instance.candidate.clone(),
        library: library_name(req),
        label: req.instance.label.clone(),
        input_bytes: req.input_bytes,
        event: event.to_string(),
        tool,
        calls: req.calls.max(1),
        total,
        functions,
        lines,
        overhead: Overhead {
            profiled_loop_s: run.loop_ns as f64 / 1e9,
            native_loop_s: native.loop_ns as f64 / 1e9,
            slowdown: run.loop_ns as f64 / native.loop_ns.max(1) as f64,
            profile_wall_s: run.wall.as_secs_f64(),
            native_waited_s: native.waited_ns.map(|ns| ns as f64 / 1e9),
        },
        sandbox_relaxed: Vec::new(),
        lost: s.lost,
    })
}
