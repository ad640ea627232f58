//! KAT passes remembered across runs: a pass is reused only while everything it depended on
//! is unchanged — the library's sha256, the manifest's sha256, the conformance checks' version
//! and the KAT's scope (and the KAT name and width it was run as) — and while the earlier
//! run's KAT log is still there with the digest it had. Only passes are kept, with their
//! conformance outcomes (a pass may carry findings that do not block): anything else is run
//! again.

use std::path::{Path, PathBuf};

use rusqlite::{OptionalExtension, params};

use super::{Journal, JournalError};

/// What a KAT result depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KatKey {
    pub library_sha256: String,
    /// The manifest's sha256 (`none` without one).
    pub manifest_sha256: String,
    pub checks_version: u32,
    /// `default`, `loop` or `full`.
    pub scope: String,
    pub kat_name: String,
    pub digest_bits: u32,
}

/// Where an earlier pass's evidence is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KatPass {
    pub run_dir: PathBuf,
    /// The log, absolute.
    pub log: PathBuf,
    pub log_sha256: String,
    /// The conformance checks' outcomes of that pass (its findings among them).
    pub conformance: Vec<crate::conform::CheckResult>,
}

impl KatPass {
    /// Whether the log is still the one that passed.
    pub fn still_there(&self) -> bool {
        crate::record::sha256_file(&self.log).is_ok_and(|d| d == self.log_sha256)
    }
}

impl Journal {
    /// The pass remembered for `key`, if any (none when its outcomes do not read back: the
    /// KAT then simply runs again).
    pub fn kat_pass(&self, key: &KatKey) -> Result<Option<KatPass>, JournalError> {
        let row = self
            .conn
            .query_row(
                "SELECT run_dir, log, log_sha256, conformance FROM kat_pass WHERE library_sha256 = ?1 AND \
                 manifest_sha256 = ?2 AND checks_version = ?3 AND scope = ?4 AND kat_name = ?5 \
                 AND digest_bits = ?6",
                params![
                    key.library_sha256,
                    key.manifest_sha256,
                    key.checks_version,
                    key.scope,
                    key.kat_name,
                    key.digest_bits
                ],
                |r| {
                    Ok((
                        KatPass {
                            run_dir: PathBuf::from(r.get::<_, String>(0)?),
                            log: PathBuf::from(r.get::<_, String>(1)?),
                            log_sha256: r.get(2)?,
                            conformance: Vec::new(),
                        },
                        r.get::<_, String>(3)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| JournalError::of(&self.path, e))?;
        Ok(row.and_then(|(pass, outcomes)| {
            let conformance = serde_json::from_str(&outcomes).ok()?;
            Some(KatPass {
                conformance,
                ..pass
            })
        }))
    }

    /// Remembers a pass (the newest of a key wins).
    pub fn remember_kat_pass(&self, key: &KatKey, pass: &KatPass) -> Result<(), JournalError> {
        let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        self.conn
            .execute(
                "INSERT OR REPLACE INTO kat_pass VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, \
                 ?11)",
                params![
                    key.library_sha256,
                    key.manifest_sha256,
                    key.checks_version,
                    key.scope,
                    key.kat_name,
                    key.digest_bits,
                    abs(&pass.run_dir).to_string_lossy(),
                    abs(&pass.log).to_string_lossy(),
                    pass.log_sha256,
                    crate::record::utc_now(),
                    serde_json::to_string(&pass.conformance).unwrap_or_else(|_| "[]".into()),
                ],
            )
            .map(drop)
            .map_err(|e| JournalError::of(&self.path, e))
    }
}
