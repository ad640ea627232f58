//! The journal's schema, versioned by SQLite's `user_version`: each migration takes the file
//! one version up inside one transaction, so a journal is always at a version this code
//! knows, whole. A file newer than the code is refused, never rewritten.

use rusqlite::Connection;

/// The schema this code writes.
pub(super) const VERSION: i64 = 5;

/// Migration `i` takes version `i` to `i + 1`.
pub(super) const MIGRATIONS: [&str; 5] = [V1, V2, V3, V4, V5];

/// Version 1: one row per measured job.
pub(super) const V1: &str = "
CREATE TABLE measurement (
    id INTEGER PRIMARY KEY,
    run_dir TEXT NOT NULL,
    record TEXT NOT NULL,
    candidate TEXT NOT NULL,
    label TEXT NOT NULL,
    library_sha256 TEXT NOT NULL,
    flags TEXT NOT NULL,
    build_flags TEXT NOT NULL,
    compiler TEXT NOT NULL,
    cpu_model TEXT NOT NULL,
    system_id TEXT NOT NULL,
    counter TEXT NOT NULL,
    input_bytes INTEGER NOT NULL,
    mean_cycles REAL,
    ci95_half_width REAL,
    processes INTEGER NOT NULL,
    ended_utc TEXT NOT NULL,
    UNIQUE (run_dir, record)
);
CREATE INDEX measurement_label ON measurement (label, input_bytes, ended_utc);
";

/// Version 2: where a measurement came from, and the spread and doubt the verdict needs.
const V2: &str = "
ALTER TABLE measurement ADD COLUMN origin TEXT NOT NULL DEFAULT 'run';
ALTER TABLE measurement ADD COLUMN process_sd_relative REAL;
ALTER TABLE measurement ADD COLUMN doubt TEXT;
";

/// Version 3: KAT passes that a later run of the same library, manifest, checks and scope
/// reuses instead of running the KAT again.
const V3: &str = "
CREATE TABLE kat_pass (
    library_sha256 TEXT NOT NULL,
    manifest_sha256 TEXT NOT NULL,
    checks_version INTEGER NOT NULL,
    scope TEXT NOT NULL,
    kat_name TEXT NOT NULL,
    digest_bits INTEGER NOT NULL,
    run_dir TEXT NOT NULL,
    log TEXT NOT NULL,
    log_sha256 TEXT NOT NULL,
    passed_utc TEXT NOT NULL,
    PRIMARY KEY (library_sha256, manifest_sha256, checks_version, scope, kat_name, digest_bits)
);
";

/// Version 4: a remembered pass keeps its conformance outcomes (JSON), so a reuse carries its
/// findings into the run's records. Rows of version 3 are of an older checks' version and are
/// never reused.
const V4: &str = "
ALTER TABLE kat_pass ADD COLUMN conformance TEXT NOT NULL DEFAULT '[]';
";

/// Version 5: the figure preemption cannot move (`measure::robust`, JSON), which verdicts
/// judge on when the guide's figure is doubtful. Older rows have none.
const V5: &str = "
ALTER TABLE measurement ADD COLUMN robust TEXT;
";

#[derive(Debug)]
pub(super) enum MigrateError {
    Sql(rusqlite::Error),
    Newer(i64),
}

impl From<rusqlite::Error> for MigrateError {
    fn from(e: rusqlite::Error) -> Self {
        MigrateError::Sql(e)
    }
}

/// Brings `conn` to [`VERSION`].
pub(super) fn migrate(conn: &mut Connection) -> Result<(), MigrateError> {
    let found: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if found > VERSION {
        return Err(MigrateError::Newer(found));
    }
    for (v, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", v as i64 + 1)?;
        tx.commit()?;
    }
    Ok(())
}
