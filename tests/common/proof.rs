//! Helpers of the proof-of-work tests (`proof_of_work.rs`, `proof_layouts.rs`): how long a run
//! of a `proof_*` fixture may take, and where its records are.

use std::path::Path;
use std::time::Duration;

/// The bound a run must end within (a hang, not a timing target): it may first queue for its
/// CPU behind every other test on the machine (`common::SUITE_LOCK_WAIT_S`).
pub fn bound() -> Duration {
    let queue: u64 = super::SUITE_LOCK_WAIT_S.parse().unwrap();
    Duration::from_secs(queue + 300)
}

/// The JSON files below `dir`, at any depth (a run's records).
pub fn records(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(records(&p));
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
    out
}
