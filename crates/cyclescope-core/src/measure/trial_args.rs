//! The one codec between a trial spec and a measurement worker's command line: the engine
//! writes `measure LIB --digest-bits N --bytes L --iters I --warmups W --trials T --samples S
//! [--cpu C] [--max-address-space B] [--max-cpu-seconds S] [--abi supercop]` (also stored in each record's
//! `command`), and both worker entry points (`cyclescope worker measure` and the small
//! `cyclescope-worker`) read it back with the same parser. Parsed by hand to keep the companion
//! binary small. Nothing here runs a worker.

use std::path::PathBuf;

use super::trial::TrialSpec;
use crate::plugin::Abi;
use crate::worker::Limits;

/// Everything one measurement worker is told on its command line.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasureInvocation {
    pub spec: TrialSpec,
    /// The CPU the worker pins itself to (none: wherever it was started).
    pub cpu: Option<usize>,
    pub limits: Limits,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgsError {
    #[error(
        "usage: measure LIB --digest-bits N --bytes L --iters I --warmups W [--trials T] [--samples S] [--cpu C] [--max-address-space B] [--max-cpu-seconds S]"
    )]
    Usage,
    #[error("no library given")]
    NoLibrary,
    #[error("{0} needs a number")]
    NotANumber(String),
    #[error("{0} needs iccs or supercop")]
    NotAnAbi(String),
    #[error("unknown option {0}")]
    Unknown(String),
    #[error("{0} is given twice")]
    Twice(String),
    #[error("--digest-bits, --bytes, --iters and --warmups are required")]
    Missing,
    #[error("{0} is out of range")]
    OutOfRange(&'static str),
}

/// The numeric options, in the order they are written.
const OPTIONS: [&str; 9] = [
    "--digest-bits",
    "--bytes",
    "--iters",
    "--warmups",
    "--trials",
    "--samples",
    "--cpu",
    "--max-address-space",
    "--max-cpu-seconds",
];

impl MeasureInvocation {
    /// The worker's arguments after `worker`, starting with `measure`.
    pub fn to_args(&self) -> Vec<String> {
        let s = &self.spec;
        let mut args = vec!["measure".to_string(), s.library.display().to_string()];
        let mut put = |k: &str, v: u64| args.extend([k.to_string(), v.to_string()]);
        put("--digest-bits", u64::from(s.digest_bits));
        put("--bytes", s.input_bytes);
        put("--iters", s.iterations);
        put("--warmups", s.warmups);
        put("--trials", u64::from(s.trials));
        put("--samples", s.sample_calls);
        if let Some(cpu) = self.cpu {
            put("--cpu", cpu as u64);
        }
        if let Some(b) = self.limits.address_space_bytes {
            put("--max-address-space", b);
        }
        if let Some(c) = self.limits.cpu_seconds {
            put("--max-cpu-seconds", c);
        }
        // Only a SUPERCOP library says so: ICCS commands stay as the records always had them.
        if !s.abi.is_iccs() {
            args.extend(["--abi".to_string(), s.abi.name().to_string()]);
        }
        args
    }

    /// Reads what [`MeasureInvocation::to_args`] wrote (a leading `worker` is skipped).
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Self, ArgsError> {
        let mut it = args.into_iter().skip_while(|a| a.as_str() == "worker");
        if it.next().as_deref() != Some("measure") {
            return Err(ArgsError::Usage);
        }
        let library = PathBuf::from(it.next().ok_or(ArgsError::NoLibrary)?);
        let mut values: [Option<u64>; 9] = [None; 9];
        let mut abi = None;
        while let Some(k) = it.next() {
            if k == "--abi" {
                let v = it.next().and_then(|v| Abi::from_name(&v));
                let v = v.ok_or_else(|| ArgsError::NotAnAbi(k.clone()))?;
                if abi.replace(v).is_some() {
                    return Err(ArgsError::Twice(k));
                }
                continue;
            }
            let slot = OPTIONS
                .iter()
                .position(|o| *o == k.as_str())
                .ok_or_else(|| ArgsError::Unknown(k.clone()))?;
            let v = it
                .next()
                .and_then(|v| v.parse::<u64>().ok())
                .ok_or_else(|| ArgsError::NotANumber(k.clone()))?;
            if values[slot].replace(v).is_some() {
                return Err(ArgsError::Twice(k));
            }
        }
        let [
            bits,
            bytes,
            iters,
            warmups,
            trials,
            samples,
            cpu,
            space,
            secs,
        ] = values;
        let (Some(bits), Some(input_bytes), Some(iterations), Some(warmups)) =
            (bits, bytes, iters, warmups)
        else {
            return Err(ArgsError::Missing);
        };
        let narrow = |v: u64, what| u32::try_from(v).map_err(|_| ArgsError::OutOfRange(what));
        Ok(Self {
            spec: TrialSpec {
                library,
                digest_bits: narrow(bits, "--digest-bits")?,
                input_bytes,
                iterations,
                warmups,
                trials: narrow(trials.unwrap_or(1), "--trials")?,
                sample_calls: samples.unwrap_or(0),
                abi: abi.unwrap_or_default(),
            },
            cpu: cpu
                .map(|c| usize::try_from(c).map_err(|_| ArgsError::OutOfRange("--cpu")))
                .transpose()?,
            limits: Limits {
                address_space_bytes: space,
                cpu_seconds: secs,
            },
        })
    }
}

