//! The run request and its one builder: settings (`config.toml`'s `[settings]`) first, then
//! what a frontend overrides (CLI flags, the TUI's choices), checked once. The CLI and the TUI
//! both build their requests here, so a setting cannot be honoured by one and ignored by the
//! other. A resumed run takes what its `campaign.json` stored and only the rest from here.
//! A new run whose plan is out of proportion (`proportion`) is refused here, before anything
//! of it is opened.

mod proportion;

pub use proportion::LargePlan;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::baseline::Baseline;
use crate::catalog::{Instance, Settings};
use crate::measure::plan::{Adaptive, MIN_ADAPTIVE_TRIALS, Planning};
use crate::record::Campaign;
use crate::worker::Limits;

use super::assign::Shard;

/// Everything a run needs.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRequest {
    pub instances: Vec<Instance>,
    pub lengths: Vec<u64>,
    pub planning: Planning,
    /// The measurement CPUs, one lane (and one worker at a time) each; never empty, sorted.
    pub cpus: Vec<usize>,
    /// The slice of the campaign this process measures (`--shard K/N`); `instances` holds
    /// only that slice.
    pub shard: Option<Shard>,
    pub run_dir: PathBuf,
    pub allow_unfixed_host: bool,
    pub allow_kat_fail: bool,
    pub tui_attached: bool,
    /// KATs that already passed in this session (the TUI's cache): label → that run's KAT
    /// log, which is copied into this run instead of re-running the job.
    pub kat_passed: BTreeMap<String, PathBuf>,
    pub kat_timeout: Duration,
    pub(crate) worker_exe: PathBuf,
    pub limits: Limits,
    /// Where host checks read sysfs/procfs (tests point it at fixture trees).
    pub host_root: PathBuf,
    /// The adaptive mode instead of the guide's fixed number of trials.
    pub adaptive: Option<Adaptive>,
    /// An upper bound on every worker's timeout (the plan's is ten times what it expects, at
    /// least 5 s; the calibration's 6 h): for tests and impatient operators; the record keeps
    /// the plan's.
    pub timeout_cap: Option<Duration>,
    /// The candidate "× pseudoXOF" divides by.
    pub baseline: Baseline,
    /// Labels of the baseline instances this run added because its selection lacked them
    /// (reference jobs: measured so that the ratio has a denominator).
    pub reference_jobs: Vec<String>,
    /// Time each job again at the buffer layouts of `measure::layout` (`--layouts`).
    pub layouts: bool,
    /// The machine-wide CPU-lock folder (`cpu::lock::machine_lock_dir`; tests that never
    /// measure give their own).
    pub cpu_lock_dir: PathBuf,
    /// What each job counts: cycles by the guide's trials, or instructions under valgrind
    /// (`--counter instructions`, one counted process per job).
    pub counter: crate::counter::RunCounter,
    /// Where the run indexes its jobs (the tuning journal), and as what.
    pub journal: crate::journal::JournalTarget,
    pub origin: crate::journal::Origin,
}

/// What a frontend sets on top of the settings; `None` keeps the setting (or the default).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestOverrides {
    pub lengths: Option<Vec<u64>>,
    pub cpu: Option<usize>,
    /// Several measurement CPUs (wins over `cpu`).
    pub cpus: Option<Vec<usize>>,
    /// Measure only this slice of the instances.
    pub shard: Option<Shard>,
    /// Seconds per instance key from earlier runs, for balancing shards.
    pub shard_costs: BTreeMap<String, f64>,
    pub trials: Option<u32>,
    pub trial_target_s: Option<f64>,
    pub op_budget_s: Option<f64>,
    /// Adaptive mode: the relative CI half-width and the most trials per job.
    pub adaptive: Option<(f64, u32)>,
    pub kat_timeout_s: Option<f64>,
    pub max_address_space_mib: Option<u64>,
    pub max_cpu_seconds: Option<u64>,
    pub timeout_cap_s: Option<f64>,
    pub host_root: Option<PathBuf>,
    pub allow_unfixed_host: bool,
    pub allow_kat_fail: bool,
    /// Run a plan of thousands of jobs or of messages past 1 MiB (`--allow-large-plan`).
    pub allow_large_plan: bool,
    /// Time each job at several buffer layouts too (`--layouts`).
    pub layouts: bool,
    /// What each job counts (`--counter`).
    pub counter: crate::counter::RunCounter,
    pub tui_attached: bool,
    pub kat_passed: BTreeMap<String, PathBuf>,
    /// The baseline candidate (default: the setting).
    pub baseline: Option<String>,
    /// Instances the run may add as reference jobs: the baseline's `pseudoXOF-<bits>` that the
    /// selection needs and lacks. Empty: no reference jobs (a frontend whose session has them
    /// measured already passes only the ones still missing).
    pub reference_pool: Vec<Instance>,
    /// The baseline's own helpers other than its pseudoXOF (`sm3hash-256`, `pseudohash-*`)
    /// get the reference job their ratio needs too (the CLI's `run`).
    pub helper_reference_jobs: bool,
    /// The tuning journal to index into (default: none; frontends pass the settings').
    pub journal: crate::journal::JournalTarget,
    /// What the run is (default: a run, or the workbench's when `tui_attached`).
    pub origin: Option<crate::journal::Origin>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RequestError {
    #[error("--lengths: {0}")]
    Lengths(String),
    #[error("measurement CPU: {0}")]
    Cpu(String),
    #[error("measurement CPUs: {}", .0.join("; "))]
    SmtSiblings(Vec<String>),
    #[error("measurement CPUs: {0}")]
    CoreTypes(crate::host::PmuError),
    #[error("shard {0} holds no instance of this campaign (it has fewer instances than shards)")]
    EmptyShard(Shard),
    #[error("trials per job must be 1…16 (--trials), not {0}")]
    Trials(u32),
    #[error("--trial-target and --op-budget must be positive numbers of seconds")]
    Seconds,
    #[error("--adaptive takes a fraction between 0 and 1 (e.g. 0.01), not {0}")]
    Precision(f64),
    #[error("nothing to measure: no instance selected")]
    NoInstances,
    #[error("{0}")]
    LargePlan(LargePlan),
    #[error("address-space limit: {0}")]
    AddressSpace(String),
}

