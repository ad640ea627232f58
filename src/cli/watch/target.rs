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

/// Names a run writes into its folder before (or with) its `campaign.json`: its lock, records,
/// KAT logs, journal and build entries, and the `.tmp` of an atomic write.
const RUN_OWN_NAMES: [&str; 8] = [
    ".campaign.lock",
    "records",
    "kat",
    "journal.jsonl",
    "campaign.json",
    "build.json",
    crate::sweep::FILE_NAME,
    "slurm.json",
];

fn is_run_own_name(name: &str) -> bool {
    let name = name.strip_suffix(".tmp").unwrap_or(name);
    RUN_OWN_NAMES.contains(&name)
}

/// The names in `dir` a starting run (or a starting shard run in a sub-folder) would not
/// have written, sorted; Err when the folder cannot be read.
fn foreign_names(dir: &Path) -> std::io::Result<Vec<String>> {
    let own_only = |sub: &Path| {
        std::fs::read_dir(sub).is_ok_and(|d| {
            d.filter_map(Result::ok)
                .all(|e| is_run_own_name(&e.file_name().to_string_lossy()))
        })
    };
    let mut foreign: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let shard_starting = e.file_type().is_ok_and(|t| t.is_dir()) && own_only(&e.path());
            !is_run_own_name(&name) && !shard_starting
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    foreign.sort();
    Ok(foreign)
}

/// Why `path` can never become what `watch` follows, said at once rather than after the
/// wait: a file (or anything else that is no folder), or a folder that holds neither a run nor
/// runs and holds what no starting run writes. A path not there yet, an empty folder and a
/// folder holding only a run's first files may be a run about to start: None, it is waited for.
pub(super) fn refusal(path: &Path) -> Option<String> {
    let shown = || crate::sanitize::terminal_path(path);
    let hint = "give the folder a run writes (`cyclescope run LABEL… --out DIR`), or a folder \
                of such runs";
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_dir() {
        let what = if meta.is_file() {
            "a file"
        } else {
            "not a folder"
        };
        return Some(format!(
            "{} is {what}, not a run directory: {hint}",
            shown()
        ));
    }
    if classify(path) != Watched::NotYet {
        return None;
    }
    match foreign_names(path) {
        Err(e) => Some(format!("cannot read the folder {}: {e}", shown())),
        Ok(names) if names.is_empty() => None,
        Ok(names) => {
            const NAMED: usize = 3;
            let mut named: Vec<String> = names
                .iter()
                .take(NAMED)
                .map(|n| format!("`{}`", crate::sanitize::terminal(n)))
                .collect();
            if names.len() > NAMED {
                named.push(format!("{} more", names.len() - NAMED));
            }
            Some(format!(
                "{} holds neither a run (no campaign.json or journal) nor runs (no sub-folder \
                 with one, no slurm.json), and a run does not write what it holds ({}): {hint}",
                shown(),
                named.join(", ")
            ))
        }
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

    #[test]
    fn only_what_no_starting_run_can_become_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let path = |name: &str| tmp.path().join(name);
        // Not there yet, empty, a run's first files, a folder of starting shards: waited for.
        assert_eq!(refusal(&path("later")), None);
        std::fs::create_dir_all(path("run/kat")).unwrap();
        std::fs::write(path("run/.campaign.lock"), "").unwrap();
        std::fs::write(path("run/journal.jsonl"), "").unwrap();
        std::fs::write(path("run/campaign.json.tmp"), "").unwrap();
        assert_eq!(refusal(&path("run")), None);
        std::fs::create_dir_all(path("shards/s1/records")).unwrap();
        std::fs::create_dir_all(path("shards/s2")).unwrap();
        assert_eq!(refusal(&path("shards")), None);
        // A file, and a folder of someone else's files: refused, naming what it holds.
        std::fs::write(path("mysha.sha256"), "x").unwrap();
        let err = refusal(&path("mysha.sha256")).unwrap();
        assert!(
            err.contains("mysha.sha256 is a file, not a run directory"),
            "{err}"
        );
        std::fs::create_dir_all(path("project/src")).unwrap();
        std::fs::write(path("project/src/main.c"), "").unwrap();
        std::fs::write(path("project/Cargo.toml"), "").unwrap();
        std::fs::write(path("project/kat.sha256"), "").unwrap();
        let err = refusal(&path("project")).unwrap();
        assert!(
            err.contains("holds neither a run")
                && err.contains("(`Cargo.toml`, `kat.sha256`, `src`)"),
            "{err}"
        );
        std::fs::write(path("project/README"), "").unwrap();
        let err = refusal(&path("project")).unwrap();
        assert!(
            err.contains("(`Cargo.toml`, `README`, `kat.sha256`, 1 more)"),
            "{err}"
        );
        // Whatever else it holds, a folder that is a run is not refused.
        std::fs::write(path("project/campaign.json"), "{}").unwrap();
        assert_eq!(refusal(&path("project")), None);
    }
}
