//! Evidence on disk: run directories (`campaign.json`, `build.json`, `records/`, `kat/`, the
//! journal), timing records in the harness's schema 2, atomic writes, the one record check every tool
//! applies, and the validator that adds the harness's dataset rules. Never measures anything and never touches a record once
//! it is written (a re-run writes a new file atomically over it).

pub mod check;
pub mod histogram;
pub mod journal;
pub mod merge;
pub mod pyjson;
pub mod read;
pub mod run_dir;
pub mod safe_path;
pub mod schema;
pub mod validate;

pub use run_dir::{Campaign, RunDir, RunDirError};
pub use schema::{Additions, ProcessRecord, TimingRecord};

/// ISO 8601 UTC with microseconds and `+00:00`, as Python's `datetime.isoformat()`.
pub(crate) fn utc_now() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.6f+00:00")
        .to_string()
}

/// `os.getloadavg()`.
pub(crate) fn load_average() -> [f64; 3] {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let mut it = text.split_whitespace().map(|v| v.parse().unwrap_or(0.0));
    [
        it.next().unwrap_or(0.0),
        it.next().unwrap_or(0.0),
        it.next().unwrap_or(0.0),
    ]
}

/// SHA-256 of a file, lowercase hex.
pub(crate) fn sha256_file(path: &std::path::Path) -> std::io::Result<String> {
    use sha2::Digest;
    let mut f = std::fs::File::open(path)?;
    let mut h = sha2::Sha256::new();
    std::io::copy(&mut f, &mut h)?;
    Ok(hex::encode(h.finalize()))
}