impl RunRequest {
    /// A new run of `instances` into `run_dir`.
    pub fn build(
        settings: &Settings,
        instances: Vec<Instance>,
        run_dir: PathBuf,
        mut o: RequestOverrides,
    ) -> Result<Self, RequestError> {
        if instances.is_empty() {
            return Err(RequestError::NoInstances);
        }
        let lengths = o
            .lengths
            .clone()
            .unwrap_or_else(|| settings.lengths.clone());
        crate::catalog::bounds::check_lengths(&lengths).map_err(RequestError::Lengths)?;
        let planning = Planning::new(
            o.trials.unwrap_or(settings.trials),
            o.trial_target_s.unwrap_or(settings.trial_target_s),
            o.op_budget_s.unwrap_or(settings.op_budget_s),
        );
        let mut cpus = o
            .cpus
            .clone()
            .or_else(|| o.cpu.or(settings.cpu).map(|c| vec![c]))
            .unwrap_or_else(|| vec![crate::cpu::last_allowed()]);
        cpus.sort_unstable();
        cpus.dedup();
        let instances = super::assign::shard_instances(&instances, o.shard, &o.shard_costs);
        if let Some(shard) = o.shard
            && instances.is_empty()
        {
            return Err(RequestError::EmptyShard(shard));
        }
        let mut req = Self::bare(instances, lengths, cpus, run_dir, planning);
        req.shard = o.shard;
        let pool = std::mem::take(&mut o.reference_pool);
        let allow_large_plan = o.allow_large_plan;
        let helpers = o.helper_reference_jobs;
        req.apply(settings, o)?;
        let (add, _) = req.baseline.missing_for(&req.instances, &pool, helpers);
        req.reference_jobs = add.iter().map(|i| i.label.clone()).collect();
        req.instances.extend(add);
        if !allow_large_plan {
            proportion::check(
                req.instances.len(),
                &req.lengths,
                &req.planning,
                req.adaptive,
            )
            .map_err(RequestError::LargePlan)?;
        }
        Ok(req)
    }

    /// The run in `run_dir` continued: instances, lengths, CPU, planning, mode and the allow
    /// flags as its `campaign.json` stored them; the overrides may add an allow flag or the
    /// adaptive mode, and set what a campaign does not store (timeouts, limits, host root).
    pub fn resume(
        settings: &Settings,
        campaign: Campaign,
        run_dir: PathBuf,
        mut o: RequestOverrides,
    ) -> Result<Self, RequestError> {
        let c = campaign.cyclescope;
        let instances = c
            .instances
            .into_iter()
            .map(|i| Instance {
                library: crate::catalog::expand_home(&i.library),
                kat_manifest: i.kat_manifest.as_deref().map(crate::catalog::expand_home),
                ..i
            })
            .collect();
        // Runs from before lanes stored only `cpu`.
        let cpus = if c.cpus.is_empty() {
            vec![c.cpu]
        } else {
            c.cpus.clone()
        };
        let mut req = Self::bare(instances, c.lengths, cpus, run_dir, campaign.planning);
        req.shard = c.shard;
        req.adaptive = c.adaptive;
        req.reference_jobs = c.reference_jobs;
        // The reference jobs belong to the stored baseline: it wins over a new flag.
        o.baseline = c.baseline.or(o.baseline);
        // A resumed run counts what it counted.
        o.counter = c.counter;
        o.allow_unfixed_host |= c.allow_unfixed_host;
        o.allow_kat_fail |= c.allow_kat_fail;
        req.apply(settings, o)?;
        Ok(req)
    }

