//! Following one worker: collect its messages into the log and the file list, and judge each
//! finished file against its reference. Pure bookkeeping; spawning and classifying the
//! worker's end is the parent module's.

use std::path::{Path, PathBuf};

use super::references::References;
use super::{FileReport, KatEvent, KatReport};
use crate::catalog::Instance;
use crate::conform::verdict;
use crate::conform::{Check, CheckResult};
use crate::kat::KatStatus;
use crate::kat::generate::{KatFile, Written};
use crate::kat::job::KatMessage;
use crate::kat::known::KnownAnswer;
use crate::kat::log;
use crate::plugin::NgccMeta;
use crate::worker::Tampering;

/// Everything learnt from the worker so far.
pub(super) struct JobState<'a> {
    inst: &'a Instance,
    library_shown: String,
    meta: Option<NgccMeta>,
    kat_name: Option<String>,
    log: Vec<String>,
    files: Vec<FileReport>,
    current: Option<KatFile>,
    load_failed: Option<String>,
    fault: Option<(KatStatus, String)>,
    error: Option<String>,
    done: bool,
    /// The conformance check in flight: its step (bits, note) as last announced.
    step: Option<(Check, Option<u64>, String)>,
    conformance: Vec<CheckResult>,
    /// The `alignment` vectors of this job's `KAT_2_12`, read from the text this process
    /// verified against its reference (empty unless it passed).
    vectors: Vec<KnownAnswer>,
}

fn digest_from_hex(s: &str) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    hex::decode_to_slice(s, &mut out).ok().map(|()| out)
}

impl<'a> JobState<'a> {
    pub(super) fn new(inst: &'a Instance, library_shown: &str) -> Self {
        Self {
            inst,
            library_shown: library_shown.to_string(),
            meta: None,
            kat_name: None,
            log: Vec::new(),
            files: Vec::new(),
            current: None,
            load_failed: None,
            fault: None,
            error: None,
            done: false,
            step: None,
            conformance: Vec::new(),
            vectors: Vec::new(),
        }
    }

    pub(super) fn on_message(
        &mut self,
        m: KatMessage,
        refs: &References,
        gen_dir: &Path,
        run_dir: &Path,
        on_event: &mut dyn FnMut(&KatEvent),
    ) -> Result<(), Tampering> {
        match m {
            KatMessage::Loaded { meta, kat_name } => {
                self.log.extend(log::metadata_block(
                    &self.library_shown,
                    meta.as_ref(),
                    self.inst,
                ));
                self.meta = meta;
                on_event(&KatEvent::Loaded {
                    kat_name: kat_name.clone(),
                });
                self.kat_name = Some(kat_name);
            }
            KatMessage::LoadFailed { detail } => {
                self.log.push(log::field("library", &self.library_shown));
                // Loader errors name the library by its full path, or by the descriptor the
                // worker loaded it from (`plugin::sealed`); logs name it as shown.
                let full = self.inst.library.display().to_string();
                let loaded = crate::plugin::sealed::worker_path(0).display().to_string();
                self.load_failed = Some(
                    detail
                        .replace(&full, &self.library_shown)
                        .replace(&loaded, &self.library_shown),
                );
            }
            KatMessage::Log { line } => self.log.push(crate::sanitize::log_field(&line).into()),
            KatMessage::Progress { file, done, total } => {
                self.current = Some(file);
                on_event(&KatEvent::Progress { file, done, total });
            }
            KatMessage::FileDone {
                seconds: _,
                file,
                name,
                bytes,
                sha256_strict,
                sha256_nolen,
            } => {
                let (Some(strict), Some(nolen)) = (
                    digest_from_hex(&sha256_strict),
                    digest_from_hex(&sha256_nolen),
                ) else {
                    return Err(Tampering(format!(
                        "`file_done` for {name} without two SHA-256 digests"
                    )));
                };
                let path = gen_dir.join(&name);
                let reported = Written {
                    bytes,
                    sha256_strict: strict,
                    sha256_nolen: nolen,
                };
                // The verdict rests on the file as it is on disk, read by this process.
                let mut text = Vec::new();
                let keep = (file == KatFile::Kat2_12).then_some(&mut text);
                let written = super::on_disk::digest(&path, bytes, keep)
                    .map_err(|e| Tampering(format!("{name}: {e}")))?;
                if let Some(why) = super::on_disk::difference(&reported, &written) {
                    return Err(Tampering(format!("{name}: {why}")));
                }
                self.log
                    .push(log::wrote_line(&log::shown_path(&path, run_dir), bytes));
                let (status, detail, lines, _reference) =
                    refs.check(&self.inst.label, &name, &written, &path, run_dir);
                self.log.extend(lines);
                if file == KatFile::Kat2_12 && status == KatStatus::Pass {
                    let lengths = verdict::vector_lengths(self.inst.abi.is_iccs());
                    self.vectors = crate::kat::known::parse(&text[..], lengths, &name);
                }
                on_event(&KatEvent::FileChecked { file, status });
                self.files.push(FileReport {
                    file,
                    path,
                    name,
                    written,
                    status,
                    detail,
                });
            }
            KatMessage::Fault {
                file: _,
                status,
                detail,
            } => self.fault = Some((status, detail)),
            KatMessage::Error { detail } => self.error = Some(detail),
            KatMessage::CheckStep { check, bits, note } => self.step = Some((check, bits, note)),
            // Judged by the engine from digests it drew and received itself.
            KatMessage::CheckDone { result } => self.checked(result),
            KatMessage::Done => self.done = true,
        }
        Ok(())
    }

