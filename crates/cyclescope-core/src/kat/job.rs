//! A KAT job's messages, which the engine speaks for each step of it and its bookkeeping
//! (`kat::run::check`, `order`) reads: the metadata, each requested file written with every
//! digest from the trial worker (`timing` log lines, progress at most ten messages a second,
//! and per file its size and canonical digests or the fault that stopped it: `kat::run::made`,
//! `kat::produce`), then each conformance check's step and outcome (`kat::run::engine_checks`).
//! Every call of the candidate's is made in a trial worker; no message here is a worker's.
//! Nothing here decides a verdict (the job compares against references).

use std::time::Duration;

use super::KatStatus;
use super::generate::KatFile;
use crate::conform::{Check, CheckResult};
use crate::plugin::NgccMeta;

/// Minimum spacing of progress messages.
pub(crate) const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);

/// What a KAT job makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobSpec {
    pub label: String,
    pub digest_bits: u32,
    /// Explicit KAT name (`--kat-name` or the catalog's); else chosen from the metadata.
    pub kat_name: Option<String>,
    pub files: Vec<KatFile>,
}

/// The job's messages, in the order `kat::run::order` holds them to.
#[derive(Debug, Clone, PartialEq)]
pub enum KatMessage {
    /// The library loaded; `kat_name` is the name used in the file names.
    Loaded {
        meta: Option<NgccMeta>,
        kat_name: String,
    },
    /// The library did not load or disagrees with the catalog (LOADFAIL).
    LoadFailed { detail: String },
    /// A line for the KAT log, verbatim.
    Log { line: String },
    Progress {
        file: KatFile,
        done: u64,
        total: u64,
    },
    /// A file was written completely.
    FileDone {
        file: KatFile,
        name: String,
        bytes: u64,
        seconds: f64,
        sha256_strict: String,
        sha256_nolen: String,
    },
    /// A candidate fault stopped the job (CRYPTOFAIL, OVERFLOW).
    Fault {
        file: KatFile,
        status: KatStatus,
        detail: String,
    },
    /// Our own failure (e.g. the output folder is not writable): not the candidate's fault.
    Error { detail: String },
    /// A conformance check starts (or, for `over_read`, `unused_bits` and `digest_length`, its
    /// next call: at `bits`, as `note` says), so that a worker killed by it is named for it.
    CheckStep {
        check: Check,
        bits: Option<u64>,
        note: String,
    },
    /// A conformance check ended, as the engine judged it (`kat::run::engine_checks`).
    CheckDone { result: CheckResult },
    /// Every requested file was written.
    Done,
}

/// The KAT name: the explicit one, else `ngcc_meta.instance` of a fixed-width library, else
/// the label.
pub(crate) fn kat_name(explicit: Option<&str>, meta: Option<&NgccMeta>, label: &str) -> String {
    explicit
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .or_else(|| {
            meta.filter(|m| m.digest_bits != 0 && !m.instance.is_empty())
                .map(|m| m.instance.clone())
        })
        .unwrap_or_else(|| label.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(instance: &str, digest_bits: u64) -> NgccMeta {
        NgccMeta {
            id: "hash-05".into(),
            kind: "hash".into(),
            algorithm: "uHash".into(),
            instance: instance.into(),
            variant: String::new(),
            source_dir: String::new(),
            compiler: String::new(),
            build_flags: String::new(),
            digest_bits,
            digest_len: digest_bits / 8,
        }
    }

    #[test]
    fn kat_name_prefers_explicit_then_fixed_width_meta_then_label() {
        let m = meta("laurus_xof", 2048);
        assert_eq!(kat_name(Some("x"), Some(&m), "L"), "x");
        assert_eq!(kat_name(None, Some(&m), "Laurus-XOF"), "laurus_xof");
        assert_eq!(
            kat_name(None, Some(&meta("pseudoXOF", 0)), "pseudoXOF-512"),
            "pseudoXOF-512"
        );
        assert_eq!(kat_name(None, None, "L"), "L");
    }
}
