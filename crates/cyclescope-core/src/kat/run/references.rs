//! What each KAT file is judged against: a job's manifest entry, or a reference file of a
//! `--kat-dir` compared line by line, or nothing (NOKAT); and the judging of one file.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use super::{KatError, KatOptions};
use crate::catalog::Instance;
use crate::kat::KatStatus;
use crate::kat::generate::Written;
use crate::kat::log;
use crate::kat::manifest::{self, LineComparison, Manifest, ManifestEntry};

/// What a file was compared with.
#[derive(Debug, Clone, PartialEq)]
pub enum Reference {
    /// A manifest entry (its digest, mode and name).
    Manifest(ManifestEntry),
    /// A reference file of a `--kat-dir`, compared line by line.
    File {
        path: PathBuf,
        bytes: u64,
        comparison: LineComparison,
    },
    /// Nothing to compare with (NOKAT).
    None,
}

/// The references of one job: its manifest (if any) and `--kat-dir`.
pub(super) struct References {
    manifest: Option<Manifest>,
    /// Why there is no manifest although one was configured.
    missing: Option<String>,
    kat_dir: Option<PathBuf>,
}

impl References {
    /// An explicit `--manifest` must exist; a catalog manifest that does not is only noted
    /// (its files become NOKAT), so a fresh instance can be run to write one.
    pub(super) fn load(inst: &Instance, opts: &KatOptions) -> Result<Self, KatError> {
        let (manifest, missing) = match (&opts.manifest, &inst.kat_manifest) {
            (Some(p), _) => (Some(Manifest::load(p)?), None),
            (None, Some(p)) if p.is_file() => (Some(Manifest::load(p)?), None),
            (None, Some(p)) => (
                None,
                Some(format!(
                    "manifest {} does not exist",
                    log::shown_path(p, &opts.run_dir)
                )),
            ),
            (None, None) => (None, None),
        };
        Ok(Self {
            manifest,
            missing,
            kat_dir: opts.kat_dir.clone().or_else(|| inst.kat_dir.clone()),
        })
    }

    /// Judges one generated file: status, detail, log lines, and what it was compared with.
    pub(super) fn check(
        &self,
        label: &str,
        name: &str,
        written: &Written,
        generated: &Path,
        run_dir: &Path,
    ) -> (KatStatus, String, Vec<String>, Reference) {
        if let Some(e) = self.manifest.as_ref().and_then(|m| m.lookup(label, name)) {
            let line = log::manifest_line(&e.sha256_hex(), &e.mode_text(), name);
            let got = written.sha256(e.mode);
            let (status, detail) = match e.count {
                Some(n) => (
                    KatStatus::Mismatch,
                    format!(
                        "{name}: the manifest entry covers {n} Count records (:{n}); a hash KAT has none"
                    ),
                ),
                None if got == e.sha256 => (KatStatus::Pass, String::new()),
                None => (
                    KatStatus::Mismatch,
                    format!(
                        "{name}: sha256 {} != manifest {}",
                        hex::encode(got),
                        e.sha256_hex()
                    ),
                ),
            };
            return (status, detail, vec![line], Reference::Manifest(e.clone()));
        }
        let found = self
            .kat_dir
            .as_deref()
            .and_then(|d| manifest::find_reference(d, label, name));
        if let Some(path) = found {
            let shown = log::shown_path(&path, run_dir);
            let compared = File::open(&path).and_then(|r| {
                let bytes = r.metadata()?.len();
                let g = File::open(generated)?;
                Ok((
                    bytes,
                    manifest::compare_lines(BufReader::new(g), BufReader::new(r))?,
                ))
            });
            let (bytes, comparison) = match compared {
                Ok(c) => c,
                Err(e) => {
                    return (
                        KatStatus::Nokat,
                        format!("{name}: cannot compare with {shown}: {e}"),
                        vec![],
                        Reference::None,
                    );
                }
            };
            let mut lines = vec![log::compare_line(&shown, bytes)];
            if comparison.tolerated_blank_len > 0 {
                lines.push(format!(
                    "note    {} blank X_Len lines in the reference tolerated",
                    comparison.tolerated_blank_len
                ));
            }
            let (status, detail) = match &comparison.difference {
                None => (KatStatus::Pass, String::new()),
                Some(d) => (
                    KatStatus::Mismatch,
                    format!(
                        "{name}: line {} differs from {shown} line {}: {:?} != {:?}",
                        d.generated_line, d.reference_line, d.generated, d.reference
                    ),
                ),
            };
            let reference = Reference::File {
                path,
                bytes,
                comparison,
            };
            return (status, detail, lines, reference);
        }
        let why = match (&self.missing, &self.manifest) {
            (Some(m), _) => format!(" ({m})"),
            (None, Some(m)) => m
                .nearest_label(label)
                .map_or_else(String::new, |near| format!(" (did you mean `{near}`?)")),
            (None, None) => " (no manifest)".to_string(),
        };
        let dir = if self.kat_dir.is_some() {
            " and no reference file in --kat-dir"
        } else {
            ""
        };
        (
            KatStatus::Nokat,
            format!("{name}: no manifest entry{why}{dir}"),
            vec![],
            Reference::None,
        )
    }
}
