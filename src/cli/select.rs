//! Which instances a command works on: labels from the catalog (`config.toml` or `--config`),
//! one ad-hoc library (`--lib`), every library under a folder (`--scan`), or the instances of
//! a submission's sources, built first (`--src`). Shared by every command that takes instances.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Args;

use crate::catalog::{self, Catalog, Instance, OnClash};
use crate::cli::worker_cmd;

/// The default catalog compiled in, used when there is no `config.toml` in the working folder.
const EMBEDDED_CONFIG: &str = include_str!("../../config.toml");

/// Where instances come from besides the catalog file: one ad-hoc library, a scanned folder or
/// a submission's sources built first, with the bundled baselines beside them. Shared by the subcommands and the workbench.
#[derive(Debug, Clone, Args, Default, PartialEq)]
pub struct SourceArgs {
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
    /// How the --lib library was built, in your words (`gcc 13 -O3 -march=native`): the
    /// records, tables and pages say this instead of `unknown` (cyclescope did not build it).
    #[arg(
        long,
        requires = "lib",
        value_name = "TEXT",
        allow_hyphen_values = true,
        value_parser = super::arg_value::flags_note
    )]
    pub flags_note: Option<String>,
    /// What the --lib library exports: `iccs` (CryptHash) or `supercop` (crypto_hash).
    #[arg(long, requires = "lib", value_enum, default_value_t = AbiArg::Iccs)]
    pub abi: AbiArg,
    /// Discover every lib*.so under DIR (an ngcc-harness tree works as is).
    #[arg(long, value_name = "DIR")]
    pub scan: Option<PathBuf>,
    /// Build the instances of a submission source tree first (into the build cache), then use
    /// them.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["lib", "scan"])]
    pub src: Option<PathBuf>,
    /// Candidate id of the --src instances (default: the config's [[submission]], else the
    /// folder name).
    #[arg(long, requires = "src", value_parser = super::arg_value::name)]
    pub id: Option<String>,
    /// Flag profile of the --src build: guide (default), harness-default, or one of [profiles].
    #[arg(long, requires = "src", value_name = "NAME", conflicts_with = "cflags")]
    pub profile: Option<String>,
    /// Compiler flags of the --src build instead of a profile.
    #[arg(
        long,
        requires = "src",
        value_name = "FLAGS",
        allow_hyphen_values = true
    )]
    pub cflags: Option<String>,
    /// C compiler of the --src build (default: [build] cc, else cc).
    #[arg(long, requires = "src", value_name = "CC")]
    pub cc: Option<String>,
    /// Leave the bundled ICCS baselines out of the catalog (as `bundled_baselines = false`).
    #[arg(long)]
    pub no_baselines: bool,
    #[command(flatten)]
    pub kat_refs: super::kat_refs::KatRefArgs,
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

/// The config file a command reads: `--config`, else `./config.toml` when it exists, else none
/// (the embedded catalog, no build settings).
pub fn config_path(config: Option<&Path>) -> Option<PathBuf> {
    match config {
        Some(p) => Some(p.to_path_buf()),
        None => Some(PathBuf::from("config.toml")).filter(|p| p.is_file()),
    }
}

#[derive(Debug, Clone, Args, Default)]
pub struct InstanceArgs {
    /// Instance labels from the catalog (e.g. pseudoXOF-512 sm3hash-256).
    #[arg(value_name = "LABEL")]
    pub labels: Vec<String>,
    #[command(flatten)]
    pub source: SourceArgs,
}

/// Loads the catalog a command runs on: `--config`, else `./config.toml`, else the embedded
/// settings; the bundled baselines beside its instances unless its settings turn them off.
pub fn load_catalog(config: Option<&Path>) -> anyhow::Result<Catalog> {
    let mut catalog = load_own(config)?;
    catalog.add_baselines(OnClash::Refuse)?;
    Ok(catalog)
}

