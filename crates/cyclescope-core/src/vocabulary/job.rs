//! One measurement job (an instance at one message length), how it ended, and the figures a
//! finished job reports to the frontends.

use serde::{Deserialize, Serialize};

use crate::counter::CycleSource;
use crate::kat::KatVerdict;
use crate::measure::stats::PerCall;

use super::RecordStatus;

/// One measurement job: an instance at one message length.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct JobKey {
    pub candidate: String,
    pub label: String,
    pub input_bytes: u64,
}

impl std::fmt::Display for JobKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} @ {}",
            self.label,
            crate::format::size(self.input_bytes)
        )
    }
}

/// What went wrong with a candidate during measurement, in the harness's status words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::EnumIter)]
pub enum FailureKind {
    /// CryptHash returned non-zero.
    Cryptofail,
    /// CryptHash wrote outside its buffers.
    Overflow,
    /// The library did not load in the worker (or no counter could be opened there).
    Loadfail,
    /// The worker died: a signal, or an exit without a result.
    Crash,
    /// The worker gave no result within its time limit and was killed.
    Timeout,
    /// The worker's reports broke the protocol or disagreed with what the parent saw from
    /// outside (a library writing to the protocol descriptor, figures it could not have had).
    Tampered,
    /// A figure no core could produce: more bytes per cycle (or per nanosecond) than it can
    /// load (`measure::proof::floor`).
    Implausible,
    /// The guide's figure on the harness's message is far below the fresh-message probe's:
    /// the library recognised or cached the timing message (`measure::proof`).
    Probefail,
    /// The loop counter's reading of a trial was no figure: zero, or multiplexed.
    Counterfault,
    /// A record that is not complete and does not say why (the harness stores no reason).
    Unexplained,
}

impl FailureKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Cryptofail => "CRYPTOFAIL",
            FailureKind::Overflow => "OVERFLOW",
            FailureKind::Loadfail => "LOADFAIL",
            FailureKind::Crash => "CRASH",
            FailureKind::Timeout => "TIMEOUT",
            FailureKind::Tampered => "TAMPERED",
            FailureKind::Implausible => "IMPLAUSIBLE",
            FailureKind::Probefail => "PROBEFAIL",
            FailureKind::Counterfault => "COUNTERFAULT",
            FailureKind::Unexplained => "FAILED",
        }
    }

    fn from_word(word: &str) -> Option<Self> {
        <Self as strum::IntoEnumIterator>::iter().find(|k| k.as_str() == word)
    }
}

impl std::fmt::Display for FailureKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for FailureKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for FailureKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let word = String::deserialize(d)?;
        Self::from_word(&word)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown failure kind {word:?}")))
    }
}

/// Why a job failed: its kind and what was seen. Serialised as one string, `KIND: detail`
/// (e.g. `CRASH: worker killed by SIGSEGV`), as records and journals have always stored it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobFailure {
    pub kind: FailureKind,
    pub detail: String,
}

impl JobFailure {
    pub fn new(kind: FailureKind, detail: impl Into<String>) -> Self {
        Self {
            kind,
            detail: detail.into(),
        }
    }
}

impl std::fmt::Display for JobFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind, self.detail)
    }
}

impl std::str::FromStr for JobFailure {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (word, detail) = s
            .split_once(": ")
            .ok_or_else(|| format!("a failure reads `KIND: detail`, not {s:?}"))?;
        let kind = FailureKind::from_word(word)
            .ok_or_else(|| format!("unknown failure kind {word:?} in {s:?}"))?;
        Ok(Self::new(kind, detail))
    }
}

impl Serialize for JobFailure {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for JobFailure {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// How one worker process (and so a job) ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobOutcome {
    Complete,
    Failed(JobFailure),
    /// The operator cancelled the run while it was in flight.
    Cancelled,
}

/// How long timed trials waited for their CPU (the kernel's run-queue wait of the worker, as
/// `schedstat` counts it) against how long they ran: what a busy CPU did to the trials, as
/// they measured it themselves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RunQueueWait {
    pub waited_s: f64,
    pub timed_s: f64,
}

