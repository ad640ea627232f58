//! Finding the instances of a submission tree: every folder holding
//! `CryptHash_AlgorithmInstance.h` is one. Its header gives `ALGORITHM_INSTANCE` and
//! `DIGEST_BIT_LENGTH`, its path the variant (`Reference_Implementation`,
//! `Optimized_Implementation`, else the folder below the root), `--id` or the config the
//! candidate (else the tree's folder name). Labels are the instance name for the reference
//! variant and `<instance>-opt` (or `-<variant>`) for the others, so both variants of one
//! instance can sit in one tree. It reads files only; nothing here compiles.

use std::path::{Path, PathBuf};

use super::config::SubmissionSettings;
use super::shipped_kat::ShippedKats;
use super::{BuildConfig, BuildError, header, links, sources};
use crate::name::SafeName;

/// The header that makes a folder an instance.
pub(crate) const INSTANCE_HEADER: &str = "CryptHash_AlgorithmInstance.h";
const REFERENCE: &str = "Reference_Implementation";
const OPTIMIZED: &str = "Optimized_Implementation";
/// How deep below the root instance folders are looked for.
const MAX_DEPTH: usize = 8;

/// One instance folder, ready to compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceSource {
    pub candidate: String,
    pub algorithm: String,
    /// `ALGORITHM_INSTANCE`.
    pub instance: String,
    /// The label in the tree and the catalog (`lib<label>.so`).
    pub label: String,
    pub digest_bits: u32,
    /// `Reference_Implementation`, `Optimized_Implementation` or a folder name (`ngcc_meta`).
    pub variant: String,
    /// The instance folder.
    pub folder: PathBuf,
    /// The submission's root (canonical): the compiler may read beneath it.
    pub tree: PathBuf,
    /// The folder as shown in metadata: relative to the tree's parent (no machine paths).
    pub source_dir: String,
    pub sources: Vec<PathBuf>,
    pub include_dirs: Vec<PathBuf>,
    /// The submission's own KAT files for this instance, nearest copy first per file.
    pub shipped_kat: Vec<PathBuf>,
    /// Known `kat.sha256` lines for this instance besides its shipped files (the bundled
    /// baseline manifest for `iccs-c`).
    pub manifest_lines: Vec<String>,
}

impl InstanceSource {
    /// `reference`, `optimized` or the variant folder, as records say it.
    pub fn record_variant(&self) -> String {
        match self.variant.as_str() {
            REFERENCE => "reference".into(),
            OPTIMIZED => "optimized".into(),
            other => other.to_string(),
        }
    }

    /// The folders the compiler may read for this instance: the tree, the instance folder,
    /// the include folders and the folders of its sources.
    pub(crate) fn readable(&self) -> Vec<PathBuf> {
        let mut dirs = vec![self.tree.clone(), self.folder.clone()];
        dirs.extend(self.include_dirs.iter().cloned());
        dirs.extend(
            self.sources
                .iter()
                .filter_map(|s| s.parent().map(Path::to_path_buf)),
        );
        dirs.sort();
        dirs.dedup();
        dirs
    }

    /// `path` (below the tree) shown like `source_dir`: relative to the tree's parent.
    pub(crate) fn source_dir_of(&self, path: &Path) -> String {
        let depth = Path::new(&self.source_dir).components().count();
        let base = self.folder.ancestors().nth(depth).unwrap_or(Path::new(""));
        shown(path, base)
    }
}

/// A folder that looked like an instance but cannot be built, and why.
pub type Unusable = (PathBuf, BuildError);

/// The instances under `src` (a submission tree, or one instance folder). Folders whose
/// header or sources are unusable come back in the second list; the others are still found.
pub fn discover(
    src: &Path,
    id: Option<&str>,
    config: &BuildConfig,
) -> Result<(Vec<InstanceSource>, Vec<Unusable>), BuildError> {
    if !src.is_dir() {
        return Err(BuildError::NoSuchSource(src.to_path_buf()));
    }
    // Absolute from here on: the compiler runs elsewhere, and metadata shows paths relative
    // to the tree's real parent.
    let src = &std::fs::canonicalize(src).map_err(|source| BuildError::Read {
        path: src.to_path_buf(),
        source,
    })?;
    let settings = config.submission_for(src, id);
    let tree_name = folder_name(src);
    let candidate = id
        .map(str::to_string)
        .or_else(|| settings.map(|s| s.id.clone()))
        .unwrap_or_else(|| tree_name.clone());
    SafeName::new("candidate id", &candidate).map_err(|source| BuildError::BadName {
        folder: src.to_path_buf(),
        source,
    })?;
    let algorithm = settings
        .and_then(|s| s.algorithm.clone())
        .unwrap_or_else(|| tree_name.clone());
    let mut folders = Vec::new();
    walk(src, 0, &mut folders)?;
    if folders.is_empty() {
        return Err(BuildError::NoInstances(src.to_path_buf()));
    }
    folders.sort();
    check_overrides(settings, src, &folders, &candidate)?;
    let kats = ShippedKats::index(src);
    // Links out of the tree anywhere the compiler could be sent (`#include "../x/y.h"`).
    let outward = links::outward_links(src);
    let shown_base = src.parent().unwrap_or(Path::new(""));
    let mut found = Vec::new();
    let mut unusable = Vec::new();
    for folder in folders {
        let one = || -> Result<InstanceSource, BuildError> {
            // Before anything reads a file of the folder (its header too).
            links::check_folder(src, &folder)?;
            let facts = header::read(&folder.join(INSTANCE_HEADER))?;
            let set = sources::select(&folder, src, &facts.instance, settings)?;
            links::check_sources(src, &set.files, &set.include_dirs)?;
            if let Some(e) = outward.first() {
                return Err(e.refusal());
            }
            let variant = variant_of(&folder, src);
            let label = label_for(&facts.instance, &variant);
            SafeName::new("instance label", &label).map_err(|source| BuildError::BadName {
                folder: folder.clone(),
                source,
            })?;
            Ok(InstanceSource {
                candidate: candidate.clone(),
                algorithm: algorithm.clone(),
                shipped_kat: kats.for_instance(&facts.instance, &folder),
                label,
                instance: facts.instance,
                digest_bits: facts.digest_bits,
                variant,
                source_dir: shown(&folder, shown_base),
                sources: set.files,
                include_dirs: set.include_dirs,
                manifest_lines: Vec::new(),
                folder: folder.clone(),
                tree: src.clone(),
            })
        };
        match one() {
            Ok(i) => found.push(i),
            Err(e) => unusable.push((folder.clone(), e)),
        }
    }
    Ok((found, unusable))
}

