//! The catalog: candidates (an NGCC id such as `hash-10` or `iccs`) and their instances
//! (parameter sets: label, library, digest width, KAT manifest), plus the measurement settings.
//! Built from `config.toml`, from an ad-hoc `--lib`, or by scanning a folder. It resolves paths
//! but never loads a library itself (listing asks `plugin` for that).

pub mod bounds;
mod config;
mod discover;

pub use config::{ConfigError, Settings, load_config, parse_config};
pub use discover::{adhoc_instance, scan_dir};

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::name::{NameError, SafeName};

/// The guide's message lengths S1–S8, in bytes.
pub const GUIDE_LENGTHS: [u64; 8] = [32, 128, 512, 1024, 4096, 8192, 16384, 65536];

/// A library path of the form `bundled:<name>` names a library built with this workspace.
pub(crate) const BUNDLED_PREFIX: &str = "bundled:";

#[derive(Debug, Clone, Serialize)]
pub struct Candidate {
    pub id: String,
    pub algorithm: String,
    pub instances: Vec<Instance>,
}

/// One parameter set of a candidate, as measured and reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Instance {
    pub candidate: String,
    pub algorithm: String,
    pub label: String,
    pub library: PathBuf,
    pub digest_bits: u32,
    /// `reference`, `optimized-avx2`, `iccs-baseline`, …
    pub variant: String,
    /// Build flag class as the harness records it (`guide`, `harness-default`, …).
    pub flags: String,
    pub kat_manifest: Option<PathBuf>,
    /// The ALGORITHM_INSTANCE spelling in KAT file names, when it differs from the label.
    pub kat_name: Option<String>,
    /// The library's calling convention (ICCS `CryptHash` unless the catalog says otherwise).
    #[serde(default, skip_serializing_if = "crate::plugin::Abi::is_iccs")]
    pub abi: crate::plugin::Abi,
}

impl Instance {
    /// The candidate id and label as file names, checked by the one naming rule. Every place
    /// that turns an instance into a path goes through this, whatever built the instance
    /// (config, `--lib`, `--scan`, a campaign.json being resumed).
    pub fn file_names(&self) -> Result<(SafeName, SafeName), NameError> {
        let candidate = SafeName::new("candidate id", &self.candidate)?;
        let label = SafeName::new("instance label", &self.label)?;
        if let Some(k) = &self.kat_name {
            SafeName::new("KAT name", k)?;
        }
        Ok((candidate, label))
    }

    /// `<candidate>/<label>`, the key the harness uses.
    pub(crate) fn key(&self) -> String {
        format!("{}/{}", self.candidate, self.label)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Catalog {
    /// The config file this came from (None for ad-hoc and scanned catalogs).
    pub source: Option<PathBuf>,
    pub settings: Settings,
    pub candidates: Vec<Candidate>,
}

#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("no instance labelled {label:?} in {source_name} (known: {known})")]
    UnknownLabel {
        label: String,
        source_name: String,
        known: String,
    },
    #[error("cannot scan {path}: {source}")]
    Scan {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no lib*.so files found under {0}")]
    NothingFound(PathBuf),
}

impl Catalog {
    pub fn instances(&self) -> impl Iterator<Item = &Instance> {
        self.candidates.iter().flat_map(|c| c.instances.iter())
    }

    pub(crate) fn find(&self, label: &str) -> Option<&Instance> {
        self.instances().find(|i| i.label == label)
    }

    /// The instances named by `labels`, in that order; every label must exist.
    pub fn select(&self, labels: &[String]) -> Result<Vec<Instance>, CatalogError> {
        labels
            .iter()
            .map(|l| {
                self.find(l)
                    .cloned()
                    .ok_or_else(|| CatalogError::UnknownLabel {
                        label: l.clone(),
                        source_name: self
                            .source
                            .as_ref()
                            .map_or("the catalog".into(), |p| p.display().to_string()),
                        known: self
                            .instances()
                            .map(|i| i.label.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                    })
            })
            .collect()
    }
}

/// Resolves `bundled:<name>` to the cdylib built next to the running executable (cargo puts
/// them in `target/<profile>/deps/`; an executable may sit in `target/<profile>/` or in its
/// `deps/`), and any other relative path against `base`.
pub(crate) fn resolve_library(spec: &str, base: &Path) -> PathBuf {
    match spec.strip_prefix(BUNDLED_PREFIX) {
        Some(name) => bundled_library(name),
        None => base.join(spec),
    }
}

/// The path of a bundled library `lib<name>.so`, searched near the executable; when none
/// exists the first candidate path is returned so the error names a sensible place.
pub fn bundled_library(name: &str) -> PathBuf {
    let file = format!("lib{name}.so");
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_default();
    let mut candidates = vec![exe_dir.join("deps").join(&file), exe_dir.join(&file)];
    if exe_dir.file_name().is_some_and(|n| n == "deps") {
        candidates.insert(0, exe_dir.join(&file));
    }
    candidates
        .iter()
        .find(|p| p.exists())
        .cloned()
        .unwrap_or_else(|| candidates[0].clone())
}

/// Shows `path` relative to the current directory when it lies below it (records and pages
/// must not carry absolute home paths).
pub fn display_path(path: &Path) -> String {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf())
        .display()
        .to_string()
}
