//! Handing the scripts to Slurm: `sbatch` found on PATH (its absence is said, with the
//! command that submits later), the array submitted first and the merge after it with
//! `--dependency=afterok` on the array and `--kill-on-invalid-dep=yes`, so a failed task
//! cancels the merge instead of leaving it pending. Each `sbatch` is bounded in time; the job
//! ids go into `slurm.json`. Never waits for the jobs themselves.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::script::Layout;
use super::{LAYOUT_FILE, MERGE_SCRIPT, SHARDS_SCRIPT, SUBMIT_SCRIPT, SlurmCampaign, SlurmError};
use crate::build::compile::{Finished, run_bounded};

/// How long one `sbatch` may take (a busy controller answers in seconds).
const SBATCH_LIMIT: Duration = Duration::from_secs(60);

/// The job ids `sbatch` gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submitted {
    pub array_job: String,
    pub merge_job: String,
}

/// `sbatch` on PATH, if any.
pub fn sbatch_on_path() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("sbatch"))
        .find(|p| p.is_file())
}

/// Submits the campaign written in `c.folder`: the array, then the merge after it.
pub fn submit(c: &SlurmCampaign) -> Result<Submitted, SlurmError> {
    let Some(sbatch) = sbatch_on_path() else {
        return Err(SlurmError::NoSbatch {
            script: crate::sanitize::shell_path(&c.folder.join(SUBMIT_SCRIPT)),
        });
    };
    let array_job = sbatch_job(&sbatch, &c.folder, &[], &c.folder.join(SHARDS_SCRIPT))?;
    let dependency = format!("--dependency=afterok:{array_job}");
    let merge_job = sbatch_job(
        &sbatch,
        &c.folder,
        &[&dependency, "--kill-on-invalid-dep=yes"],
        &c.folder.join(MERGE_SCRIPT),
    )?;
    let layout = Layout {
        shards: c.shards,
        array_job: Some(array_job.clone()),
        merge_job: Some(merge_job.clone()),
    };
    let path = c.folder.join(LAYOUT_FILE);
    let text = serde_json::to_string_pretty(&layout).unwrap_or_default() + "\n";
    std::fs::write(&path, text).map_err(|source| SlurmError::Write { path, source })?;
    Ok(Submitted {
        array_job,
        merge_job,
    })
}

/// One `sbatch --parsable … SCRIPT`; the job id it printed (`id` or `id;cluster`).
fn sbatch_job(
    sbatch: &Path,
    folder: &Path,
    options: &[&str],
    script: &Path,
) -> Result<String, SlurmError> {
    let log = folder.join("submit.log");
    let mut cmd = Command::new(sbatch);
    cmd.arg("--parsable").args(options).arg(script);
    let refused = |said: String| SlurmError::Refused {
        script: script.to_path_buf(),
        said,
    };
    let before = std::fs::metadata(&log).map_or(0, |m| m.len() as usize);
    let ended = run_bounded(&mut cmd, &log, SBATCH_LIMIT, None)
        .map_err(|e| refused(format!("cannot start {}: {e}", sbatch.display())))?;
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let said = text.get(before..).unwrap_or("").trim().to_string();
    match ended {
        Finished::TimedOut => Err(SlurmError::SbatchTimeout(SBATCH_LIMIT.as_secs())),
        Finished::Exited { success: false, .. } => {
            Err(refused(crate::sanitize::log_field(&said).into_owned()))
        }
        Finished::Exited { success: true, .. } => {
            let id = said
                .lines()
                .last()
                .unwrap_or("")
                .split(';')
                .next()
                .unwrap_or("");
            if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
                return Err(refused(format!(
                    "no job id in its answer: {}",
                    crate::sanitize::log_field(&said)
                )));
            }
            Ok(id.to_string())
        }
    }
}
