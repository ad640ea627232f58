//! The catalog: candidates (an NGCC id such as `hash-10` or `iccs`) and their instances
//! (parameter sets: label, library, digest width, KAT manifest), plus the measurement settings.
//! Built from `config.toml`, from an ad-hoc `--lib`, or by scanning a folder, with the bundled
//! ICCS baselines beside them. It resolves paths but never loads a library itself (listing asks
//! `plugin` for that).

pub mod bounds;
pub mod bundled;
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

/// The build flag class of a library cyclescope did not build and no one described (`--lib`,
/// a `--scan` outside a tree with a build.json): how it was compiled is not known, whatever
/// compiler flags its own metadata claims (the records keep those in `build_flags`).
pub const UNKNOWN_FLAGS: &str = "unknown";

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
    /// Build flag class as the harness records it (`guide`, `harness-default`, …), `unknown`
    /// for a library built elsewhere, or what the user said of it (`--flags-note`).
    pub flags: String,
    pub kat_manifest: Option<PathBuf>,
    /// The ALGORITHM_INSTANCE spelling in KAT file names, when it differs from the label.
    pub kat_name: Option<String>,
    /// The library's calling convention (ICCS `CryptHash` unless the catalog says otherwise).
    #[serde(default, skip_serializing_if = "crate::plugin::Abi::is_iccs")]
    pub abi: crate::plugin::Abi,
    /// The label of a second implementation of this instance, for the `differential`
    /// conformance check (config `oracle = "LABEL"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oracle: Option<String>,
    /// A folder of reference KAT files (`--kat-dir`) the KAT compares this instance's output
    /// with, line by line, where its manifest has no entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kat_dir: Option<PathBuf>,
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
    #[error(
        "instance {label:?} of {source_name} has the label of a bundled baseline but another library or width; rename it, or set `bundled_baselines = false` in [settings]"
    )]
    BaselineClash { label: String, source_name: String },
}

/// What to do when a bundled baseline's label is already in the catalog with another library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnClash {
    /// A config file: refuse, naming the label (the file is the place to fix it).
    Refuse,
    /// `--lib` / `--scan`: the library the user named on this command line wins and the
    /// baseline of that label is left out (the caller says so).
    PreferOwn,
}

impl Catalog {
    pub fn instances(&self) -> impl Iterator<Item = &Instance> {
        self.candidates.iter().flat_map(|c| c.instances.iter())
    }

    /// The instance labelled `label`, or `<candidate>/<label>` when two candidates share a
    /// label (the bundled `iccs` and the C `iccs-c` baselines do).
    /// Adds the bundled ICCS baselines beside the catalog's own instances, unless
    /// `settings.bundled_baselines` is off. An instance with a baseline's label, library and
    /// width already is that baseline (an older config listing them) and stays as written.
    /// Returns the labels of baselines left out because of a clash (`OnClash::PreferOwn`).
    pub fn add_baselines(&mut self, on_clash: OnClash) -> Result<Vec<String>, CatalogError> {
        if !self.settings.bundled_baselines {
            return Ok(Vec::new());
        }
        let baselines = parse_config(
            bundled::BASELINES_TOML,
            Path::new("<bundled baselines>"),
            Path::new("."),
        )?;
        let mut left_out = Vec::new();
        for cand in baselines.candidates {
            let mut keep = Vec::new();
            for b in cand.instances {
                match self.find(&b.label) {
                    None => keep.push(b),
                    Some(own) if own.library == b.library && own.digest_bits == b.digest_bits => {}
                    Some(_) if on_clash == OnClash::PreferOwn => left_out.push(b.label),
                    Some(_) => {
                        return Err(CatalogError::BaselineClash {
                            label: b.label,
                            source_name: self.source_name(),
                        });
                    }
                }
            }
            match self.candidates.iter_mut().find(|c| c.id == cand.id) {
                Some(c) => c.instances.extend(keep),
                None if !keep.is_empty() => self.candidates.push(Candidate {
                    instances: keep,
                    ..cand
                }),
                None => {}
            }
        }
        Ok(left_out)
    }

    fn source_name(&self) -> String {
        self.source
            .as_ref()
            .map_or("the catalog".into(), |p| p.display().to_string())
    }

    pub(crate) fn find(&self, label: &str) -> Option<&Instance> {
        match label.split_once('/') {
            Some((cand, l)) => self
                .instances()
                .find(|i| i.candidate == cand && i.label == l),
            None => self.instances().find(|i| i.label == label),
        }
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
                        source_name: self.source_name(),
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

/// Resolves `bundled:<name>` to the cached copy of the library this binary carries, and any
/// other relative path against `base`.
pub(crate) fn resolve_library(spec: &str, base: &Path) -> Result<PathBuf, bundled::BundledError> {
    match spec.strip_prefix(BUNDLED_PREFIX) {
        Some(name) => bundled::library(name),
        None => Ok(base.join(spec)),
    }
}

/// Resolves a KAT manifest: `bundled:<name>` is the manifest this binary carries.
pub(crate) fn resolve_manifest(spec: &str, base: &Path) -> Result<PathBuf, bundled::BundledError> {
    match spec.strip_prefix(BUNDLED_PREFIX) {
        Some(name) => bundled::kat_manifest(name),
        None => Ok(base.join(spec)),
    }
}

/// The path of library `lib<name>.so`: a bundled baseline's cached copy, else (the test
/// fixtures `faulty` and `nosym`, which Cargo builds) searched near the executable; when none
/// exists the first candidate path is returned so the error names a sensible place.
pub fn bundled_library(name: &str) -> PathBuf {
    if let Some(Ok(path)) = bundled::is_library(name).then(|| bundled::library(name)) {
        return path;
    }
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

/// Shows `path` relative to the current directory when it lies below it, else below the home
/// folder as `~/…` (records and pages must not carry absolute home paths; the bundled
/// libraries' cache lives there).
pub fn display_path(path: &Path) -> String {
    // Relative to `/` would read like a path below the working folder of someone else.
    let cwd = std::env::current_dir()
        .ok()
        .filter(|c| c.parent().is_some());
    if let Some(rel) = cwd.and_then(|c| path.strip_prefix(c).ok().map(Path::to_path_buf)) {
        return rel.display().to_string();
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute() && h.parent().is_some());
    match home.and_then(|h| path.strip_prefix(h).ok().map(Path::to_path_buf)) {
        Some(rel) => format!("~/{}", rel.display()),
        None => path.display().to_string(),
    }
}

/// The path `display_path` showed as `~/…`, back below the home folder (a campaign.json
/// being resumed names the bundled libraries' cache that way).
pub fn expand_home(path: &Path) -> PathBuf {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty());
    match (path.strip_prefix("~"), home) {
        (Ok(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests;
