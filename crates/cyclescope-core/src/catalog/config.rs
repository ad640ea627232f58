//! `config.toml`: the file format (serde, unknown keys rejected) and its errors, which name the
//! file, line and column.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{
    Candidate, Catalog, GUIDE_LENGTHS, Instance, bounds, resolve_library, resolve_manifest,
};
use crate::name::SafeName;

/// Measurement defaults (spec §3.2), overridable per command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Message lengths in bytes.
    pub lengths: Vec<u64>,
    pub trials: u32,
    /// Seconds one trial aims at.
    pub trial_target_s: f64,
    /// Upper bound of measured time per instance × length.
    pub op_budget_s: f64,
    /// The measurement CPU; None = the highest-numbered CPU this process may use.
    pub cpu: Option<usize>,
    /// Seconds before a KAT worker is killed.
    pub kat_timeout_s: f64,
    /// Where `run` creates run directories (relative to the working directory).
    pub runs_dir: PathBuf,
    /// Whether the bundled ICCS baselines are added beside the catalog's own instances.
    pub bundled_baselines: bool,
    /// The candidate whose `pseudoXOF-<bits>` instances "× pseudoXOF" divides by (`iccs`, the
    /// bundled Rust helpers; `iccs-c`, the official C ones).
    pub baseline: String,
    /// Address-space limit of every worker, MiB (RLIMIT_AS; a flag and
    /// `CYCLESCOPE_MAX_ADDRESS_SPACE_MIB` win over it); None: 2048.
    pub max_address_space_mib: Option<u64>,
    /// The tuning journal's file (`"off"`: none); None: `$XDG_DATA_HOME/cyclescope/journal.sqlite`.
    pub journal: Option<PathBuf>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            lengths: GUIDE_LENGTHS.to_vec(),
            trials: 5,
            trial_target_s: 1.0,
            op_budget_s: 900.0,
            cpu: None,
            kat_timeout_s: 900.0,
            runs_dir: PathBuf::from("runs"),
            bundled_baselines: true,
            baseline: crate::baseline::DEFAULT_CANDIDATE.to_string(),
            max_address_space_mib: None,
            journal: None,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    settings: Settings,
    #[serde(default, rename = "candidate")]
    candidates: Vec<CandidateEntry>,
    // `[build]`, `[profiles]` and `[[submission]]` belong to `build::config`, which reads them.
    #[serde(default, rename = "build")]
    _build: Option<serde::de::IgnoredAny>,
    #[serde(default, rename = "profiles")]
    _profiles: Option<serde::de::IgnoredAny>,
    #[serde(default, rename = "submission")]
    _submission: Option<serde::de::IgnoredAny>,
    // `[slurm]` belongs to `campaign::slurm`, which reads it.
    #[serde(default, rename = "slurm")]
    _slurm: Option<serde::de::IgnoredAny>,
    // `[keys]` belongs to the workbench's key table, which reads and validates it.
    #[serde(default, rename = "keys")]
    _keys: Option<serde::de::IgnoredAny>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CandidateEntry {
    id: String,
    algorithm: String,
    #[serde(default)]
    variant: Option<String>,
    #[serde(default)]
    flags: Option<String>,
    #[serde(default)]
    kat_manifest: Option<String>,
    #[serde(default, rename = "instance")]
    instances: Vec<InstanceEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InstanceEntry {
    label: String,
    library: String,
    /// u64 so that a width beyond `u32` is refused by its range, not by a type error.
    digest_bits: u64,
    #[serde(default)]
    variant: Option<String>,
    #[serde(default)]
    flags: Option<String>,
    #[serde(default)]
    kat_manifest: Option<String>,
    #[serde(default)]
    kat_name: Option<String>,
    /// `"iccs"` (default: `CryptHash`) or `"supercop"` (`crypto_hash`).
    #[serde(default)]
    abi: crate::plugin::Abi,
    /// Label of a second implementation of the instance (the `differential` check's oracle).
    #[serde(default)]
    oracle: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: {message}")]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

/// Reads and parses a config file; relative paths in it resolve against its folder.
pub fn load_config(path: &Path) -> Result<Catalog, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let base = path.parent().unwrap_or(Path::new("."));
    let mut catalog = parse_config(&text, path, base)?;
    catalog.source = Some(path.to_path_buf());
    Ok(catalog)
}

/// Parses config text; `path` only names the file in errors.
pub fn parse_config(text: &str, path: &Path, base: &Path) -> Result<Catalog, ConfigError> {
    let file: ConfigFile = toml::from_str(text).map_err(|e| {
        let (line, column) = e
            .span()
            .map_or((1, 1), |span| line_column(text, span.start));
        ConfigError::Syntax {
            path: path.to_path_buf(),
            line,
            column,
            // toml quotes the offending key or value, which may be megabytes long.
            message: crate::sanitize::terminal(e.message().trim_end()).into_owned(),
        }
    })?;
    let invalid = |message: String| ConfigError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    validate_settings(&file.settings).map_err(invalid)?;
    let mut file = file;
    if let Some(j) = file.settings.journal.as_mut()
        && j.is_relative()
        && j.as_path() != Path::new("off")
    {
        *j = base.join(&*j);
    }
    let mut seen = std::collections::HashSet::new();
    let mut candidates = Vec::new();
    for c in file.candidates {
        SafeName::new("candidate id", &c.id).map_err(|e| invalid(e.to_string()))?;
        let mut instances = Vec::new();
        for i in c.instances {
            SafeName::new("instance label", &i.label).map_err(|e| invalid(e.to_string()))?;
            if let Some(k) = &i.kat_name {
                SafeName::new("kat_name", k).map_err(|e| invalid(e.to_string()))?;
            }
            if let Some(o) = &i.oracle {
                SafeName::new("oracle", o).map_err(|e| invalid(e.to_string()))?;
            }
            if !seen.insert(i.label.clone()) {
                return Err(invalid(format!(
                    "instance label {:?} appears twice",
                    i.label
                )));
            }
            let digest_bits = bounds::check_digest_bits(i.digest_bits)
                .map_err(|e| invalid(format!("instance {:?}: {e}", i.label)))?;
            let manifest = i.kat_manifest.as_ref().or(c.kat_manifest.as_ref());
            let in_instance =
                |e: super::bundled::BundledError| invalid(format!("instance {:?}: {e}", i.label));
            let kat_manifest = manifest
                .map(|m| resolve_manifest(m, base))
                .transpose()
                .map_err(in_instance)?;
            instances.push(Instance {
                candidate: c.id.clone(),
                algorithm: c.algorithm.clone(),
                library: resolve_library(&i.library, base).map_err(in_instance)?,
                digest_bits,
                variant: i
                    .variant
                    .or_else(|| c.variant.clone())
                    .unwrap_or_else(|| "reference".into()),
                flags: i
                    .flags
                    .or_else(|| c.flags.clone())
                    .unwrap_or_else(|| "guide".into()),
                kat_manifest,
                kat_name: i.kat_name,
                label: i.label,
                abi: i.abi,
                oracle: i.oracle,
                kat_dir: None,
            });
        }
        candidates.push(Candidate {
            id: c.id,
            algorithm: c.algorithm,
            instances,
        });
    }
    Ok(Catalog {
        source: None,
        settings: file.settings,
        candidates,
    })
}

fn validate_settings(s: &Settings) -> Result<(), String> {
    let key = |k: &'static str| move |e: String| format!("settings.{k}: {e}");
    bounds::check_lengths(&s.lengths).map_err(key("lengths"))?;
    bounds::TRIALS
        .check(u64::from(s.trials))
        .map_err(key("trials"))?;
    bounds::TRIAL_TARGET
        .check(s.trial_target_s)
        .map_err(key("trial_target_s"))?;
    bounds::OP_BUDGET
        .check(s.op_budget_s)
        .map_err(key("op_budget_s"))?;
    bounds::KAT_TIMEOUT
        .check(s.kat_timeout_s)
        .map_err(key("kat_timeout_s"))?;
    SafeName::new("candidate id", &s.baseline).map_err(|e| key("baseline")(e.to_string()))?;
    if let Some(mib) = s.max_address_space_mib {
        bounds::ADDRESS_SPACE_MIB
            .check(mib)
            .map_err(key("max_address_space_mib"))?;
    }
    Ok(())
}

/// 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests;
