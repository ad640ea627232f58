//! A KAT job's protocol, and its second part, the conformance checks, which run in
//! `cyclescope worker kat`: load the library, check its width, run every check (`conform`), a
//! step before each and its outcome after. The first part — the metadata, and each requested
//! file written with every digest from the trial worker (`timing` log lines, progress at most
//! ten messages a second, and per file its size and canonical digests or the fault that
//! stopped it) — is the engine's (`kat::run`, `kat::produce`), spoken in the same messages.
//! Nothing here decides a verdict (the parent compares against references).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::KatStatus;
use super::generate::KatFile;
use crate::conform::run::Report;
use crate::conform::verdict::Digests;
use crate::conform::{Check, CheckResult};
use crate::plugin::{HashLibrary, NgccMeta};

/// Minimum spacing of progress messages.
pub(crate) const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);

/// What the parent asks a worker to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobSpec {
    pub library: PathBuf,
    pub label: String,
    pub digest_bits: u32,
    /// Explicit KAT name (`--kat-name` or the catalog's); else chosen from the metadata.
    pub kat_name: Option<String>,
    pub files: Vec<KatFile>,
    /// Folder the KAT text is written to (exists).
    pub out_dir: PathBuf,
    pub abi: crate::plugin::Abi,
}

impl JobSpec {
    /// The arguments after `cyclescope worker`.
    pub(crate) fn worker_args(&self) -> Vec<String> {
        let mut args = vec![
            "kat".to_string(),
            format!("--label={}", self.label),
            format!("--digest-bits={}", self.digest_bits),
            format!("--out-dir={}", self.out_dir.display()),
            format!(
                "--files={}",
                self.files
                    .iter()
                    .map(|f| f.tag())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        ];
        if let Some(n) = &self.kat_name {
            args.push(format!("--kat-name={n}"));
        }
        if !self.abi.is_iccs() {
            args.push(format!("--abi={}", self.abi.name()));
        }
        args.extend(["--".to_string(), self.library.display().to_string()]);
        args
    }
}

/// Messages from the worker, one JSON line each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
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
    /// A conformance check ended; a check judged from digests sends them (the parent judges
    /// them again, `conform::verdict`).
    CheckDone {
        result: CheckResult,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        digests: Option<Digests>,
    },
    /// A check the engine ran and judged itself (`kat::run::engine_checks`): never a worker's
    /// line (no worker can write one: it has no name in the protocol).
    #[serde(skip)]
    EngineCheckDone { result: CheckResult },
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

/// Runs the job's second part, the conformance checks, handing every message to `send`: the
/// engine wrote the KAT files already (`kat::produce`, every digest from the trial worker) and
/// spoke for them; this part loads the library, runs every check and says `done`.
pub fn run(spec: &JobSpec, send: &mut dyn FnMut(&KatMessage)) {
    let lib = match HashLibrary::open_abi(&spec.library, spec.abi)
        .and_then(|l| l.check_digest_bits(spec.digest_bits).map(|()| l))
    {
        Ok(l) => l,
        Err(e) => {
            return send(&KatMessage::LoadFailed {
                detail: e.to_string(),
            });
        }
    };
    let bits = spec.digest_bits;
    let started = Instant::now();
    crate::conform::run::run(&lib, bits, &mut |r| {
        send(&match r {
            Report::Step { check, bits, note } => KatMessage::CheckStep { check, bits, note },
            Report::Done(result, digests) => KatMessage::CheckDone { result, digests },
        })
    });
    // What the checks add to the gate, in the log beside the files' own times.
    send(&KatMessage::Log {
        line: format!(
            "timing  conformance {:.3} s ({} checks in this worker)",
            started.elapsed().as_secs_f64(),
            crate::conform::Check::all().len() - crate::conform::ENGINE_CHECKS.len()
        ),
    });
    send(&KatMessage::Done);
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

    #[test]
    fn messages_are_json_lines_with_a_tag() {
        let m = KatMessage::Progress {
            file: KatFile::Kat2_12,
            done: 1,
            total: 4097,
        };
        let s = serde_json::to_string(&m).unwrap();
        assert_eq!(
            s,
            r#"{"t":"progress","file":"KAT_2_12","done":1,"total":4097}"#
        );
        assert_eq!(serde_json::from_str::<KatMessage>(&s).unwrap(), m);
    }

    #[test]
    fn an_unloadable_library_reports_loadfail() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("libx.so");
        std::fs::write(&lib, "not a library\n").unwrap();
        let spec = JobSpec {
            library: lib,
            label: "x".into(),
            digest_bits: 256,
            kat_name: None,
            files: vec![KatFile::Kat2_12],
            out_dir: dir.path().to_path_buf(),
            abi: crate::plugin::Abi::Iccs,
        };
        let mut got = Vec::new();
        run(&spec, &mut |m| got.push(m.clone()));
        assert!(
            matches!(got.as_slice(), [KatMessage::LoadFailed { detail }] if detail.contains("not an ELF")),
            "{got:?}"
        );
    }
}
