//! Running every host check for one measurement CPU in the harness's order, and what the
//! measuring commands do with the outcome: the list of problems (the harness's sentences, as
//! stored in `campaign.json`), readiness, and the refusal to measure on an unfixed host. It
//! does not print anything; the frontends render the results.

use std::path::PathBuf;

use serde::Serialize;

use super::check::{CheckResult, HostCheck, Status};
use super::probes::Probes;
use super::root::HostRoot;
use super::{HostError, advisory, allocation, harness, steady};

/// The checks of one CPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostReport {
    pub cpu: usize,
    /// The root the files were read from (`/` for the running system).
    pub root: PathBuf,
    /// One result per [`HostCheck`], in [`HostCheck::all`] order.
    pub checks: Vec<CheckResult>,
}

/// Runs every check for CPU `cpu`. The clock probe runs (pinned to `cpu`) only when the
/// harness would run it: no cpufreq and no other problem.
pub fn check_host(root: &HostRoot, cpu: usize, probes: &mut Probes) -> HostReport {
    let mut checks = vec![
        harness::architecture(&probes.machine),
        harness::cycle_counter(root, &probes.perf, &probes.machine),
        harness::turbo(root, cpu),
        harness::governor(root, cpu),
        harness::frequency_pinned(root, cpu, &probes.machine),
        harness::smt(root, cpu),
        harness::hybrid_core(root, cpu),
        harness::cpu_usable(cpu, probes.cpu_access.try_pin(cpu)),
    ];
    let clock = steady::clock_steady(root, cpu, &checks, &mut probes.clock);
    checks.push(clock);
    checks.extend([
        advisory::isolation(root, cpu),
        advisory::aslr(root),
        advisory::load_average(root),
        advisory::busy_cpu(root, cpu, probes.self_pid, probes.cpu_locks.as_deref()),
        advisory::hypervisor(root),
        allocation::allocation(root, cpu, probes.cpu_access.allowed().as_ref()),
    ]);
    debug_assert!(checks.iter().map(|c| c.check).eq(HostCheck::all()));
    HostReport {
        cpu,
        root: root.dir().to_path_buf(),
        checks,
    }
}

impl HostReport {
    /// The problem sentences of the failed checks, in order (the harness's `host_problems`,
    /// plus cyclescope's stricter cycle-counter failure where it applies).
    pub fn problems(&self) -> Vec<String> {
        self.checks
            .iter()
            .filter(|c| c.status == Status::Fail)
            .filter_map(|c| c.problem.clone())
            .collect()
    }

    /// True when no check failed.
    pub fn is_ready(&self) -> bool {
        self.checks.iter().all(|c| c.status != Status::Fail)
    }

    pub fn result(&self, check: HostCheck) -> Option<&CheckResult> {
        self.checks.iter().find(|c| c.check == check)
    }
}

/// The gate of every measuring command: with problems, an error naming them (the CLI exits 2)
/// unless `allow_unfixed` (`--allow-unfixed-host`), in which case the problems are returned to
/// be stored with the run (`campaign.json` `host_problems`).
pub fn refuse_unfixed(report: &HostReport, allow_unfixed: bool) -> Result<Vec<String>, HostError> {
    let problems = report.problems();
    if problems.is_empty() || allow_unfixed {
        Ok(problems)
    } else {
        Err(HostError::Unfixed {
            cpu: report.cpu,
            problems,
        })
    }
}