    /// The guide's defaults for everything but what to measure and where.
    fn bare(
        instances: Vec<Instance>,
        lengths: Vec<u64>,
        cpus: Vec<usize>,
        run_dir: PathBuf,
        planning: Planning,
    ) -> Self {
        Self {
            instances,
            lengths,
            planning,
            cpus,
            shard: None,
            run_dir,
            allow_unfixed_host: false,
            allow_kat_fail: false,
            tui_attached: false,
            kat_passed: BTreeMap::new(),
            kat_timeout: Duration::from_secs(900),
            worker_exe: crate::worker::default_exe(),
            limits: Limits::standard(crate::worker::limits::DEFAULT_ADDRESS_SPACE_MIB),
            host_root: PathBuf::from("/"),
            timeout_cap: None,
            adaptive: None,
            baseline: Baseline::default(),
            reference_jobs: Vec::new(),
            layouts: false,
            cpu_lock_dir: crate::cpu::lock::machine_lock_dir(),
            counter: crate::counter::RunCounter::Cycles,
            journal: crate::journal::JournalTarget::Off,
            origin: crate::journal::Origin::Run,
        }
    }

    /// Everything both kinds of request take from the settings and the overrides.
    fn apply(&mut self, settings: &Settings, o: RequestOverrides) -> Result<(), RequestError> {
        // The CPU may come from the config or a resumed campaign (another host, another
        // cgroup): one this process may not use would fail every worker, blamed on the candidate.
        if self.cpus.is_empty() {
            return Err(RequestError::Cpu("no CPU given".into()));
        }
        for &cpu in &self.cpus {
            crate::cpu::check_usable(cpu).map_err(RequestError::Cpu)?;
        }
        let p = &self.planning;
        if !(1..=16).contains(&p.trials) {
            return Err(RequestError::Trials(p.trials));
        }
        if !(p.trial_target_s > 0.0 && p.op_budget_s > 0.0) {
            return Err(RequestError::Seconds);
        }
        if let Some((precision, max_trials)) = o.adaptive {
            if !(precision > 0.0 && precision < 1.0) {
                return Err(RequestError::Precision(precision));
            }
            self.adaptive = Some(Adaptive {
                precision,
                max_trials: max_trials.clamp(MIN_ADAPTIVE_TRIALS, 1000),
            });
        }
        self.allow_unfixed_host |= o.allow_unfixed_host;
        self.allow_kat_fail |= o.allow_kat_fail;
        self.tui_attached |= o.tui_attached;
        self.layouts |= o.layouts;
        self.counter = o.counter;
        self.kat_passed = o.kat_passed;
        self.journal = o.journal;
        self.origin = o.origin.unwrap_or(if self.tui_attached {
            crate::journal::Origin::Workbench
        } else {
            crate::journal::Origin::Run
        });
        self.baseline = Baseline::new(o.baseline.as_deref().unwrap_or(&settings.baseline));
        let kat_timeout_s = o.kat_timeout_s.unwrap_or(settings.kat_timeout_s);
        self.kat_timeout = Duration::from_secs_f64(kat_timeout_s.max(0.1));
        let mib = crate::worker::limits::address_space_mib(
            o.max_address_space_mib,
            settings.max_address_space_mib,
        )
        .map_err(RequestError::AddressSpace)?;
        self.limits.address_space_bytes = Some(mib << 20);
        if let Some(s) = o.max_cpu_seconds {
            self.limits.cpu_seconds = Some(s);
        }
        self.timeout_cap = o.timeout_cap_s.map(|s| Duration::from_secs_f64(s.max(0.1)));
        if let Some(root) = o.host_root {
            self.host_root = root;
        }
        let pairs = crate::host::HostRoot::new(&self.host_root).smt_sibling_pairs(&self.cpus);
        if !pairs.is_empty() {
            return Err(RequestError::SmtSiblings(pairs));
        }
        if self.cpus.len() > 1 {
            let root = crate::host::HostRoot::new(&self.host_root);
            crate::host::check_one_core_type(&root, &self.cpus).map_err(RequestError::CoreTypes)?;
        }
        Ok(())
    }

    /// The first measurement CPU (the only one of a single-lane run).
    pub fn cpu(&self) -> usize {
        self.cpus[0]
    }

    /// `d`, or the cap when that is shorter.
    pub(crate) fn capped(&self, d: Duration) -> Duration {
        self.timeout_cap.map_or(d, |c| d.min(c))
    }

    /// Whether `label` was added to this run as a reference job.
    pub fn is_reference_job(&self, candidate: &str, label: &str) -> bool {
        candidate == self.baseline.candidate && self.reference_jobs.iter().any(|l| l == label)
    }
}

#[cfg(test)]
mod tests;
