//! Opening and closing a run: lock the run directory and open its journal, refuse an unfixed
//! host (unless allowed) or a resume on a changed host, start or continue `campaign.json`,
//! announce the run, and at the end store how it ended. Only `campaign.json` and the journal
//! are touched here.

use std::path::PathBuf;

use super::host_gate::HostGate;
use super::{CampaignError, Events, RunRequest};
use crate::catalog::Instance;
use crate::record::journal::{FILE_NAME, JournalWriter};
use crate::record::run_dir::{CampaignRequest, HostCheckEntry, read_campaign};
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

/// A host whose checks failed is refused unless the request consents.
pub(super) fn refuse_unfixed(req: &RunRequest, host: &HostGate) -> Result<(), CampaignError> {
    let problems = host.problems();
    if !problems.is_empty() && !req.allow_unfixed_host {
        return Err(CampaignError::UnfixedHost(problems));
    }
    Ok(())
}

/// The campaign record of this run, new or resumed, marked running and written.
pub(super) fn open_or_resume(
    req: &RunRequest,
    dir: &RunDir,
    host: &HostGate,
) -> Result<Campaign, CampaignError> {
    let resumed = read_campaign(&req.run_dir).ok();
    if resumed.is_some() {
        let changes = host.changed_since_first_record(&req.run_dir);
        if !changes.is_empty() {
            return Err(CampaignError::HostChanged {
                run_dir: req.run_dir.clone(),
                changes,
            });
        }
    }
    let problems = host.problems();
    let mut campaign = resumed.unwrap_or_else(|| new_campaign(req, host));
    campaign.host_checks.push(HostCheckEntry {
        phase: "measure".into(),
        cpu: req.cpu,
        utc: crate::record::utc_now(),
        problems: problems.clone(),
    });
    campaign.host_problems = problems;
    campaign.clock_verification = Some(host.clock_verification().clone());
    campaign.cyclescope.state = CampaignState::Running;
    dir.write_campaign(&campaign)?;
    Ok(campaign)
}

/// Tells the frontends what runs where, and which host problems were accepted.
pub(super) fn announce(req: &RunRequest, host: &HostGate, events: &mut Events<'_>) {
    events.send(EngineEvent::RunStarted {
        run_dir: req.run_dir.clone(),
        labels: req.instances.iter().map(|i| i.label.clone()).collect(),
        lengths: req.lengths.clone(),
        cpu: req.cpu,
    });
    let problems = host.problems();
    if !problems.is_empty() {
        events.send(EngineEvent::HostProblems { problems });
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
        cyclescope: CampaignRequest {
            // Paths below the working folder are stored relative to it (no absolute paths in
            // evidence; `--resume` runs from the same folder).
            instances: req.instances.iter().map(stored_instance).collect(),
            lengths: req.lengths.clone(),
            cpu: req.cpu,
            allow_unfixed_host: req.allow_unfixed_host,
            allow_kat_fail: req.allow_kat_fail,
            tui_attached: req.tui_attached,
            adaptive: req.adaptive,
            baseline: Some(req.baseline.candidate.clone()),
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
