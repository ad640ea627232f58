//! Joining run directories (the shards of one campaign, from one machine or several) into one
//! dataset: their records and KAT logs copied byte for byte, `build.json` and `campaign.json`
//! united. Refused before anything is written: runs planned differently, runs whose fixed host
//! facts differ (FIXED_ENV without the two that name the place: `hostname`, `cpu_number`),
//! the same job measured twice with different results (unless one run is preferred), and two
//! runs' differing KAT evidence for one instance (likewise), and any record the record check
//! (`check`, the rules `validate`, `report` and `compare` apply too) rejects, named with its
//! finding. Reads the runs, writes only the new dataset folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::check::{Finding, check_record};
use super::read::{JSON_LIMIT, LOG_LIMIT, read_inside, record_files};
use super::run_dir::{MergedRun, read_campaign};
use super::{Campaign, RunDir, RunDirError};
use crate::vocabulary::CampaignState;

/// FIXED_ENV keys that say where a shard ran, not what it ran on: they may differ.
const PLACE_KEYS: [&str; 2] = ["hostname", "cpu_number"];

#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error(transparent)]
    RunDir(#[from] RunDirError),
    #[error("{0}: {1}")]
    Read(PathBuf, String),
    #[error(
        "{run}: {finding}; merge joins only records the record check accepts \
         (`cyclescope validate {run}` lists every finding)"
    )]
    InvalidRecord { run: PathBuf, finding: Finding },
    #[error("nothing to merge: give at least one run directory")]
    NoRuns,
    #[error("{out} already exists; merge writes a new dataset folder")]
    OutExists { out: PathBuf },
    #[error("--prefer {0} is not one of the runs being merged")]
    PreferUnknown(PathBuf),
    #[error("{a} and {b} were planned differently ({detail}); their records do not compare")]
    Planning {
        a: PathBuf,
        b: PathBuf,
        detail: String,
    },
    #[error("{a} and {b} ran on hosts that differ in fixed facts: {}", .changes.join("; "))]
    HostFacts {
        a: PathBuf,
        b: PathBuf,
        changes: Vec<String>,
    },
    #[error(
        "{job} was measured in both {a} and {b} with different results; keep one with --prefer RUN"
    )]
    Conflict { job: String, a: PathBuf, b: PathBuf },
    #[error(
        "{instance} has different KAT evidence in {a} and {b} (build.json); keep one with --prefer RUN"
    )]
    Build {
        instance: String,
        a: PathBuf,
        b: PathBuf,
    },
}

/// What a merge joined.
#[derive(Debug, Default)]
pub struct Merged {
    pub records: usize,
    pub kat_logs: usize,
    /// Jobs found in several runs: identical, or settled by `--prefer`.
    pub duplicates: usize,
}

struct Source {
    dir: PathBuf,
    campaign: Campaign,
    build: serde_json::Map<String, Value>,
    records: Vec<(PathBuf, Vec<u8>)>,
}

fn load(dir: &Path) -> Result<Source, MergeError> {
    let campaign = read_campaign(dir)?;
    let build = match read_inside(dir, Path::new("build.json"), JSON_LIMIT) {
        Ok(b) => serde_json::from_slice::<Value>(&b)
            .map_err(|e| MergeError::Read(dir.join("build.json"), e.to_string()))?
            .get("instances")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
        Err(super::safe_path::PathError::Missing { .. }) => Default::default(),
        Err(e) => return Err(MergeError::Read(dir.join("build.json"), e.to_string())),
    };
    let (records, unreadable) = record_files(dir);
    if let Some(u) = unreadable.first() {
        return Err(MergeError::Read(dir.join(&u.path), u.reason.clone()));
    }
    for (rel, bytes) in &records {
        if let Some(finding) = check_record(rel, bytes).findings.into_iter().next() {
            return Err(MergeError::InvalidRecord {
                run: dir.to_path_buf(),
                finding,
            });
        }
    }
    Ok(Source {
        dir: dir.to_path_buf(),
        campaign,
        build,
        records,
    })
}

/// The planning, mode and lengths of a run as one comparable text.
fn planning_of(c: &Campaign) -> String {
    format!(
        "planning {}, mode {}",
        serde_json::to_string(&c.planning).unwrap_or_default(),
        match &c.cyclescope.adaptive {
            Some(a) => format!("adaptive {}", a.precision),
            None => "guide".into(),
        }
    )
}

fn fixed_facts_differ(a: &Campaign, b: &Campaign) -> Vec<String> {
    crate::host::fixed_env_diff(&a.environment_at_start, &b.environment_at_start)
        .into_iter()
        .filter(|c| !PLACE_KEYS.contains(&c.key))
        .map(|c| c.to_string())
        .collect()
}

