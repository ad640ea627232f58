//! Campaigns on a Slurm cluster: a folder holding an `sbatch` job array with one shard of the
//! campaign per array task (`run --shard K/N`, resumed where a requeued task finds its run) and
//! a merge job that runs `merge`, `validate` and `report` once every task has succeeded
//! (`--dependency=afterok`, and cancelled, not left waiting, when one failed). It carries the
//! defaults a measurement wants (the whole node, one thread per core, the shard bound to its
//! CPUs) and the site's options from `[slurm]` in the config, every value checked before it
//! reaches a script. It writes scripts and, when asked, submits them with `sbatch` (bounded);
//! it never waits for the jobs (`watch FOLDER` follows them) and never measures.

mod script;
mod site;
mod submit;

use std::path::{Path, PathBuf};

pub use script::{LAYOUT_FILE, Layout, ShardExit};
pub use site::{SlurmSite, load_site};
pub use submit::{Submitted, sbatch_on_path, submit};

/// The scripts' file names inside the campaign folder.
pub const SHARDS_SCRIPT: &str = "shards.sh";
pub const MERGE_SCRIPT: &str = "merge.sh";
pub const SUBMIT_SCRIPT: &str = "submit.sh";

#[derive(Debug, thiserror::Error)]
pub enum SlurmError {
    #[error("{path}: [slurm] {detail}")]
    Config { path: PathBuf, detail: String },
    #[error("{what} {value:?} cannot go into a job script: {why}")]
    Unfit {
        what: String,
        value: String,
        why: String,
    },
    #[error("--shards must be from 1 to {max}, not {0}", max = script::MAX_SHARDS)]
    Shards(u32),
    #[error(
        "`{0}` is set by `cyclescope slurm` for every shard (its slice, its run folder, its CPUs \
         from the task's allocation; `--cpus allowed` takes lanes from it); leave it out of the \
         run's arguments"
    )]
    RunArgument(String),
    #[error("{0} already exists and is not empty; give a new folder for the campaign")]
    FolderTaken(PathBuf),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "sbatch is not on PATH (no Slurm here): the scripts are written; on a machine that \
         submits to the cluster run `sh {script}`"
    )]
    NoSbatch { script: String },
    #[error("sbatch refused {script}: {said}")]
    Refused { script: PathBuf, said: String },
    #[error("sbatch did not answer within {0} s; nothing more was submitted")]
    SbatchTimeout(u64),
}

/// A campaign laid out for Slurm: where it lives and what each shard runs.
#[derive(Debug, Clone)]
pub struct SlurmCampaign {
    /// The campaign folder (absolute): scripts, shard runs `shard-K`, `dataset`, `pages`.
    pub folder: PathBuf,
    /// The working folder of every job (absolute; relative paths in the run's arguments and
    /// the config resolve against it).
    pub workdir: PathBuf,
    /// The cyclescope binary the jobs run (absolute).
    pub exe: PathBuf,
    /// The config file the shards read, if any (absolute).
    pub config: Option<PathBuf>,
    pub shards: u32,
    /// `cyclescope run` arguments shared by every shard (instances, lengths, planning).
    pub run_args: Vec<String>,
    pub site: SlurmSite,
    /// Environment passed to every job (`sbatch --export`): the CPU-lock folder and wait.
    pub export: Vec<(String, String)>,
}

impl SlurmCampaign {
    /// The run folder of shard `k` (from 1).
    pub fn shard_dir(&self, k: u32) -> PathBuf {
        self.folder.join(format!("shard-{k}"))
    }

    /// Checks everything that goes into the scripts, then writes them into the (new or
    /// empty) folder; returns the paths written.
    pub fn write(&self) -> Result<Vec<PathBuf>, SlurmError> {
        let scripts = script::render(self)?;
        if std::fs::read_dir(&self.folder).is_ok_and(|mut d| d.next().is_some()) {
            return Err(SlurmError::FolderTaken(self.folder.clone()));
        }
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| SlurmError::Write { path, source }
        };
        std::fs::create_dir_all(&self.folder).map_err(io(&self.folder))?;
        let mut written = Vec::new();
        for (name, text) in scripts {
            let path = self.folder.join(name);
            std::fs::write(&path, text).map_err(io(&path))?;
            if name.ends_with(".sh") {
                set_executable(&path).map_err(io(&path))?;
            }
            written.push(path);
        }
        Ok(written)
    }
}

fn set_executable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_go_only_into_a_new_or_empty_folder() {
        let dir = tempfile::tempdir().unwrap();
        let c = SlurmCampaign {
            folder: dir.path().join("campaign"),
            workdir: dir.path().to_path_buf(),
            exe: PathBuf::from("/usr/bin/cyclescope"),
            config: None,
            shards: 2,
            run_args: vec!["sm3hash-256".into()],
            site: SlurmSite::default(),
            export: Vec::new(),
        };
        let written = c.write().unwrap();
        assert_eq!(written.len(), 4);
        assert_eq!(Layout::read(&c.folder).map(|l| l.shards), Some(2));
        assert!(matches!(c.write(), Err(SlurmError::FolderTaken(_))));
    }

    #[test]
    fn the_merge_job_names_a_shard_without_its_run_and_merges_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let c = SlurmCampaign {
            folder: dir.path().join("campaign"),
            workdir: dir.path().to_path_buf(),
            // Whatever merge would run, it must not be reached.
            exe: PathBuf::from("/bin/false"),
            config: None,
            shards: 2,
            run_args: Vec::new(),
            site: SlurmSite::default(),
            export: Vec::new(),
        };
        c.write().unwrap();
        std::fs::create_dir(c.shard_dir(1)).unwrap();
        std::fs::write(c.shard_dir(1).join("campaign.json"), "{}").unwrap();
        let o = std::process::Command::new("sh")
            .arg(c.folder.join(MERGE_SCRIPT))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert_eq!(
            err.trim(),
            format!(
                "cyclescope slurm: shard 2/2 has no run in {}/shard-2 (see shard-2.log)",
                c.folder.display()
            )
        );
    }
}
