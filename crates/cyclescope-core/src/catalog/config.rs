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
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Catalog, ConfigError> {
        parse_config(text, Path::new("cfg.toml"), Path::new("/base"))
    }

    #[test]
    fn relative_paths_resolve_against_the_config_folder() {
        let c = parse(
            "[[candidate]]\nid = \"hash-10\"\nalgorithm = \"FEILIAN\"\nkat_manifest = \"hash-10/kat.sha256\"\n\
             [[candidate.instance]]\nlabel = \"FEILIAN512\"\nlibrary = \"lib/libFEILIAN512.so\"\ndigest_bits = 512\n",
        )
        .unwrap();
        let i = c.find("FEILIAN512").unwrap();
        assert_eq!(i.library, Path::new("/base/lib/libFEILIAN512.so"));
        assert_eq!(
            i.kat_manifest.as_deref(),
            Some(Path::new("/base/hash-10/kat.sha256"))
        );
        assert_eq!(
            (i.variant.as_str(), i.flags.as_str()),
            ("reference", "guide")
        );
        assert_eq!(c.settings, Settings::default());
    }

    #[test]
    fn an_instance_may_say_it_exports_supercop_crypto_hash() {
        let inst = |abi: &str| {
            format!(
                "[[candidate]]\nid = \"ebash\"\nalgorithm = \"X\"\n[[candidate.instance]]\n\
                 label = \"x-256\"\nlibrary = \"libx.so\"\ndigest_bits = 256\n{abi}"
            )
        };
        let c = parse(&inst("abi = \"supercop\"\n")).unwrap();
        assert_eq!(c.find("x-256").unwrap().abi, crate::plugin::Abi::Supercop);
        let c = parse(&inst("")).unwrap();
        assert_eq!(c.find("x-256").unwrap().abi, crate::plugin::Abi::Iccs);
        let err = parse(&inst("abi = \"nacl\"\n")).unwrap_err().to_string();
        assert!(err.contains("nacl") && err.contains("supercop"), "{err}");
    }

    #[test]
    fn unknown_key_names_line_and_column() {
        let err = parse("[settings]\ntrials = 5\ntrial_targt_s = 1.0\n").unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("cfg.toml:3:1: "), "{msg}");
        assert!(msg.contains("trial_targt_s"), "{msg}");
    }

    #[test]
    fn malformed_toml_names_line_and_column() {
        let err = parse("[settings]\ntrials = = 5\n").unwrap_err();
        assert!(err.to_string().starts_with("cfg.toml:2:"), "{err}");
    }

    #[test]
    fn invalid_values_are_refused() {
        for (text, needle) in [
            ("[settings]\ntrials = 0\n", "trials"),
            ("[settings]\nlengths = []\n", "lengths"),
            (
                "[[candidate]]\nid=\"x\"\nalgorithm=\"X\"\n[[candidate.instance]]\nlabel=\"a\"\nlibrary=\"a.so\"\ndigest_bits=12\n",
                "multiple of 8",
            ),
            (
                "[[candidate]]\nid=\"x\"\nalgorithm=\"X\"\n[[candidate.instance]]\nlabel=\"a\"\nlibrary=\"a.so\"\ndigest_bits=256\n[[candidate.instance]]\nlabel=\"a\"\nlibrary=\"b.so\"\ndigest_bits=256\n",
                "twice",
            ),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }

    fn one_instance(id: &str, label: &str, extra: &str) -> String {
        format!(
            "[[candidate]]\nid={id:?}\nalgorithm=\"X\"\n[[candidate.instance]]\nlabel={label:?}\nlibrary=\"a.so\"\n{extra}\n"
        )
    }

    #[test]
    fn numbers_outside_their_range_are_refused_with_the_range() {
        for (text, needle) in [
            (
                "[settings]\ntrial_target_s = nan\n",
                "trial_target_s: trial target NaN is outside the allowed range 0.0001 … 3600 seconds",
            ),
            ("[settings]\ntrial_target_s = inf\n", "trial_target_s"),
            (
                "[settings]\nop_budget_s = inf\n",
                "op_budget_s: op budget inf",
            ),
            ("[settings]\nkat_timeout_s = -inf\n", "kat_timeout_s"),
            (
                "[settings]\nlengths = [32, 1024, 32]\n",
                "32 is listed twice",
            ),
            ("[settings]\nlengths = [0]\n", "1 … 16777216"),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
        let err = parse(&one_instance("x", "a", "digest_bits=4294967288"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("digest bits 4294967288 is outside the allowed range 8 … 8192"),
            "{err}"
        );
    }

    #[test]
    fn names_that_would_be_paths_are_refused() {
        let long = "a".repeat(300);
        for (id, label, extra, needle) in [
            (
                "x",
                "../../x",
                "",
                "instance label \"../../x\" starts with '.'",
            ),
            ("../x", "a", "", "candidate id \"../x\" starts with '.'"),
            ("/abs", "a", "", "contains '/'"),
            ("x", "a/b", "", "contains '/'"),
            ("x", long.as_str(), "", "300 characters long (at most 64)"),
            ("x", "a", "kat_name=\"../../k\"", "kat_name \"../../k\""),
            ("x", "a", "oracle=\"a b\"", "oracle \"a b\""),
        ] {
            let text = one_instance(id, label, &format!("digest_bits=256\n{extra}"));
            let err = parse(&text).unwrap_err().to_string();
            assert!(err.contains(needle), "{id:?}/{label:?}: {err}");
        }
    }

    #[test]
    fn an_instance_may_name_its_oracle() {
        let text = one_instance("x", "a", "digest_bits=256\noracle=\"a-ref\"");
        let cat = parse(&text).unwrap();
        assert_eq!(
            cat.instances().next().unwrap().oracle.as_deref(),
            Some("a-ref")
        );
    }

    #[test]
    fn line_column_counts_characters() {
        assert_eq!(line_column("ab\ncd", 4), (2, 2));
        assert_eq!(line_column("µ=1", 2), (1, 2));
    }
}