    /// A check's outcome, as the job keeps it.
    fn checked(&mut self, result: CheckResult) {
        self.step = None;
        self.log.push(result.log_line());
        self.conformance.push(result);
    }

    /// The `KAT_2_12` vectors read from the text this process verified (empty unless it
    /// passed).
    pub(super) fn vectors(&self) -> &[KnownAnswer] {
        &self.vectors
    }

    /// The verdict the messages give, if they give one.
    pub(super) fn verdict(&self) -> Option<(KatStatus, String)> {
        if let Some(d) = &self.load_failed {
            return Some((KatStatus::Loadfail, d.clone()));
        }
        if let Some(f) = &self.fault {
            return Some(f.clone());
        }
        if !self.done {
            return None;
        }
        Some(self.files_and_checks())
    }

    /// The worst of the files' statuses; when they all pass and a check failed, NONCONFORM
    /// naming it.
    fn files_and_checks(&self) -> (KatStatus, String) {
        let worst = self
            .files
            .iter()
            .map(|f| f.status)
            .max()
            .unwrap_or_default();
        let detail = self
            .files
            .iter()
            .find(|f| f.status == worst)
            .map(|f| f.detail.clone())
            .unwrap_or_default();
        match crate::conform::first_failure(&self.conformance) {
            Some(failed) if worst.is_pass() => (KatStatus::Nonconform, failed.failure_detail()),
            // A proven defect says more than a KAT nothing could check: NONCONFORM, and the
            // detail keeps that the digests themselves went unchecked.
            Some(failed) if worst == KatStatus::Nokat => (
                KatStatus::Nonconform,
                format!(
                    "{}; the digests themselves unchecked (NOKAT: {detail})",
                    failed.failure_detail()
                ),
            ),
            _ => (worst, detail),
        }
    }

    /// Our own failure reported by the worker (not the candidate's).
    pub(super) fn internal_error(&self) -> Option<String> {
        self.error.clone().filter(|_| self.fault.is_none())
    }

    /// ` in <file>` for the file being generated when the worker died.
    pub(super) fn during(&self, files: &[KatFile]) -> String {
        let Some(name) = &self.kat_name else {
            return " while loading the library".into();
        };
        let done: Vec<KatFile> = self.files.iter().map(|f| f.file).collect();
        self.current
            .filter(|c| !done.contains(c))
            .or_else(|| files.iter().copied().find(|f| !done.contains(f)))
            .map(|f| format!(" in {}", f.file_name(name)))
            .unwrap_or_default()
    }

    /// The name the worker said it generates under (None before `loaded`).
    pub(super) fn kat_name(&self) -> Option<&str> {
        self.kat_name.as_deref()
    }

    pub(super) fn log_lines(&self) -> &[String] {
        &self.log
    }

    pub(super) fn finish(&self, status: KatStatus, detail: String, log_path: PathBuf) -> KatReport {
        KatReport {
            id: log::candidate_id(self.meta.as_ref(), self.inst),
            instance: log::instance_name(self.meta.as_ref(), self.inst),
            label: self.inst.label.clone(),
            status,
            detail,
            files: self.files.clone(),
            conformance: self.conformance_shown(),
            log_path,
            stderr_tail: String::new(),
            peak_memory_bytes: None,
            cpu_time: None,
        }
    }

    /// The outcomes in the order they are shown (`Check`'s), not the order they ran in.
    fn conformance_shown(&self) -> Vec<CheckResult> {
        let mut v = self.conformance.clone();
        v.sort_by_key(|r| r.check);
        v
    }
}
