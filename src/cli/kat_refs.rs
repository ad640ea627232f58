//! What the KAT of the instances a command brings is checked against: a `kat.sha256` manifest
//! (`--manifest`) and a folder of reference KAT files (`--kat-dir`, compared line by line
//! where the manifest has no entry), the two references `kat` reads. One argument group,
//! flattened into every command that takes instances (`run`, `build`, `list`, `kat`,
//! `compare --live`, the workbench), checked and applied to instances here only.

use std::path::PathBuf;

use anyhow::bail;
use clap::Args;

use crate::catalog::Instance;

#[derive(Debug, Clone, Args, Default, PartialEq)]
pub struct KatRefArgs {
    /// kat.sha256 manifest the KAT checks these instances against: those `--lib`, `--scan` or
    /// `--src` bring, else the labels named (default: the catalog's kat_manifest; `build`
    /// writes it into the tree's manifests).
    #[arg(long, value_name = "FILE")]
    pub manifest: Option<PathBuf>,
    /// Folder of reference KAT files (`KAT_2_12_<name>.txt`, … at DIR/<label>/ or DIR/),
    /// compared line by line where the manifest has no entry (`build`: digested into the
    /// tree's manifests as shipped KAT files are).
    #[arg(long, value_name = "DIR")]
    pub kat_dir: Option<PathBuf>,
}

impl KatRefArgs {
    /// Refuses a manifest that is not a file or does not parse, before anything is built or run;
    /// a KAT folder that is not there is said loudly (its files are then NOKAT, as `kat` has
    /// always judged a reference folder not written yet).
    pub fn check(&self) -> anyhow::Result<()> {
        if let Some(m) = &self.manifest
            && !m.is_file()
        {
            bail!(
                "--manifest {}: no such file (a kat.sha256 manifest, as `cyclescope kat --write-manifest` writes)",
                crate::sanitize::path_as_given(m)
            );
        }
        // A manifest that does not parse is refused here too, in `kat`'s words, so no command
        // (the workbench included) starts and later blames the library for it.
        if let Some(m) = &self.manifest {
            crate::kat::Manifest::load(m)?;
        }
        if let Some(d) = &self.kat_dir
            && !d.is_dir()
        {
            eprintln!(
                "cyclescope: WARNING: --kat-dir {}: no such folder (reference KAT files, KAT_2_12_<name>.txt and the others, in DIR/<label>/ or DIR/): a file it should hold is NOKAT",
                crate::sanitize::path_as_given(d)
            );
        }
        Ok(())
    }

    /// Gives `inst` the references given (those not given leave its own).
    pub fn apply(&self, inst: &mut Instance) {
        if let Some(m) = &self.manifest {
            inst.kat_manifest = Some(m.clone());
        }
        if let Some(d) = &self.kat_dir {
            inst.kat_dir = Some(d.clone());
        }
    }
}