/// Entry point of both worker programs for a measurement: parse, then serve the spec.
pub fn worker_main(args: Vec<String>) -> std::process::ExitCode {
    match MeasureInvocation::parse(args) {
        Ok(inv) => super::trial::serve(&inv.spec, inv.cpu, inv.limits),
        Err(e) => {
            eprintln!("cyclescope worker: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invocation(cpu: Option<usize>, limits: Limits) -> MeasureInvocation {
        MeasureInvocation {
            spec: TrialSpec {
                library: PathBuf::from("target/release/libpseudoxof.so"),
                digest_bits: 512,
                input_bytes: 1024,
                iterations: 17_583,
                warmups: 3,
                trials: 5,
                sample_calls: 250,
                abi: Abi::Iccs,
            },
            cpu,
            limits,
        }
    }

    #[test]
    fn every_spec_round_trips_through_its_arguments() {
        let full = Limits {
            address_space_bytes: Some(8 << 30),
            cpu_seconds: Some(7),
        };
        for inv in [
            invocation(Some(1), full),
            invocation(None, Limits::default()),
            invocation(
                Some(0),
                Limits {
                    address_space_bytes: None,
                    cpu_seconds: Some(1),
                },
            ),
        ] {
            let args = inv.to_args();
            assert_eq!(MeasureInvocation::parse(args.clone()), Ok(inv.clone()));
            let mut supercop = inv.clone();
            supercop.spec.abi = Abi::Supercop;
            assert_eq!(MeasureInvocation::parse(supercop.to_args()), Ok(supercop));
            let mut with_worker = vec!["worker".to_string()];
            with_worker.extend(args);
            assert_eq!(MeasureInvocation::parse(with_worker), Ok(inv));
        }
    }

    #[test]
    fn the_recorded_command_keeps_its_order() {
        let args = invocation(Some(1), Limits::default()).to_args();
        assert_eq!(
            args.join(" "),
            "measure target/release/libpseudoxof.so --digest-bits 512 --bytes 1024 --iters 17583 \
             --warmups 3 --trials 5 --samples 250 --cpu 1"
        );
    }

    #[test]
    fn bad_command_lines_are_refused_with_the_reason() {
        let parse = |s: &str| MeasureInvocation::parse(s.split(' ').map(String::from));
        assert_eq!(parse("probe x"), Err(ArgsError::Usage));
        assert_eq!(parse("measure"), Err(ArgsError::NoLibrary));
        assert_eq!(
            parse("measure l --bytes 32"),
            Err(ArgsError::Missing),
            "digest bits, iterations and warm-ups are required"
        );
        assert_eq!(
            parse("measure l --bytes x"),
            Err(ArgsError::NotANumber("--bytes".into()))
        );
        assert_eq!(
            parse("measure l --fast 1"),
            Err(ArgsError::Unknown("--fast".into()))
        );
        assert_eq!(
            parse("measure l --bytes 1 --bytes 2"),
            Err(ArgsError::Twice("--bytes".into()))
        );
        assert_eq!(
            parse("measure l --digest-bits 4294967296 --bytes 1 --iters 1 --warmups 0"),
            Err(ArgsError::OutOfRange("--digest-bits"))
        );
    }
}
