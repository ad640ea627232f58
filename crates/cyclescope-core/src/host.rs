//! Is this host fit for cycle measurements, and what state was it in? The host checks for one
//! measurement CPU (the harness's `host_problems` conditions exactly, plus advisories that only
//! warn), the refusal to measure on an unfixed host, the `environment` block of every record and
//! the comparison of its fixed keys between runs. Every sysfs/procfs read goes through a
//! [`HostRoot`] so fixture trees stand in for `/`; what cannot come from files is injected as
//! [`Probes`]. It never changes a system setting (it prints the command that would) and never
//! imports ratatui or crossterm.

mod advisory;
mod allocation;
mod cache;
mod check;
mod cpuset;
mod environment;
mod fixture;
pub(crate) mod harness;
mod pmu;
mod probes;
mod report;
mod root;
pub mod run_queue;
mod steady;

pub use advisory::load_average;
pub use allocation::allocation_lanes;
pub use cache::{
    Checked, DEFAULT_MAX_AGE, HostCache, MAX_AGE_ENV, REUSED_KEY, Stored, check_cached,
};
pub use check::{CheckResult, HostCheck, Status};
pub(crate) use cpuset::{
    PARTITION_GROUP, SHIELD_SET, cpuset_v1_dir, cpuset_v2_available, cpuset_v2_dir, partition_cpus,
};
pub use environment::{EnvChange, FIXED_ENV, environment, fixed_clock_hz, fixed_env_diff};
pub use fixture::PROBES_FILE;
pub use pmu::{CorePmu, PmuError, check_one_core_type, core_pmu, core_pmus};
pub use probes::{ClockProber, CpuAccess, FixedClock, Probes, ToolVersions, Tools};
pub use report::{HostReport, check_host, refuse_unfixed};
pub use root::{HostRoot, format_cpu_list, mask_has_cpu, parse_cpu_list};

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error(
        "refusing to measure on an unfixed host (use --allow-unfixed-host for tests): CPU {cpu}: {}",
        problems.join("; ")
    )]
    Unfixed { cpu: usize, problems: Vec<String> },
    #[error(
        "cannot read {path}: {source} (a --root other than / needs this file with the values \
         that cannot come from sysfs; see docs/check-json.md)"
    )]
    ProbesFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    ProbesParse { path: PathBuf, message: String },
    #[error("no online CPU listed in {0} (pass --cpu)")]
    NoOnlineCpu(PathBuf),
}
