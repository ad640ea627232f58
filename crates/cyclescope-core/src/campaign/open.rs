//! Opening and closing a run: lock the run directory and open its journal, refuse an unfixed
//! host (unless allowed) or a resume on a changed host, start or continue `campaign.json`,
//! announce the run, and at the end store how it ended. Only `campaign.json` and the journal
//! are touched here.

use std::path::PathBuf;

use super::host_gate::HostGate;
use super::{CampaignError, Events, RunRequest};
use crate::catalog::Instance;
use crate::record::journal::{FILE_NAME, JournalWriter};
use crate::record::run_dir::{CampaignRequest, HostCheckEntry, LaneAssignment, read_campaign};
use crate::record::{Campaign, RunDir};
use crate::vocabulary::{CampaignState, EngineEvent};

/// Takes the run directory's lock and opens its journal for appending.
pub(super) fn lock_and_journal(req: &RunRequest) -> Result<(RunDir, JournalWriter), CampaignError> {
    let dir = RunDir::open_for_writing(&req.run_dir)?;
    let journal = JournalWriter::open(&req.run_dir).map_err(|source| CampaignError::Journal {
        path: req.run_dir.join(FILE_NAME),
        source,
    })?;
    Ok((dir, journal))
}

/// The problems of every measurement CPU, each sentence once, in CPU order.
fn all_problems(hosts: &[HostGate]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in hosts.iter().flat_map(HostGate::problems) {
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// A host whose checks failed on any measurement CPU is refused unless the request consents.
pub(super) fn refuse_unfixed(req: &RunRequest, hosts: &[HostGate]) -> Result<(), CampaignError> {
    let problems = all_problems(hosts);
    // A host unfit for timing (governor, turbo, no PMU) cannot move an exact count: a count
    // runs anyway, its records naming the problems as for `--allow-unfixed-host`.
    let timed = !req.counter.under_valgrind();
    if !problems.is_empty() && !req.allow_unfixed_host && timed {
        return Err(CampaignError::UnfixedHost(problems));
    }
    Ok(())
}

/// `--counter hw-instructions` where the event does not open on a measurement CPU's core PMU:
/// refused up front, naming the errno (no job could count, and no other counter may stand in).
pub(super) fn refuse_no_hardware_instructions(req: &RunRequest) -> Result<(), CampaignError> {
    if req.counter != crate::counter::RunCounter::HwInstructions {
        return Ok(());
    }
    for &cpu in &req.cpus {
        // The worker counts on this machine, whatever tree `--root` reads.
        let pmu = crate::host::core_pmu(&crate::host::HostRoot::system(), cpu)
            .ok()
            .flatten()
            .and_then(|p| p.extended_type());
        crate::counter::PerfCycles::probe_user_instructions(pmu)
            .map_err(crate::counter::NoHardwareInstructions)?;
    }
    Ok(())
}

/// `k/L` of lane `k` (1-based) when a run has several, the harness's shard names.
fn lane_name(index: usize, lanes: usize) -> Option<String> {
    (lanes > 1).then(|| format!("{}/{lanes}", index + 1))
}

/// The campaign record of this run, new or resumed, marked running and written.
pub(super) fn open_or_resume(
    req: &RunRequest,
    dir: &RunDir,
    hosts: &[HostGate],
    assignment: &[Vec<Instance>],
) -> Result<Campaign, CampaignError> {
    let resumed = read_campaign(&req.run_dir).ok();
    if resumed.is_some() {
        let changes: Vec<String> = hosts
            .iter()
            .flat_map(|h| h.changed_since_first_record(&req.run_dir))
            .collect();
        if !changes.is_empty() {
            return Err(CampaignError::HostChanged {
                run_dir: req.run_dir.clone(),
                changes,
            });
        }
    }
    let mut campaign = resumed.unwrap_or_else(|| new_campaign(req, &hosts[0]));
    let utc = crate::record::utc_now();
    for (i, host) in hosts.iter().enumerate() {
        campaign.host_checks.push(HostCheckEntry {
            phase: "measure".into(),
            cpu: host.cpu(),
            utc: utc.clone(),
            problems: host.problems(),
            shard: lane_name(i, hosts.len()),
        });
    }
    campaign.host_problems = all_problems(hosts);
    campaign.shards = hosts.len() as u32;
    campaign.shard_cpus = hosts
        .iter()
        .enumerate()
        .filter_map(|(i, h)| Some((lane_name(i, hosts.len())?, h.cpu())))
        .collect();
    let c = &mut campaign.cyclescope;
    c.lanes = hosts
        .iter()
        .zip(assignment)
        .map(|(h, insts)| LaneAssignment {
            cpu: h.cpu(),
            instances: insts.iter().map(Instance::key).collect(),
        })
        .collect();
    c.engine_shared_cpu = hosts.iter().any(HostGate::engine_shared_cpu);
    c.state = CampaignState::Running;
    campaign.clock_verification = Some(hosts[0].clock_verification().clone());
    dir.write_campaign(&campaign)?;
    Ok(campaign)
}

/// Tells the frontends what runs where, and which host problems were accepted.
pub(super) fn announce(req: &RunRequest, hosts: &[HostGate], events: &mut Events<'_>) {
    events.send(EngineEvent::RunStarted {
        run_dir: req.run_dir.clone(),
        labels: req.instances.iter().map(|i| i.label.clone()).collect(),
        lengths: req.lengths.clone(),
        cpus: req.cpus.clone(),
        reference_jobs: req.reference_jobs.clone(),
    });
    for h in hosts {
        if let Some(checked_utc) = h.reused_from() {
            events.send(EngineEvent::HostReused {
                cpu: h.cpu(),
                checked_utc: checked_utc.to_string(),
            });
        }
    }
    let problems = all_problems(hosts);
    if !problems.is_empty() {
        events.send(EngineEvent::HostProblems { problems });
    }
    if hosts.iter().any(HostGate::engine_shared_cpu) {
        events.send(EngineEvent::Warning {
            message: format!(
                "no CPU is left for cyclescope itself: it shares CPU(s) {} with the trials \
                 (the records say engine_shared_cpu); this process may use CPU(s) {}: leave \
                 one of them out of --cpus, or give it one more CPU (taskset, or sbatch \
                 --cpus-per-task) to avoid it",
                crate::host::format_cpu_list(&req.cpus.iter().copied().collect()),
                crate::cpu::cpu_list(crate::cpu::allowed())
            ),
        });
    }
}

/// Stores the end of the run: when, the host then, and whether it was cancelled.
pub(super) fn close(
    dir: &RunDir,
    campaign: &mut Campaign,
    host: &HostGate,
    cancelled: bool,
) -> Result<(), CampaignError> {
    campaign.ended_utc = Some(crate::record::utc_now());
    campaign.environment_at_end = Some(host.environment());
    campaign.cyclescope.state = if cancelled {
        CampaignState::Cancelled
    } else {
        CampaignState::Finished
    };
    dir.write_campaign(campaign)?;
    Ok(())
}

fn new_campaign(req: &RunRequest, host: &HostGate) -> Campaign {
    let env = host.environment();
    Campaign {
        system_id: env
            .get("hostname")
            .and_then(|v| v.as_str())
            .unwrap_or("unknown")
            .to_string(),
        started_utc: crate::record::utc_now(),
        environment_at_start: env,
        host_checks: Vec::new(),
        planning: req.planning,
        ended_utc: None,
        environment_at_end: None,
        host_problems: Vec::new(),
        shards: 1,
        shard_cpus: Default::default(),
        cyclescope: CampaignRequest {
            // Paths below the working folder are stored relative to it (no absolute paths in
            // evidence; `--resume` runs from the same folder).
            instances: req.instances.iter().map(stored_instance).collect(),
            lengths: req.lengths.clone(),
            cpu: req.cpu(),
            cpus: req.cpus.clone(),
            shard: req.shard,
            lanes: Vec::new(),
            engine_shared_cpu: false,
            merged_from: Vec::new(),
            allow_unfixed_host: req.allow_unfixed_host,
            allow_kat_fail: req.allow_kat_fail,
            tui_attached: req.tui_attached,
            adaptive: req.adaptive,
            baseline: Some(req.baseline.candidate.clone()),
            counter: req.counter,
            reference_jobs: req.reference_jobs.clone(),
            state: CampaignState::Running,
        },
        clock_verification: Some(host.clock_verification().clone()),
    }
}

fn stored_instance(i: &Instance) -> Instance {
    let shown = |p: &std::path::Path| PathBuf::from(crate::catalog::display_path(p));
    Instance {
        library: shown(&i.library),
        kat_manifest: i.kat_manifest.as_deref().map(shown),
        ..i.clone()
    }
}