/// The catalog file alone, without the bundled baselines.
fn load_own(config: Option<&Path>) -> anyhow::Result<Catalog> {
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

impl SourceArgs {
    /// The catalog these arguments describe, and the labels of the instances `--lib`,
    /// `--scan` or `--src` brought (empty for a catalog file): the catalog file's instances or those,
    /// with the bundled baselines beside them.
    pub fn catalog(&self, config: Option<&Path>) -> anyhow::Result<(Catalog, Vec<String>)> {
        let (mut catalog, on_clash) = if let Some(lib) = &self.lib {
            let meta = worker_cmd::probe_abi(lib, self.abi.into()).map_err(anyhow::Error::msg)?;
            let mut inst = catalog::adhoc_instance(
                lib,
                self.label.as_deref(),
                self.digest_bits,
                meta.as_ref(),
            )
            .map_err(anyhow::Error::msg)?;
            inst.abi = self.abi.into();
            if let Some(note) = &self.flags_note {
                inst.flags = note.clone();
            }
            let mut base = load_own(config).unwrap_or_else(|_| Catalog {
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
            (base, OnClash::PreferOwn)
        } else if let Some(dir) = self.scan.clone().map(Ok).or_else(|| {
            self.src
                .as_ref()
                .map(|src| super::build::src_tree(self, src, config))
        }) {
            let dir = dir?;
            let (mut found, skipped) = catalog::scan_dir(&dir, worker_cmd::probe)
                .with_context(|| format!("scanning {}", dir.display()))?;
            for s in skipped {
                eprintln!("cyclescope: skipped {}", crate::sanitize::terminal(&s));
            }
            if let Ok(base) = load_own(config) {
                found.settings = base.settings;
            }
            (found, OnClash::PreferOwn)
        } else {
            (load_own(config)?, OnClash::Refuse)
        };
        let own: Vec<String> = if on_clash == OnClash::PreferOwn {
            catalog.instances().map(|i| i.label.clone()).collect()
        } else {
            Vec::new()
        };
        self.kat_refs.check()?;
        // What --lib, --scan or --src brought is checked against them (before the baselines
        // join, which keep their own).
        if on_clash == OnClash::PreferOwn {
            for c in &mut catalog.candidates {
                for i in &mut c.instances {
                    self.kat_refs.apply(i);
                }
            }
        }
        if self.no_baselines {
            catalog.settings.bundled_baselines = false;
        }
        let left_out = catalog.add_baselines(on_clash)?;
        if !left_out.is_empty() {
            eprintln!(
                "cyclescope: bundled baseline {} left out: {} brings an instance of that label",
                left_out.join(", "),
                if self.lib.is_some() {
                    "--lib"
                } else if self.src.is_some() {
                    "--src"
                } else {
                    "--scan"
                }
            );
        }
        // The C baselines come after the bundled ones: they share their labels on purpose
        // (`iccs-c/pseudoXOF-512`), so the bundled set must not take them for a clash. They
        // stand beside `--lib`, `--scan` and `--src` instances too (`--baseline iccs-c`).
        super::build::add_iccs_c(&mut catalog, config)?;
        Ok((catalog, own))
    }
}

impl InstanceArgs {
    /// The catalog these arguments describe, and the selected instances: the labels named
    /// (after the `--lib` instance, when there is one); with no label, what `--lib`, `--scan`
    /// or `--src` brought, else the whole catalog when `all_by_default`.
    pub fn resolve(
        &self,
        config: Option<&Path>,
        all_by_default: bool,
    ) -> anyhow::Result<(Catalog, Vec<Instance>)> {
        let (catalog, own) = self.source.catalog(config)?;
        let mut labels = if self.source.lib.is_some() || self.labels.is_empty() {
            own
        } else {
            Vec::new()
        };
        for l in &self.labels {
            if !labels.contains(l) {
                labels.push(l.clone());
            }
        }
        let selected = if labels.is_empty() {
            if !all_by_default {
                bail!("name at least one instance label (see `cyclescope list`)");
            }
            catalog.instances().cloned().collect()
        } else {
            catalog.select(&labels)?
        };
        let mut selected = selected;
        // Labels named from a catalog file take the references given for them.
        if self.source.lib.is_none() && self.source.scan.is_none() && self.source.src.is_none() {
            for i in selected
                .iter_mut()
                .filter(|i| self.labels.contains(&i.label))
            {
                self.source.kat_refs.apply(i);
            }
        }
        Ok((catalog, selected))
    }
}
