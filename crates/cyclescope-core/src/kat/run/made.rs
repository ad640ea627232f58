//! A KAT job's first part, done by the engine: the library's metadata (from a trial worker of
//! no call, `measure::one_call`), then each file written into the job's folder with every
//! digest from the trial worker (`kat::produce`). It speaks the messages a KAT worker spoke
//! for this part — `loaded`, each file's `timing` line, progress and `file_done`, or the fault
//! that stopped it — so that the job's bookkeeping and verdict (`check`) read them as before.

use std::io::{BufWriter, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::Instant;

use super::super::KatStatus;
use super::super::generate::{GenerateError, KatFile};
use super::super::job::{JobSpec, KatMessage, PROGRESS_INTERVAL, kat_name};
use super::super::produce::Producer;
use crate::catalog::Instance;
use crate::worker::one_shot::OneShotError;

/// Speaks the messages of the files of `spec` into `send`, each file written into `dir`; the
/// KAT name, or None where the job stops before its checks (the library did not load, or a
/// file was stopped).
pub(super) fn make_files(
    inst: &Instance,
    spec: &JobSpec,
    dir: &Path,
    producer: &mut Producer,
    send: &mut dyn FnMut(KatMessage),
) -> Option<String> {
    let meta = match crate::measure::one_call::metadata_or_why(&inst.library, inst.abi) {
        // A worker that left its place or wrote to its protocol channel: TAMPERED, not a
        // library that did not load.
        Err(OneShotError::Tampered(detail)) => {
            send(KatMessage::Fault {
                file: spec.files.first().copied().unwrap_or(KatFile::Kat2_12),
                status: KatStatus::Tampered,
                detail: detail
                    .strip_prefix("TAMPERED: ")
                    .unwrap_or(&detail)
                    .to_string(),
            });
            return None;
        }
        m => m.map_err(|e| e.to_string()).and_then(|m| {
            crate::plugin::check_digest_bits(&inst.library, m.as_ref(), spec.digest_bits)
                .map(|()| m)
                .map_err(|e| e.to_string())
        }),
    };
    let meta = match meta {
        Ok(_) if spec.digest_bits == 0 => {
            send(KatMessage::LoadFailed {
                detail: format!(
                    "library {} states no digest width and none was given",
                    inst.library.display()
                ),
            });
            return None;
        }
        Ok(m) => m,
        Err(detail) => {
            send(KatMessage::LoadFailed { detail });
            return None;
        }
    };
    let name = kat_name(spec.kat_name.as_deref(), meta.as_ref(), &spec.label);
    send(KatMessage::Loaded {
        meta,
        kat_name: name.clone(),
    });
    for &file in &spec.files {
        if let Err(e) = one_file(file, &name, dir, producer, send) {
            let detail = match &e {
                // A worker's end says where it happened itself.
                GenerateError::Worker { .. } => e.to_string(),
                _ => format!("{}: {e}", file.file_name(&name)),
            };
            send(match e.status() {
                Some(status) => KatMessage::Fault {
                    file,
                    status,
                    detail,
                },
                None => KatMessage::Error { detail },
            });
            return None;
        }
    }
    Some(name)
}

/// Writes one file and speaks its messages.
fn one_file(
    file: KatFile,
    name: &str,
    dir: &Path,
    producer: &mut Producer,
    send: &mut dyn FnMut(KatMessage),
) -> Result<(), GenerateError> {
    let file_name = file.file_name(name);
    // Never through a link left in the run's KAT folder.
    let text_file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(dir.join(&file_name))?;
    let mut out = BufWriter::with_capacity(1 << 16, text_file);
    let started = Instant::now();
    let mut last = started;
    let mut progress = |done: u64, total: u64| {
        if done == total || (done.is_multiple_of(64) && last.elapsed() >= PROGRESS_INTERVAL) {
            last = Instant::now();
            send(KatMessage::Progress { file, done, total });
        }
    };
    let written = producer.file(file, &file_name, &mut out, &mut progress)?;
    out.flush()?;
    drop(out);
    let seconds = started.elapsed().as_secs_f64();
    send(KatMessage::Log {
        line: format!(
            "timing  {} {seconds:.3} s{}",
            file.tag(),
            file.timing_note()
        ),
    });
    send(KatMessage::FileDone {
        file,
        name: file_name,
        bytes: written.bytes,
        seconds,
        sha256_strict: hex::encode(written.sha256_strict),
        sha256_nolen: hex::encode(written.sha256_nolen),
    });
    Ok(())
}
