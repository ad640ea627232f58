//! Making the journal again from run folders, which stay the evidence: every complete record
//! of every run named (or of every run inside a folder of runs) is indexed, replacing what the
//! journal held for that record. What a folder was — a run, the workbench's, `compare
//! --live`'s, a sweep's — is read from the files it holds.

use std::path::{Path, PathBuf};

use super::{Entry, Journal, JournalError, Origin};

/// What a rebuild indexed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RebuildSummary {
    pub runs: usize,
    pub indexed: usize,
    /// Folders named that hold no run (neither `campaign.json` nor runs inside).
    pub not_runs: Vec<PathBuf>,
}

/// Indexes the runs of `dirs` into `journal`.
pub fn rebuild(journal: &Journal, dirs: &[PathBuf]) -> Result<RebuildSummary, JournalError> {
    let mut summary = RebuildSummary::default();
    for dir in dirs {
        let runs = runs_in(dir);
        if runs.is_empty() {
            summary.not_runs.push(dir.clone());
        }
        for run in runs {
            summary.runs += 1;
            summary.indexed += index_run(journal, &run)?;
        }
    }
    Ok(summary)
}

/// `dir` itself when it is a run, else the runs directly inside it, in name order.
fn runs_in(dir: &Path) -> Vec<PathBuf> {
    if dir.join("campaign.json").is_file() {
        return vec![dir.to_path_buf()];
    }
    let mut runs: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("campaign.json").is_file())
        .collect();
    runs.sort();
    runs
}

fn origin_of(run: &Path, tui_attached: bool) -> Origin {
    if run.join(crate::campaign::ab_result::FILE).is_file() {
        Origin::CompareLive
    } else if run.join(crate::sweep::FILE_NAME).is_file() {
        Origin::Sweep
    } else if tui_attached {
        Origin::Workbench
    } else {
        Origin::Run
    }
}

fn index_run(journal: &Journal, run: &Path) -> Result<usize, JournalError> {
    let Ok(campaign) = crate::record::run_dir::read_campaign(run) else {
        return Ok(0);
    };
    let origin = origin_of(run, campaign.cyclescope.tui_attached);
    let mut n = 0;
    for (rel, record) in crate::record::run_dir::list_records(run) {
        if let Some(e) = Entry::of_record(origin, run, &rel, &campaign.system_id, &record) {
            journal.insert(&e)?;
            n += 1;
        }
    }
    Ok(n)
}
