//! Which instances a command works on: labels from the catalog (`config.toml` or `--config`),
//! one ad-hoc library (`--lib`), or every library under a folder (`--scan`). Shared by every
//! command that takes instances.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Args;

use crate::catalog::{self, Catalog, Instance};
use crate::cli::worker_cmd;

/// The default catalog compiled in, used when there is no `config.toml` in the working folder.
const EMBEDDED_CONFIG: &str = include_str!("../../config.toml");

#[derive(Debug, Clone, Args, Default)]
pub struct InstanceArgs {
    /// Instance labels from the catalog (e.g. pseudoXOF-512 sm3hash-256).
    #[arg(value_name = "LABEL")]
    pub labels: Vec<String>,
    /// An ad-hoc library exporting CryptHash (or crypto_hash with --abi supercop), measured
    /// without any config.
    #[arg(long, value_name = "PATH", conflicts_with = "scan")]
    pub lib: Option<PathBuf>,
    /// Label of the --lib instance (default: ngcc_meta instance, else the file name).
    #[arg(long, requires = "lib", value_parser = super::arg_value::name)]
    pub label: Option<String>,
    /// Digest width of the --lib instance (default: ngcc_meta, else the label's number; for
    /// a SUPERCOP library, its crypto_hash_BYTES × 8).
    #[arg(long, requires = "lib", value_parser = super::arg_value::digest_bits)]
    pub digest_bits: Option<u32>,
    /// What the --lib library exports: `iccs` (CryptHash) or `supercop` (crypto_hash).
    #[arg(long, requires = "lib", value_enum, default_value_t = AbiArg::Iccs)]
    pub abi: AbiArg,
    /// Discover every lib*.so under DIR (an ngcc-harness tree works as is).
    #[arg(long, value_name = "DIR")]
    pub scan: Option<PathBuf>,
}

/// `--abi` on the command line (the core's [`Abi`](crate::plugin::Abi), as clap values).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum AbiArg {
    #[default]
    Iccs,
    Supercop,
}

impl From<AbiArg> for crate::plugin::Abi {
    fn from(a: AbiArg) -> Self {
        match a {
            AbiArg::Iccs => crate::plugin::Abi::Iccs,
            AbiArg::Supercop => crate::plugin::Abi::Supercop,
        }
    }
}

/// Loads the catalog a command runs on: `--config`, else `./config.toml`, else the embedded one.
pub fn load_catalog(config: Option<&Path>) -> anyhow::Result<Catalog> {
    if let Some(path) = config {
        return Ok(catalog::load_config(path)?);
    }
    let local = Path::new("config.toml");
    if local.is_file() {
        return Ok(catalog::load_config(local)?);
    }
    Ok(catalog::parse_config(
        EMBEDDED_CONFIG,
        Path::new("<embedded config.toml>"),
        Path::new("."),
    )?)
}

impl InstanceArgs {
    /// The catalog these arguments describe, and the selected instances (all of them when no
    /// label is given and `all_by_default`).
    pub fn resolve(
        &self,
        config: Option<&Path>,
        all_by_default: bool,
    ) -> anyhow::Result<(Catalog, Vec<Instance>)> {
        let catalog = if let Some(lib) = &self.lib {
            let meta = worker_cmd::probe_abi(lib, self.abi.into()).map_err(anyhow::Error::msg)?;
            let mut inst = catalog::adhoc_instance(
                lib,
                self.label.as_deref(),
                self.digest_bits,
                meta.as_ref(),
            )
            .map_err(anyhow::Error::msg)?;
            inst.abi = self.abi.into();
            let mut base = load_catalog(config).unwrap_or_else(|_| Catalog {
                source: None,
                settings: Default::default(),
                candidates: vec![],
            });
            base.candidates = vec![catalog::Candidate {
                id: inst.candidate.clone(),
                algorithm: inst.algorithm.clone(),
                instances: vec![inst],
            }];
            base.source = None;
            base
        } else if let Some(dir) = &self.scan {
            let (mut found, skipped) = catalog::scan_dir(dir, worker_cmd::probe)
                .with_context(|| format!("scanning {}", dir.display()))?;
            for s in skipped {
                eprintln!("cyclescope: skipped {s}");
            }
            if let Ok(base) = load_catalog(config) {
                found.settings = base.settings;
            }
            found
        } else {
            load_catalog(config)?
        };
        let selected = if self.labels.is_empty() {
            if !all_by_default && self.lib.is_none() {
                bail!("name at least one instance label (see `cyclescope list`)");
            }
            catalog.instances().cloned().collect()
        } else {
            catalog.select(&self.labels)?
        };
        Ok((catalog, selected))
    }
}
