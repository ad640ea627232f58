//! `cyclescope profile LABEL --length N [--json]`: where the cost of each named instance goes
//! at one message length — its share per function, and per source line where the library has
//! debug information — from profile trials of its own (`profile`: the calls counted under
//! valgrind's callgrind, then run natively for the overhead). Text or `--json` on stdout.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::Context;
use clap::Args;

use super::{InstanceArgs, arg_value};
use crate::profile::{self, ProfileRequest};

#[derive(Debug, Args)]
pub struct ProfileArgs {
    #[command(flatten)]
    pub select: InstanceArgs,
    /// Message length, bytes.
    #[arg(long, value_name = "BYTES", value_parser = arg_value::length)]
    pub length: u64,
    /// Calls profiled (the counts are exact: a few suffice).
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub calls: u64,
    /// CPU the profile's workers run on (default: the config's, else the highest-numbered CPU
    /// this process may use).
    #[arg(long, value_parser = arg_value::cpu)]
    pub cpu: Option<usize>,
    /// Source lines shown in the text (all of them go into --json).
    #[arg(long, value_name = "N", default_value_t = 15)]
    pub lines: usize,
    /// Also a sampled profile: the calls run natively for about SECONDS with their
    /// instruction pointers sampled by perf_event (hardware cycles where the PMU allows, else
    /// the cpu-clock software event), symbolised with addr2line.
    #[arg(long, value_name = "SECONDS", num_args = 0..=1, default_missing_value = "0.2")]
    pub sampled: Option<f64>,
    /// Also keep the profiles in RUN_DIR/profiles.json, for the candidate page's section on
    /// where the cost goes (`cyclescope report RUN_DIR`).
    #[arg(long, value_name = "RUN_DIR")]
    pub out: Option<std::path::PathBuf>,
    /// Print the profiles as JSON on stdout instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(config: Option<&Path>, args: &ProfileArgs) -> anyhow::Result<ExitCode> {
    let (catalog, instances) = args.select.resolve(config, false)?;
    let cpu = args
        .cpu
        .or(catalog.settings.cpu)
        .unwrap_or_else(crate::cpu::last_allowed);
    let mib =
        crate::worker::limits::address_space_mib(None, catalog.settings.max_address_space_mib)
            .map_err(anyhow::Error::msg)?;
    let cancel = Arc::new(AtomicBool::new(false));
    crate::interrupt::stop_on_signals(&cancel).context("installing the signal handlers")?;
    // The native trial is timed: keep off a CPU another process measures on.
    let lock_dir = crate::cpu::lock::machine_lock_dir();
    let wait = crate::cpu::lock::lock_wait()?;
    let _held = crate::cpu::lock::lock_all(
        &lock_dir,
        &[cpu],
        Path::new("profile"),
        wait,
        &cancel,
        &mut |heard| match heard {
            crate::cpu::lock::LockWait::Busy(busy) => eprintln!("cyclescope: {busy}; waiting"),
            crate::cpu::lock::LockWait::Free { cpu, waited } => {
                eprintln!("cyclescope: {}", crate::format::cpu_free_after(cpu, waited))
            }
        },
    )?;
    let mut profiles = Vec::new();
    for instance in instances {
        eprintln!(
            "profiling {} @ {} on CPU {cpu} ({} calls under valgrind callgrind)",
            crate::sanitize::terminal(&instance.label),
            crate::format::size(args.length),
            args.calls
        );
        let req = ProfileRequest {
            instance,
            input_bytes: args.length,
            cpu,
            calls: args.calls,
            limits: crate::worker::Limits::standard(mib),
            cancel: Some(cancel.clone()),
        };
        let label = crate::sanitize::terminal(&req.instance.label).into_owned();
        let exact = match profile::profile(&req) {
            Ok(p) => Some(p),
            // What valgrind cannot run, the sampled profile can: take it alone when asked.
            Err(e @ profile::ProfileError::Undecodable { .. }) if args.sampled.is_some() => {
                eprintln!("cyclescope: no exact profile of {label}: {e}");
                eprintln!("cyclescope: taking the sampled profile of {label} alone");
                None
            }
            Err(e) => return Err(anyhow::Error::new(e).context(format!("profiling {label}"))),
        };
        if let Some(p) = &exact
            && !args.json
        {
            for line in p.describe(args.lines) {
                outln!("{line}");
            }
        }
        if let Some(seconds) = args.sampled {
            let s = sampled_profile(&req, exact.as_ref(), seconds)
                .with_context(|| format!("sampling {label}"))?;
            if !args.json {
                for line in s.describe(args.lines) {
                    outln!("{line}");
                }
            }
            profiles.extend(exact);
            profiles.push(s);
            continue;
        }
        profiles.extend(exact);
    }
    if let Some(dir) = &args.out {
        profile::add(dir, &profiles)
            .with_context(|| format!("writing {}", crate::sanitize::terminal_path(dir)))?;
    }
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&profiles)?);
    }
    Ok(ExitCode::SUCCESS)
}

/// The sampled profile of `req` over about `seconds` of native calls. As many calls as fill
/// the time natively: from the exact profile's native loop, and — should a preempted loop make
/// that look slow — at least as many as four instructions a nanosecond would take that long.
/// Without an exact profile, one native trial of a thousand calls sizes it.
fn sampled_profile(
    req: &ProfileRequest,
    exact: Option<&profile::Profile>,
    seconds: f64,
) -> Result<profile::Profile, profile::ProfileError> {
    let seconds = seconds.clamp(0.01, 10.0);
    let calls = match exact {
        Some(p) => {
            let per_call = p.overhead.native_loop_s / p.calls.max(1) as f64;
            let by_time = seconds / per_call.max(1e-9);
            let by_count = seconds * 4e9 / p.per_call().max(1.0);
            by_time.max(by_count)
        }
        None => {
            // Enough calls that the clock's own cost is lost in them.
            const TIMED: u64 = 1000;
            let timed = ProfileRequest {
                calls: TIMED,
                ..req.clone()
            };
            let per_call = profile::native_seconds(&timed)? / TIMED as f64;
            seconds / per_call.max(1e-9)
        }
    };
    profile::sampled(&ProfileRequest {
        calls: (calls.ceil() as u64).clamp(1, 10_000_000),
        ..req.clone()
    })
}
