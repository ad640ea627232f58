//! A trial spec as a measurement worker's command line: the engine writes `measure LIB
//! --digest-bits N --bytes L --iters I --warmups W --trials T --samples S [--cpu C]
//! [--max-address-space B] [--max-cpu-seconds S] [--max-file-size B] [--max-open-files N]
//! [--abi supercop] [--fresh] [--msg-offset O --digest-offset O] [--count]
//! [--hw-instructions] [--loop-only]` (also stored in each
//! record's `command`), and the trial worker (`cyclescope_worker::args`) reads it back; the tests
//! here hold the two sides together. Nothing here runs a worker.

use super::trial::TrialSpec;
use crate::worker::Limits;

/// Everything one measurement worker is told on its command line.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasureInvocation {
    pub spec: TrialSpec,
    /// The CPU the worker pins itself to (none: wherever it was started).
    pub cpu: Option<usize>,
    /// The extended perf type of the CPU's core PMU on a hybrid CPU (`host::pmu`).
    pub pmu_type: Option<u32>,
    /// The sampled profile's period, ns (`profile::sampled`); None for every other trial.
    pub sample_period_ns: Option<u64>,
    pub limits: Limits,
}

impl MeasureInvocation {
    /// The line the worker reads on stdin after `ready`: the probe's heads seed.
    pub fn go_line(&self) -> Option<String> {
        self.spec
            .fresh_seed
            .map(|_| self.spec.fresh_heads.unwrap_or(0).to_string())
    }

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
        if let Some(t) = self.pmu_type {
            put("--pmu-type", u64::from(t));
        }
        if let Some(ns) = self.sample_period_ns {
            put("--sample-period", ns);
        }
        args.extend(self.limits.to_args());
        // Only a SUPERCOP library says so: ICCS commands stay as the records always had them.
        if !s.abi.is_iccs() {
            args.extend(["--abi".to_string(), s.abi.name().to_string()]);
        }
        if let Some(seed) = s.fresh_seed {
            args.extend(["--fresh-seed".to_string(), seed.to_string()]);
        }
        if let Some(o) = s.offsets {
            args.extend([
                "--msg-offset".to_string(),
                o.message.to_string(),
                "--digest-offset".to_string(),
                o.digest.to_string(),
            ]);
        }
        if s.count {
            args.push("--count".to_string());
        }
        if s.hardware_instructions {
            args.push("--hw-instructions".to_string());
        }
        if s.loop_only {
            args.push("--loop-only".to_string());
        }
        if s.repeat {
            args.push("--repeat".to_string());
        }
        args
    }
}

#[cfg(test)]
mod tests;
