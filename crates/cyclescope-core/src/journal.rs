//! The tuning journal: one SQLite index per user (`$XDG_DATA_HOME/cyclescope/journal.sqlite`,
//! or `[settings] journal`, or `$CYCLESCOPE_JOURNAL`) of every measured job — runs, workbench
//! sessions, `compare --live` and sweeps — keyed by candidate and instance, the library's
//! sha256, compiler and flags, host (CPU model, system id), counter, length and time, each
//! pointing back at the run folder and record that hold the evidence. It is an index, never
//! the evidence: `rebuild` makes it again from run folders. It is not the run folder's event
//! log (`record::journal`). A journal that cannot be opened or written never stops a
//! measurement: the writer says so once and goes on without it.

mod entry;
mod history;
mod kat_cache;
mod rebuild;
mod render;
mod schema;
mod writer;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;

pub use entry::{Entry, Origin};
pub use history::{BuildRow, history};
pub use kat_cache::{KatKey, KatPass};
pub use rebuild::{RebuildSummary, rebuild};
pub use render::{rows_csv, rows_json, table};
pub use writer::{JournalTarget, JournalWriter};

/// Environment variable naming the journal file (beats the settings and the XDG default).
pub const JOURNAL_ENV: &str = "CYCLESCOPE_JOURNAL";

/// The file name inside the data folder.
const FILE: &str = "journal.sqlite";

/// How long a write waits for another cyclescope's transaction before giving up.
const BUSY_WAIT: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error(
        "the journal {path} is not a cyclescope journal or is damaged ({detail}); the run \
         folders still hold every figure: move it aside and `cyclescope history --rebuild DIR…`"
    )]
    Corrupt { path: PathBuf, detail: String },
    #[error(
        "the journal {path} is locked by another process (waited {} s); try again when it ends",
        BUSY_WAIT.as_secs()
    )]
    Locked { path: PathBuf },
    #[error(
        "the journal {path} has schema {found}, newer than this cyclescope knows ({known}): \
         use a newer cyclescope, or another file ($CYCLESCOPE_JOURNAL)"
    )]
    Newer {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    #[error("cannot open the journal {path}: {detail}")]
    Open { path: PathBuf, detail: String },
    #[error("no journal location: set $XDG_DATA_HOME or $HOME, or [settings] journal")]
    NoLocation,
}

impl JournalError {
    fn of(path: &Path, e: rusqlite::Error) -> Self {
        use rusqlite::ErrorCode::{DatabaseBusy, DatabaseCorrupt, DatabaseLocked, NotADatabase};
        let path = path.to_path_buf();
        match e.sqlite_error_code() {
            Some(DatabaseBusy | DatabaseLocked) => JournalError::Locked { path },
            Some(NotADatabase | DatabaseCorrupt) => JournalError::Corrupt {
                path,
                detail: e.to_string(),
            },
            _ => JournalError::Open {
                path,
                detail: e.to_string(),
            },
        }
    }
}

/// Where the journal lives: `$CYCLESCOPE_JOURNAL`, else `configured` (the settings'),
/// else `$XDG_DATA_HOME/cyclescope/journal.sqlite`, else `~/.local/share/cyclescope/…`.
pub fn location(configured: Option<&Path>) -> Result<PathBuf, JournalError> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(p) = var(JOURNAL_ENV) {
        return Ok(p);
    }
    if let Some(p) = configured {
        return Ok(p.to_path_buf());
    }
    let data = var("XDG_DATA_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| var("HOME").map(|h| h.join(".local/share")))
        .ok_or(JournalError::NoLocation)?;
    Ok(data.join("cyclescope").join(FILE))
}

/// An open journal, its schema brought up to date.
pub struct Journal {
    conn: Connection,
    path: PathBuf,
}

impl Journal {
    /// Opens (or creates) the journal at `path` and migrates it to the current schema.
    pub fn open(path: &Path) -> Result<Self, JournalError> {
        Self::open_waiting(path, BUSY_WAIT)
    }

    /// As `open`, waiting at most `wait` for another process's lock.
    pub fn open_waiting(path: &Path, wait: Duration) -> Result<Self, JournalError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            // Another user's folder could swap the database for a link to a file of ours.
            crate::owned::own_cache_folder(dir).map_err(|e| JournalError::Open {
                path: path.to_path_buf(),
                detail: e.to_string(),
            })?;
        }
        let conn = Connection::open(path).map_err(|e| JournalError::of(path, e))?;
        conn.busy_timeout(wait)
            .map_err(|e| JournalError::of(path, e))?;
        let mut j = Self {
            conn,
            path: path.to_path_buf(),
        };
        schema::migrate(&mut j.conn).map_err(|e| match e {
            schema::MigrateError::Sql(e) => JournalError::of(path, e),
            schema::MigrateError::Newer(found) => JournalError::Newer {
                path: path.to_path_buf(),
                found,
                known: schema::VERSION,
            },
        })?;
        Ok(j)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Adds a measured job, or replaces the entry of the same record (a re-run's).
    pub fn insert(&self, e: &Entry) -> Result<(), JournalError> {
        e.insert(&self.conn)
            .map_err(|x| JournalError::of(&self.path, x))
    }

    /// Every entry of `label` (at `length` if given), oldest first.
    pub fn entries(&self, label: &str, length: Option<u64>) -> Result<Vec<Entry>, JournalError> {
        Entry::select(&self.conn, label, length).map_err(|x| JournalError::of(&self.path, x))
    }

    /// The known label nearest to `label` (for "did you mean"), if any.
    pub fn nearest_label(&self, label: &str) -> Result<Option<String>, JournalError> {
        Ok(self
            .labels()?
            .into_iter()
            .min_by_key(|k| strsim::levenshtein(k, label)))
    }

    /// The labels the journal knows, for "did you mean".
    pub fn labels(&self) -> Result<Vec<String>, JournalError> {
        let q = || -> rusqlite::Result<Vec<String>> {
            let mut st = self
                .conn
                .prepare("SELECT DISTINCT label FROM measurement ORDER BY label")?;
            st.query_map([], |r| r.get(0))?.collect()
        };
        q().map_err(|x| JournalError::of(&self.path, x))
    }
}

#[cfg(test)]
mod tests;
