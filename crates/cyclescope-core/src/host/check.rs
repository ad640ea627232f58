//! The vocabulary of host checks: which checks exist, their statuses, and one result (what was
//! seen, the harness's problem sentence when it fails, the command that fixes it). The TUI, the
//! CLI and the records render these same values. Nothing here reads the system.

use serde::{Deserialize, Serialize};
use strum::{EnumIter, IntoEnumIterator};

/// One host check, in the order they are run and shown. The first nine are the harness's
/// `host_problems` conditions (spec §4, 1–9); the rest are cyclescope's advisories, which only
/// ever warn.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, EnumIter,
)]
#[serde(rename_all = "snake_case")]
pub enum HostCheck {
    Architecture,
    CycleCounter,
    Turbo,
    Governor,
    FrequencyPinned,
    Smt,
    HybridCore,
    CpuUsable,
    ClockSteady,
    Isolation,
    Aslr,
    LoadAverage,
    BusyCpu,
    Hypervisor,
    Allocation,
}

impl HostCheck {
    /// Every check, in declaration order (derived, so a new variant is never left out).
    pub fn all() -> impl Iterator<Item = HostCheck> {
        <Self as IntoEnumIterator>::iter()
    }

    /// The stable identifier used in JSON (`"cycle_counter"`).
    pub fn id(self) -> &'static str {
        match self {
            HostCheck::Architecture => "architecture",
            HostCheck::CycleCounter => "cycle_counter",
            HostCheck::Turbo => "turbo",
            HostCheck::Governor => "governor",
            HostCheck::FrequencyPinned => "frequency_pinned",
            HostCheck::Smt => "smt",
            HostCheck::HybridCore => "hybrid_core",
            HostCheck::CpuUsable => "cpu_usable",
            HostCheck::ClockSteady => "clock_steady",
            HostCheck::Isolation => "isolation",
            HostCheck::Aslr => "aslr",
            HostCheck::LoadAverage => "load_average",
            HostCheck::BusyCpu => "busy_cpu",
            HostCheck::Hypervisor => "hypervisor",
            HostCheck::Allocation => "allocation",
        }
    }

    /// A short human title for tables.
    pub fn title(self) -> &'static str {
        match self {
            HostCheck::Architecture => "architecture",
            HostCheck::CycleCounter => "cycle counter",
            HostCheck::Turbo => "turbo/boost",
            HostCheck::Governor => "governor",
            HostCheck::FrequencyPinned => "frequency pinned",
            HostCheck::Smt => "SMT",
            HostCheck::HybridCore => "hybrid core",
            HostCheck::CpuUsable => "CPU usable",
            HostCheck::ClockSteady => "clock steady",
            HostCheck::Isolation => "isolation",
            HostCheck::Aslr => "ASLR",
            HostCheck::LoadAverage => "load average",
            HostCheck::BusyCpu => "busy CPU",
            HostCheck::Hypervisor => "hypervisor",
            HostCheck::Allocation => "allocation",
        }
    }

    /// True for the checks whose failures are the harness's `host_problems`; advisories never
    /// fail.
    pub fn is_harness_condition(self) -> bool {
        self <= HostCheck::ClockSteady
    }
}

impl std::fmt::Display for HostCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.title())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Fit for measurement in this respect.
    Pass,
    /// Measurements may be disturbed; not a problem in the harness's sense.
    Warn,
    /// A host problem: measuring commands refuse unless told to run on an unfixed host.
    Fail,
    /// Could not be determined here (e.g. no switch exposed); not a problem.
    Unknown,
    /// Does not apply here (e.g. no cpufreq, or a check the harness runs only when nothing
    /// else failed).
    Skip,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Warn => "warn",
            Status::Fail => "fail",
            Status::Unknown => "unknown",
            Status::Skip => "skip",
        }
    }
}

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckResult {
    pub check: HostCheck,
    pub status: Status,
    /// What was seen, in words (file values, probe results).
    pub value: String,
    /// For `Fail` only: the problem sentence (the harness's wording where the harness has the
    /// condition), as stored in `campaign.json` `host_problems`.
    pub problem: Option<String>,
    /// True when this failure goes beyond the harness (e.g. a missing PMU behind an acceptable
    /// `perf_event_paranoid`): the harness would not list it under this check.
    pub beyond_harness: bool,
    /// The command or action that fixes it (for anything but `Pass`/`Skip`).
    pub hint: Option<String>,
}

impl CheckResult {
    pub(crate) fn pass(check: HostCheck, value: impl Into<String>) -> Self {
        Self::new(check, Status::Pass, value, None)
    }

    pub(crate) fn skip(check: HostCheck, value: impl Into<String>) -> Self {
        Self::new(check, Status::Skip, value, None)
    }

    pub(crate) fn warn(
        check: HostCheck,
        value: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        Self::new(check, Status::Warn, value, Some(hint.into()))
    }

    pub(crate) fn unknown(
        check: HostCheck,
        value: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        Self::new(check, Status::Unknown, value, Some(hint.into()))
    }

    /// A failure with the harness's problem sentence.
    pub(crate) fn fail(
        check: HostCheck,
        value: impl Into<String>,
        problem: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        CheckResult {
            problem: Some(problem.into()),
            ..Self::new(check, Status::Fail, value, Some(hint.into()))
        }
    }

    /// A failure the harness does not detect under this check.
    pub(crate) fn fail_beyond_harness(
        check: HostCheck,
        value: impl Into<String>,
        problem: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        CheckResult {
            beyond_harness: true,
            ..Self::fail(check, value, problem, hint)
        }
    }

    fn new(
        check: HostCheck,
        status: Status,
        value: impl Into<String>,
        hint: Option<String>,
    ) -> Self {
        CheckResult {
            check,
            status,
            value: value.into(),
            problem: None,
            beyond_harness: false,
            hint,
        }
    }

    /// A failure the harness itself reports (gates the clock probe as in the harness).
    pub(crate) fn is_harness_problem(&self) -> bool {
        self.status == Status::Fail && !self.beyond_harness
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_match_serde_and_order_is_the_harness_order() {
        for c in HostCheck::all() {
            assert_eq!(
                serde_json::to_string(&c).unwrap(),
                format!("\"{}\"", c.id())
            );
        }
        assert_eq!(HostCheck::all().count(), 15);
        let harness: Vec<&str> = HostCheck::all()
            .filter(|c| c.is_harness_condition())
            .map(HostCheck::id)
            .collect();
        assert_eq!(
            harness,
            [
                "architecture",
                "cycle_counter",
                "turbo",
                "governor",
                "frequency_pinned",
                "smt",
                "hybrid_core",
                "cpu_usable",
                "clock_steady"
            ]
        );
    }
}