/// Keeps the first instance of each label; later ones are unusable (two folders would write
/// the same library).
pub(crate) fn unique_labels(found: Vec<InstanceSource>) -> (Vec<InstanceSource>, Vec<Unusable>) {
    let mut keep: Vec<InstanceSource> = Vec::new();
    let mut dropped = Vec::new();
    for i in found {
        match keep.iter().find(|k| k.label == i.label) {
            Some(first) => {
                let e = BuildError::DuplicateLabel {
                    label: i.label.clone(),
                    first: first.folder.clone(),
                    second: i.folder.clone(),
                };
                dropped.push((i.folder, e));
            }
            None => keep.push(i),
        }
    }
    (keep, dropped)
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> Result<(), BuildError> {
    if dir.join(INSTANCE_HEADER).is_file() {
        out.push(dir.to_path_buf());
    }
    if depth >= MAX_DEPTH {
        return Ok(());
    }
    let entries = std::fs::read_dir(dir).map_err(|source| BuildError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    for entry in entries.flatten() {
        let path = entry.path();
        // Symbolic links to folders are not followed: a submission's link could loop or
        // leave the tree.
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            walk(&path, depth + 1, out)?;
        }
    }
    Ok(())
}

/// Instance entries of the config must name a folder that exists: a typo would otherwise
/// silently build with the candidate's defaults.
fn check_overrides(
    settings: Option<&SubmissionSettings>,
    root: &Path,
    folders: &[PathBuf],
    id: &str,
) -> Result<(), BuildError> {
    let Some(s) = settings else { return Ok(()) };
    for o in &s.instances {
        let known = folders.iter().any(|f| {
            f.strip_prefix(root).is_ok_and(|r| r == Path::new(&o.name))
                || header::read(&f.join(INSTANCE_HEADER)).is_ok_and(|h| h.instance == o.name)
        });
        if !known {
            return Err(BuildError::UnknownOverride {
                id: id.to_string(),
                name: o.name.clone(),
            });
        }
    }
    Ok(())
}

/// `Reference_Implementation` or `Optimized_Implementation` when the path below the root
/// names one, else the first folder below the root; an instance at the root is the reference.
fn variant_of(folder: &Path, root: &Path) -> String {
    let rel = folder.strip_prefix(root).unwrap_or(folder);
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if let Some(v) = parts.iter().find(|p| *p == REFERENCE || *p == OPTIMIZED) {
        return v.clone();
    }
    match parts.as_slice() {
        [] | [_] => REFERENCE.into(),
        [first, ..] => first.clone(),
    }
}

fn label_for(instance: &str, variant: &str) -> String {
    match variant {
        REFERENCE => instance.to_string(),
        OPTIMIZED => format!("{instance}-opt"),
        other => format!("{instance}-{other}"),
    }
}

fn folder_name(path: &Path) -> String {
    std::fs::canonicalize(path)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "submission".into())
}

fn shown(folder: &Path, base: &Path) -> String {
    folder
        .strip_prefix(base)
        .unwrap_or(folder)
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_and_labels_come_from_the_path() {
        let root = Path::new("/t/sub");
        for (folder, variant, label) in [
            ("/t/sub/Reference_Implementation/A-256", REFERENCE, "A-256"),
            (
                "/t/sub/Optimized_Implementation/A-256",
                OPTIMIZED,
                "A-256-opt",
            ),
            (
                "/t/sub/x/Optimized_Implementation/w/A-256",
                OPTIMIZED,
                "A-256-opt",
            ),
            ("/t/sub/AVX2/A-256", "AVX2", "A-256-AVX2"),
            ("/t/sub/A-256", REFERENCE, "A-256"),
            ("/t/sub", REFERENCE, "A-256"),
        ] {
            let v = variant_of(Path::new(folder), root);
            assert_eq!(v, variant, "{folder}");
            assert_eq!(label_for("A-256", &v), label, "{folder}");
        }
    }
}