impl RunQueueWait {
    /// The waits of `trials` (seconds each ran) with their waits in ns (None: not known,
    /// and the trial is left out); None when no trial has a figure.
    pub fn of_trials(seconds: &[f64], waited_ns: &[Option<u64>]) -> Option<Self> {
        let sum = seconds
            .iter()
            .zip(waited_ns)
            .filter_map(|(s, w)| Some((*s, (*w)? as f64 / 1e9)))
            .fold(Self::default(), |a, (s, w)| Self {
                waited_s: a.waited_s + w,
                timed_s: a.timed_s + s,
            });
        (sum.timed_s > 0.0).then_some(sum)
    }

    pub fn add(&mut self, other: Self) {
        self.waited_s += other.waited_s;
        self.timed_s += other.timed_s;
    }

    /// Whether the trials waited more than a trial may before it is run again (1 %).
    pub fn disturbs(&self) -> bool {
        self.share()
            .is_some_and(|s| s > crate::measure::job::MAX_PREEMPTED_SHARE)
    }

    /// The share of their time the trials waited (None before any trial ran).
    pub fn share(&self) -> Option<f64> {
        (self.timed_s > 0.0).then(|| (self.waited_s / self.timed_s).clamp(0.0, 1.0))
    }
}

/// The figures of a finished job, as the results table shows them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobSummary {
    pub status: RecordStatus,
    pub kat: KatVerdict,
    pub mean_cycles: Option<f64>,
    pub mean_seconds: f64,
    pub throughput_mb_per_second: f64,
    pub measurements: u64,
    pub trials: u32,
    pub iterations_per_trial: u64,
    #[serde(with = "crate::counter::source_or_empty")]
    pub cycle_source: Option<CycleSource>,
    pub per_call: Option<PerCall>,
    pub disturbed_retries: u32,
    /// The 95 % confidence half-width of the mean of trial means, relative to it (None with
    /// fewer than two trials, or for a harness record).
    #[serde(default)]
    pub ci95_relative: Option<f64>,
    /// The figure preemption cannot move (`measure::robust`); None for a harness record, a
    /// count, or a job with too few per-call samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub robust: Option<crate::measure::robust::Robust>,
    /// Why the figure is not marked clean (`doubt::doubts`); empty when it is.
    #[serde(default)]
    pub doubts: Vec<crate::measure::doubt::Doubt>,
    /// The figures at the other buffer layouts (`run --layouts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layouts: Option<Box<crate::measure::layout::LayoutSpread>>,
    /// How long its kept trials waited for the CPU (None where not measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_wait: Option<RunQueueWait>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_round_trip_through_their_record_string() {
        for (text, kind) in [
            ("CRASH: worker killed by SIGSEGV", FailureKind::Crash),
            (
                "TIMEOUT: no result after 2.0 s; worker killed",
                FailureKind::Timeout,
            ),
            ("CRYPTOFAIL: CryptHash returned 1", FailureKind::Cryptofail),
            ("OVERFLOW: CryptHash wrote outside", FailureKind::Overflow),
            ("LOADFAIL: no such file", FailureKind::Loadfail),
        ] {
            let f: JobFailure = serde_json::from_str(&format!("{text:?}")).unwrap();
            assert_eq!(f.kind, kind);
            assert_eq!(serde_json::to_string(&f).unwrap(), format!("{text:?}"));
        }
        assert!("cancelled".parse::<JobFailure>().is_err());
        assert!("BOOM: x".parse::<JobFailure>().is_err());
    }

    #[test]
    fn run_queue_waits_add_up_over_the_trials_that_measured_one() {
        // Two trials of 0.2 s and 0.4 s waited 60 ms and 40 ms; a third has no figure.
        let w = RunQueueWait::of_trials(
            &[0.2, 0.4, 1.0],
            &[Some(60_000_000), Some(40_000_000), None],
        )
        .expect("two trials measured their wait");
        assert!((w.waited_s - 0.1).abs() < 1e-12 && (w.timed_s - 0.6).abs() < 1e-12);
        assert!(w.disturbs(), "1/6 of their time is far over 1 %");
        assert_eq!(RunQueueWait::of_trials(&[0.2], &[None]), None);
        assert_eq!(RunQueueWait::of_trials(&[0.2], &[]), None);
        let quiet = RunQueueWait::of_trials(&[1.0], &[Some(5_000_000)]).unwrap();
        assert!(!quiet.disturbs(), "0.5 % is what a trial may wait");
        let mut both = quiet;
        both.add(w);
        assert!((both.share().unwrap() - 0.105 / 1.6).abs() < 1e-12);
    }
}
