//! Host tuning with a guaranteed restore: the plan of what to change so the measurement CPU
//! passes the host checks (governor, min = max frequency, turbo/boost off, SMT sibling offline,
//! IRQs and other tasks moved off it, the CPU shielded with a cgroup v2 cpuset partition or a v1
//! cpuset; ASLR kept), applying it only as root after the previous
//! values are safely on disk, and putting every value back — on request, at the end of the run
//! that applied it, or on the next start after its owner died. Files go through a
//! [`HostRoot`], so fixture trees stand in for `/`; live task affinities are touched only on
//! the real root. It never changes a setting that is not in the restore file first, and never
//! imports ratatui or crossterm.

mod apply;
mod cgroupfs;
mod partition;
mod plan;
mod shield;
mod tasks;

pub use apply::{
    Applied, Owner, RESTORE_FILE, Restored, SavedTuning, apply, read_saved, recover_stale, restore,
};
pub use partition::{Partition, join_partition};
pub use plan::{FileChange, Setting, TunePlan, plan};
pub use shield::{Shield, ShieldTask, join_measuring_set};
pub use tasks::TaskMove;

use std::path::PathBuf;

use crate::host::HostRoot;

#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    #[error(
        "tuning the host needs root (effective uid {euid}): run `sudo cyclescope tune --apply …`"
    )]
    NotRoot { euid: u32 },
    #[error(
        "the host is already tuned ({path} exists, {owner}): `cyclescope tune --restore` first"
    )]
    AlreadyTuned { path: PathBuf, owner: String },
    #[error("nothing to restore: {0} does not exist")]
    NothingToRestore(PathBuf),
    #[error("cannot write the restore file {path}: {source} (nothing was changed)")]
    SaveFailed {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read the restore file {path}: {source}")]
    ReadFailed {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the restore file {path} is damaged: {message} (the values it held are lost)")]
    Damaged { path: PathBuf, message: String },
    #[error("{path} holds no text (not a sysfs/procfs setting tune can save)")]
    NotText { path: PathBuf },
    #[error("cannot remove the restore file {path} after restoring: {source}")]
    RemoveFailed {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Where the restore file of `root` lives (`<root>/run/cyclescope/tune-restore.json`).
pub fn restore_path(root: &HostRoot) -> PathBuf {
    root.join(RESTORE_FILE)
}
