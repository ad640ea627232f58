//! Results from disk: the records of a run directory as `JobFinished` events (for `--run DIR`)
//! and a follower that turns a run another process is writing into the same events
//! (for `watch`). PLACEHOLDER until the record module is merged.

use std::path::{Path, PathBuf};

use super::app::App;
use crate::measure::EngineEvent;

/// The finished jobs recorded under `run_dir`.
pub fn load(_run_dir: &Path) -> Vec<EngineEvent> {
    vec![]
}

/// Follows a run directory another process writes.
pub struct Follower {
    pub run_dir: PathBuf,
}

impl Follower {
    pub fn new(run_dir: &Path) -> Self {
        Self {
            run_dir: run_dir.to_path_buf(),
        }
    }

    /// Events appended since the last call.
    pub fn poll(&mut self, _app: &mut App) -> Vec<EngineEvent> {
        vec![]
    }
}