/// Merges `runs` into the new folder `out`; `prefer` settles duplicate jobs and instances.
pub fn merge(
    runs: &[PathBuf],
    out: &Path,
    prefer: Option<&Path>,
    system_id: Option<&str>,
) -> Result<Merged, MergeError> {
    if runs.is_empty() {
        return Err(MergeError::NoRuns);
    }
    if out.exists() {
        return Err(MergeError::OutExists {
            out: out.to_path_buf(),
        });
    }
    let sources: Vec<Source> = runs.iter().map(|r| load(r)).collect::<Result<_, _>>()?;
    let preferred = match prefer {
        Some(p) => Some(
            runs.iter()
                .position(|r| r == p)
                .ok_or_else(|| MergeError::PreferUnknown(p.to_path_buf()))?,
        ),
        None => None,
    };
    let first = &sources[0];
    for s in &sources[1..] {
        let (a, b) = (planning_of(&first.campaign), planning_of(&s.campaign));
        if a != b {
            return Err(MergeError::Planning {
                a: first.dir.clone(),
                b: s.dir.clone(),
                detail: format!("{a} against {b}"),
            });
        }
        let changes = fixed_facts_differ(&first.campaign, &s.campaign);
        if !changes.is_empty() {
            return Err(MergeError::HostFacts {
                a: first.dir.clone(),
                b: s.dir.clone(),
                changes,
            });
        }
    }
    // Preferred run first: the first holder of a job or instance wins.
    let mut order: Vec<usize> = (0..sources.len()).collect();
    if let Some(p) = preferred {
        order.retain(|&i| i != p);
        order.insert(0, p);
    }
    let mut merged = Merged::default();
    let mut records: BTreeMap<PathBuf, (usize, &[u8])> = BTreeMap::new();
    for &i in &order {
        for (rel, bytes) in &sources[i].records {
            match records.get(rel) {
                None => {
                    records.insert(rel.clone(), (i, bytes));
                }
                Some((j, kept)) => {
                    merged.duplicates += 1;
                    if *kept != bytes.as_slice() && preferred != Some(*j) {
                        return Err(MergeError::Conflict {
                            job: rel.display().to_string(),
                            a: sources[*j].dir.clone(),
                            b: sources[i].dir.clone(),
                        });
                    }
                }
            }
        }
    }
    let mut build: BTreeMap<String, (usize, Value)> = BTreeMap::new();
    for &i in &order {
        for (key, entry) in &sources[i].build {
            match build.get(key) {
                None => {
                    build.insert(key.clone(), (i, entry.clone()));
                }
                Some((j, kept)) if kept != entry && preferred != Some(*j) => {
                    return Err(MergeError::Build {
                        instance: key.clone(),
                        a: sources[*j].dir.clone(),
                        b: sources[i].dir.clone(),
                    });
                }
                Some(_) => {}
            }
        }
    }
    let campaign = joined_campaign(&sources, &records, system_id);
    let dir = RunDir::open_for_writing(out)?;
    let write = |rel: &Path, bytes: &[u8]| -> Result<(), MergeError> {
        let path = super::safe_path::inside(out, rel).map_err(RunDirError::from)?;
        super::pyjson::write_atomic(&path, bytes)
            .map_err(|e| MergeError::Read(path.clone(), e.to_string()))
    };
    for (rel, (_, bytes)) in &records {
        write(rel, bytes)?;
        merged.records += 1;
    }
    for (key, (i, entry)) in &build {
        if let Some(log) = entry.get("kat_log").and_then(Value::as_str) {
            let rel = Path::new(log);
            let bytes = read_inside(&sources[*i].dir, rel, LOG_LIMIT)
                .map_err(|e| MergeError::Read(sources[*i].dir.join(rel), e.to_string()))?;
            write(rel, &bytes)?;
            merged.kat_logs += 1;
        }
        dir.update_build(key, entry.clone())?;
    }
    dir.write_campaign(&campaign)?;
    Ok(merged)
}

/// One campaign.json for the dataset: the first run's, spanning every run's time, host
/// checks, lanes and instances, with the runs it came from.
fn joined_campaign(
    sources: &[Source],
    records: &BTreeMap<PathBuf, (usize, &[u8])>,
    system_id: Option<&str>,
) -> Campaign {
    let mut c = sources[0].campaign.clone();
    if let Some(id) = system_id {
        c.system_id = id.to_string();
    }
    c.host_checks.clear();
    c.host_problems.clear();
    c.cyclescope.instances.clear();
    c.cyclescope.lanes.clear();
    c.cyclescope.cpus.clear();
    c.cyclescope.shard = None;
    c.shard_cpus.clear();
    let mut lanes = Vec::new();
    for (i, s) in sources.iter().enumerate() {
        let sc = &s.campaign;
        c.started_utc = c.started_utc.clone().min(sc.started_utc.clone());
        c.ended_utc = c.ended_utc.clone().max(sc.ended_utc.clone());
        for mut h in sc.host_checks.iter().cloned() {
            h.shard = h.shard.or(sc.cyclescope.shard.map(|s| s.to_string()));
            c.host_checks.push(h);
        }
        for p in &sc.host_problems {
            if !c.host_problems.contains(p) {
                c.host_problems.push(p.clone());
            }
        }
        for inst in &sc.cyclescope.instances {
            if !c.cyclescope.instances.iter().any(|x| x.key() == inst.key()) {
                c.cyclescope.instances.push(inst.clone());
            }
        }
        for cpu in &sc.cyclescope.cpus {
            if !c.cyclescope.cpus.contains(cpu) {
                c.cyclescope.cpus.push(*cpu);
            }
        }
        let cpus = if sc.cyclescope.cpus.is_empty() {
            vec![sc.cyclescope.cpu]
        } else {
            sc.cyclescope.cpus.clone()
        };
        lanes.extend(cpus);
        c.cyclescope
            .lanes
            .extend(sc.cyclescope.lanes.iter().cloned());
        c.cyclescope.engine_shared_cpu |= sc.cyclescope.engine_shared_cpu;
        if sc.cyclescope.state != CampaignState::Finished {
            c.cyclescope.state = sc.cyclescope.state;
        }
        c.cyclescope.merged_from.push(MergedRun {
            run: s
                .dir
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            shard: sc.cyclescope.shard,
            records: records.values().filter(|(j, _)| *j == i).count(),
        });
    }
    c.cyclescope.cpus.sort_unstable();
    c.shards = lanes.len() as u32;
    c.shard_cpus = lanes
        .iter()
        .enumerate()
        .map(|(k, cpu)| (format!("{}/{}", k + 1, lanes.len()), *cpu))
        .collect();
    c
}
