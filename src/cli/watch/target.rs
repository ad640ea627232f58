//! What `watch RUN_DIR` was pointed at: one run, a folder of shard runs, or a run that is just
//! starting — its folder not there yet (a run creates it once it holds its CPUs) or there
//! without `campaign.json` (written after the host check). A starting run is waited for, up to
//! a bound, and never taken for a folder of shards: only sub-folders that are runs (or a Slurm
//! campaign's `slurm.json`) make one. The watched run's own instances come from its
//! `campaign.json`, so no config is needed to know them.

use std::path::Path;
use std::time::{Duration, Instant};

/// How long `watch` waits for a starting run to write its `campaign.json`.
pub(super) const START_WAIT: Duration = Duration::from_secs(60);

/// How often the folder is looked at while waiting.
const POLL: Duration = Duration::from_millis(100);

/// What a folder holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Watched {
    /// A run directory (its `campaign.json` or journal is there).
    Run,
    /// A folder whose sub-folders are runs (shards), or a Slurm campaign's folder.
    FolderOfRuns,
    /// Neither yet.
    NotYet,
}

/// A run's folder once it has announced itself: its `campaign.json`, or a journal with events
/// (a starting run opens its journal empty and writes `campaign.json` before its first event).
fn is_run(dir: &Path) -> bool {
    dir.join("campaign.json").is_file()
        || std::fs::metadata(dir.join("journal.jsonl")).is_ok_and(|m| m.len() > 0)
}

/// What `dir` holds now.
pub(super) fn classify(dir: &Path) -> Watched {
    if is_run(dir) {
        return Watched::Run;
    }
    let shards = std::fs::read_dir(dir).is_ok_and(|d| {
        d.filter_map(Result::ok)
            .any(|e| e.path().is_dir() && is_run(&e.path()))
    });
    if shards || dir.join("slurm.json").is_file() {
        Watched::FolderOfRuns
    } else {
        Watched::NotYet
    }
}

/// What `dir` holds once it holds something, waiting up to `limit`; `NotYet` when the wait ran
/// out.
pub(super) fn wait_for(dir: &Path, limit: Duration) -> Watched {
    let deadline = Instant::now() + limit;
    loop {
        let now = classify(dir);
        if now != Watched::NotYet || Instant::now() >= deadline {
            return now;
        }
        std::thread::sleep(POLL);
    }
}

/// Adds to `catalog` the instances the run in `dir` lists in its `campaign.json` that the
/// catalog lacks (an ad-hoc `--lib`, `--scan` or `--src` run, another config), as `run --resume`
/// reads them (nothing when the folder has none: a journal alone).
pub(super) fn add_campaign_instances(catalog: &mut crate::catalog::Catalog, dir: &Path) {
    let Ok(c) = crate::record::run_dir::read_campaign(dir) else {
        return;
    };
    for i in c.cyclescope.instances {
        let known = catalog
            .instances()
            .any(|k| k.candidate == i.candidate && k.label == i.label);
        if known {
            continue;
        }
        match catalog.candidates.iter_mut().find(|c| c.id == i.candidate) {
            Some(c) => c.instances.push(i),
            None => catalog.candidates.push(crate::catalog::Candidate {
                id: i.candidate.clone(),
                algorithm: i.algorithm.clone(),
                instances: vec![i],
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_folder_is_a_run_not_yet_started_never_a_folder_of_shards() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        assert_eq!(classify(&dir), Watched::NotYet, "not there yet");
        std::fs::create_dir_all(dir.join("kat")).unwrap();
        std::fs::write(dir.join("journal.jsonl"), "").unwrap();
        assert_eq!(
            classify(&dir),
            Watched::NotYet,
            "a folder that is no run yet"
        );
        assert_eq!(wait_for(&dir, Duration::ZERO), Watched::NotYet);
        std::fs::write(dir.join("campaign.json"), "{}").unwrap();
        assert_eq!(classify(&dir), Watched::Run);
        let shards = tmp.path().join("campaign");
        std::fs::create_dir_all(shards.join("shard-1")).unwrap();
        std::fs::write(shards.join("shard-1/campaign.json"), "{}").unwrap();
        assert_eq!(classify(&shards), Watched::FolderOfRuns);
    }
}
