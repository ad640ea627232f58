//! The site's Slurm options: `[slurm]` in the config file (partition, account, time limit,
//! CPUs per shard, whether to take the whole node, extra `#SBATCH` lines), with the command
//! line's overrides laid over them. Every value is checked against what an `#SBATCH` line can
//! carry — sbatch reads those lines itself, without a shell, so nothing can be quoted there —
//! and options `cyclescope slurm` sets itself are refused in the extra lines.

use std::path::Path;

use serde::Deserialize;
use serde::de::IgnoredAny;

use super::SlurmError;

/// Options `cyclescope slurm` writes itself; an extra line may not set them again.
const OWN_OPTIONS: [&str; 6] = [
    "--array",
    "--dependency",
    "--output",
    "--error",
    "--chdir",
    "--export",
];

#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct SlurmSite {
    /// `--partition` of every job.
    pub partition: Option<String>,
    /// `--account` of every job.
    pub account: Option<String>,
    /// `--time` of each shard (Slurm's forms: `MM`, `HH:MM:SS`, `D-HH`…).
    pub time: Option<String>,
    /// CPUs each shard's step is bound to: one to measure on, the rest for cyclescope itself.
    pub cpus_per_task: u32,
    /// `--exclusive`: the whole node, so no other job shares a core with the trials.
    pub exclusive: bool,
    /// Further `#SBATCH` options, one per line (`"--qos=long"`, `"--constraint=skylake"`).
    pub sbatch: Vec<String>,
}

impl Default for SlurmSite {
    fn default() -> Self {
        Self {
            partition: None,
            account: None,
            time: None,
            cpus_per_task: 2,
            exclusive: true,
            sbatch: Vec::new(),
        }
    }
}

#[derive(Debug, Deserialize)]
struct SlurmFile {
    #[serde(default)]
    slurm: SlurmSite,
    // The other sections belong to `catalog::config` and `build::config`.
    #[serde(default, rename = "settings")]
    _settings: Option<IgnoredAny>,
    #[serde(default, rename = "candidate")]
    _candidate: Option<IgnoredAny>,
    #[serde(default, rename = "build")]
    _build: Option<IgnoredAny>,
    #[serde(default, rename = "profiles")]
    _profiles: Option<IgnoredAny>,
    #[serde(default, rename = "submission")]
    _submission: Option<IgnoredAny>,
    // The workbench's key table, read by the binary's keymap.
    #[serde(default, rename = "keys")]
    _keys: Option<IgnoredAny>,
}

/// The `[slurm]` section of `path` (None: no config file, the defaults), checked.
pub fn load_site(path: Option<&Path>) -> Result<SlurmSite, SlurmError> {
    let Some(path) = path else {
        return Ok(SlurmSite::default());
    };
    let invalid = |detail: String| SlurmError::Config {
        path: path.to_path_buf(),
        detail,
    };
    let text = std::fs::read_to_string(path).map_err(|e| invalid(format!("cannot read: {e}")))?;
    let file: SlurmFile =
        toml::from_str(&text).map_err(|e| invalid(e.message().trim_end().to_string()))?;
    file.slurm.check().map_err(|e| invalid(e.to_string()))?;
    Ok(file.slurm)
}

impl SlurmSite {
    /// Refuses a value an `#SBATCH` line cannot carry as meant.
    pub fn check(&self) -> Result<(), SlurmError> {
        for (what, v) in [("partition", &self.partition), ("account", &self.account)] {
            if let Some(v) = v {
                only(what, v, |c| {
                    c.is_ascii_alphanumeric() || "_.,+-".contains(c)
                })?;
            }
        }
        if let Some(t) = &self.time {
            only("time", t, |c| c.is_ascii_digit() || ":-".contains(c))?;
        }
        if !(1..=4096).contains(&self.cpus_per_task) {
            return Err(unfit(
                "cpus_per_task",
                &self.cpus_per_task.to_string(),
                "give 1 to 4096 (2: one CPU to measure on, one for cyclescope)",
            ));
        }
        for line in &self.sbatch {
            if !line.starts_with('-') {
                return Err(unfit(
                    "sbatch line",
                    line,
                    "give an sbatch option such as --qos=long",
                ));
            }
            sbatch_word("sbatch line", line)?;
            let name = line.split('=').next().unwrap_or(line);
            if OWN_OPTIONS.contains(&name) {
                return Err(unfit(
                    "sbatch line",
                    line,
                    "cyclescope slurm sets this option itself",
                ));
            }
        }
        Ok(())
    }
}

fn unfit(what: &str, value: &str, why: &str) -> SlurmError {
    SlurmError::Unfit {
        what: what.into(),
        value: crate::sanitize::log_field(value).into_owned(),
        why: why.into(),
    }
}

/// `value` made only of the characters `ok` accepts, and not empty.
fn only(what: &str, value: &str, ok: impl Fn(char) -> bool) -> Result<(), SlurmError> {
    if value.is_empty() || !value.chars().all(ok) {
        return Err(unfit(
            what,
            value,
            "it holds a character Slurm does not take here",
        ));
    }
    Ok(())
}

/// A word an `#SBATCH` line (or an `--export` list) carries as it is: no blank, quote,
/// backslash, comma, `%` (sbatch's file-name patterns) or control character.
pub(crate) fn sbatch_word(what: &str, value: &str) -> Result<(), SlurmError> {
    let bad = value
        .chars()
        .find(|&c| c.is_whitespace() || c.is_control() || "\"'\\,%#".contains(c));
    match bad {
        _ if value.is_empty() => Err(unfit(what, value, "it is empty")),
        Some(c) => Err(unfit(
            what,
            value,
            &format!("{c:?} cannot be carried by an #SBATCH line; choose a value without it"),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(text: &str) -> Result<SlurmSite, SlurmError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, text).unwrap();
        load_site(Some(&path))
    }

    #[test]
    fn the_section_is_read_beside_the_others_and_defaults_fill_in() {
        let s = site(
            "[settings]\ncpu = 1\n[slurm]\npartition = \"bench\"\ntime = \"2-00:00:00\"\n\
             sbatch = [\"--qos=long\"]\n",
        )
        .unwrap();
        assert_eq!(s.partition.as_deref(), Some("bench"));
        assert_eq!(s.time.as_deref(), Some("2-00:00:00"));
        assert_eq!((s.cpus_per_task, s.exclusive), (2, true));
        assert_eq!(site("").unwrap(), SlurmSite::default());
    }

    #[test]
    fn values_an_sbatch_line_cannot_carry_are_refused_by_name() {
        let err = |t: &str| site(t).unwrap_err().to_string();
        assert!(err("[slurm]\npartition = \"a b\"\n").contains("partition \"a b\""));
        assert!(err("[slurm]\ntime = \"1h\"\n").contains("time \"1h\""));
        assert!(err("[slurm]\nsbatch = [\"--array=1-9\"]\n").contains("sets this option itself"));
        assert!(err("[slurm]\nsbatch = [\"qos=long\"]\n").contains("give an sbatch option"));
        assert!(err("[slurm]\nsbatch = [\"--comment=x\\ny\"]\n").contains("cannot be carried"));
        assert!(err("[slurm]\nparttion = \"x\"\n").contains("unknown field `parttion`"));
        assert!(err("[slurm]\ncpus_per_task = 0\n").contains("cpus_per_task"));
    }
}
