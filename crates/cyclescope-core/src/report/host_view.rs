//! The measured system as every page names it: system ID, architecture, CPU, clock text and
//! the environment table rows, from the dataset's environment and `systems.csv`. Owns the
//! choice of which environment and CPU a page shows. Never reads files. The record's
//! environment strings are the host's (or a forger's) and are escaped for Markdown here, once.

use serde_json::{Map, Value};

use super::dataset::Dataset;
use super::side_files::System;
use crate::format::{self, ClockState};

/// What the pages say about the system a dataset was measured on.
#[derive(Debug, Clone)]
pub(crate) struct HostView {
    pub(crate) system_id: String,
    /// `aarch64`, `x86_64`, …
    pub(crate) arch: String,
    pub(crate) description: Option<String>,
    pub(crate) env: Map<String, Value>,
    pub(crate) cpu: Option<u64>,
    pub(crate) started_utc: String,
    pub(crate) ended_utc: String,
    /// A harness dataset (published layout of paths and scripts) rather than a cyclescope run.
    pub(crate) harness: bool,
}

impl HostView {
    pub fn new(ds: &Dataset, system_id: &str, system: Option<&System>) -> Self {
        let mut env = ds.environment();
        for value in env.values_mut() {
            if let Value::String(s) = value {
                *s = crate::sanitize::markdown(s).into_owned();
            }
        }
        let arch = system
            .map(|s| s.arch.clone())
            .or_else(|| text(&env, "architecture").map(str::to_string))
            .unwrap_or_else(|| std::env::consts::ARCH.to_string());
        let stamp = |k: &str| {
            ds.campaign
                .get(k)
                .and_then(Value::as_str)
                .map_or(format::MISSING.to_string(), |s| {
                    let stamp: String = s.chars().take(19).collect();
                    crate::sanitize::markdown(&stamp).into_owned()
                })
        };
        Self {
            system_id: system_id.to_string(),
            arch,
            description: system.map(|s| s.description.clone()),
            cpu: ds.measuring_cpu(),
            started_utc: stamp("started_utc"),
            ended_utc: stamp("ended_utc"),
            harness: ds.is_harness(),
            env,
        }
    }

    /// `AArch64` / `x86-64` as titles write it.
    pub(crate) fn arch_title(&self) -> String {
        match self.arch.as_str() {
            "aarch64" => "AArch64".into(),
            "x86_64" => "x86-64".into(),
            other => other.into(),
        }
    }

    /// The self-assessment guide the page follows: `ARM` or `x86`.
    pub(crate) fn guide(&self) -> &'static str {
        if self.arch == "aarch64" { "ARM" } else { "x86" }
    }

    pub(crate) fn cpu_model(&self) -> &str {
        text(&self.env, "cpu_model").unwrap_or("unknown CPU")
    }

    pub(crate) fn clock_text(&self) -> String {
        let khz = |k: &str| text(&self.env, k).and_then(|v| v.trim().parse::<u64>().ok());
        let no_turbo = text(&self.env, "intel_pstate_no_turbo").map(|v| v.trim() == "0");
        let boost = text(&self.env, "cpufreq_boost").map(|v| v.trim() == "1");
        format::clock(&ClockState {
            arch: &self.arch,
            governor: text(&self.env, "cpufreq_governor"),
            min_khz: khz("cpufreq_min_khz"),
            max_khz: khz("cpufreq_max_khz"),
            boost: no_turbo.or(boost),
            smt: text(&self.env, "smt_control"),
        })
    }

    /// `Qualcomm Oryon (CPU 2, one core)`.
    pub(crate) fn processor(&self) -> String {
        match self.cpu {
            Some(cpu) => format!("{} (CPU {cpu}, one core)", self.cpu_model()),
            None => format!("{} (one core)", self.cpu_model()),
        }
    }

    /// The §2 table rows (item, value).
    pub(crate) fn environment_rows(&self) -> Vec<(&'static str, String)> {
        let or_missing = |k: &str| text(&self.env, k).unwrap_or(format::MISSING).to_string();
        let memory = self
            .env
            .get("memory_total_kib")
            .and_then(Value::as_u64)
            .map_or(format::MISSING.to_string(), |k| format!("{} MiB", k / 1024));
        vec![
            ("processor", self.processor()),
            ("machine", or_missing("machine")),
            ("clock", self.clock_text()),
            ("memory", memory),
            (
                "OS / kernel",
                format!("{} / {}", or_missing("os"), or_missing("kernel")),
            ),
            (
                "compiler / build tool",
                format!("{} / {}", or_missing("compiler"), or_missing("cmake")),
            ),
            (
                "campaign start / end (UTC)",
                format!("{} / {}", self.started_utc, self.ended_utc),
            ),
        ]
    }
}

fn text<'a>(env: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    env.get(key).and_then(Value::as_str)
}
