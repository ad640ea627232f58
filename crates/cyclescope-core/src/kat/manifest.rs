//! `kat.sha256` manifests (spec §2.4): one line per reference KAT file,
//! `<sha256> <strict|nolen>[:N] <label>/<file>`, digesting the canonical form of the file.
//! This module parses (errors name the line), looks entries up, merges and writes manifests
//! (sorted by name), and compares against reference folders. It never runs candidate code and
//! never accepts an entry path that could leave the manifest's folder.

pub(crate) mod canonical;
pub mod compare;

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

pub use canonical::{CanonicalDigest, CanonicalMode, canonical_sha256};
pub use compare::{LineComparison, compare_lines};

#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("cannot read manifest {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write manifest {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Syntax {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

/// One manifest line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestEntry {
    pub(crate) sha256: [u8; 32],
    pub(crate) mode: CanonicalMode,
    /// `:N`: the digest covers the first N `Count = ` records (PKC only; never for hashes).
    pub(crate) count: Option<u64>,
    /// `<label>/<file>` (or a bare file name).
    pub(crate) name: String,
}

impl ManifestEntry {
    /// The file name part of the entry.
    #[cfg(test)]
    fn file_name(&self) -> &str {
        self.name.rsplit('/').next().unwrap_or(&self.name)
    }

    pub(crate) fn sha256_hex(&self) -> String {
        hex::encode(self.sha256)
    }

    /// `strict`, `nolen:10`, …
    pub(crate) fn mode_text(&self) -> String {
        match self.count {
            Some(n) => format!("{}:{n}", self.mode.as_str()),
            None => self.mode.as_str().to_string(),
        }
    }

    /// The manifest line, without its newline.
    pub(crate) fn line(&self) -> String {
        format!("{} {} {}", self.sha256_hex(), self.mode_text(), self.name)
    }
}

/// A parsed manifest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    pub(crate) entries: Vec<ManifestEntry>,
}

/// Refuses names that are absolute or climb out (`..`), or are not plain relative paths.
/// A token of the manifest quoted in an error: escaped and bounded (a line may be megabytes).
fn quoted(token: &str) -> String {
    format!("\"{}\"", crate::sanitize::echo(token))
}

fn check_entry_name(name: &str) -> Result<(), String> {
    let shown = quoted(name);
    if name.is_empty() {
        return Err("missing file name".into());
    }
    if name.contains('\\') || name.contains('\0') {
        return Err(format!("file name {shown} contains a backslash or NUL"));
    }
    let path = Path::new(name);
    for c in path.components() {
        match c {
            Component::Normal(_) => {}
            Component::ParentDir => return Err(format!("file name {shown} escapes with '..'")),
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!("file name {shown} is absolute"));
            }
            Component::CurDir => return Err(format!("file name {shown} contains '.'")),
        }
    }
    Ok(())
}

fn parse_mode(word: &str) -> Result<(CanonicalMode, Option<u64>), String> {
    let (mode, count) = match word.split_once(':') {
        Some((m, n)) => {
            let n: u64 = n.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                format!(
                    "record count {} in {} is not a positive number",
                    quoted(n),
                    quoted(word)
                )
            })?;
            (m, Some(n))
        }
        None => (word, None),
    };
    let mode = match mode {
        "strict" => CanonicalMode::Strict,
        "nolen" => CanonicalMode::NoLen,
        other => {
            return Err(format!(
                "mode {} is neither strict nor nolen",
                quoted(other)
            ));
        }
    };
    Ok((mode, count))
}

fn parse_line(line: &str) -> Result<ManifestEntry, String> {
    let mut fields = line.splitn(3, [' ', '\t']);
    let (Some(sha), Some(mode), Some(name)) = (fields.next(), fields.next(), fields.next()) else {
        return Err("expected `<sha256> <strict|nolen>[:N] <label>/<file>`".into());
    };
    let mut sha256 = [0u8; 32];
    if sha.len() != 64 || hex::decode_to_slice(sha, &mut sha256).is_err() {
        return Err(format!("{} is not a SHA-256 (64 hex digits)", quoted(sha)));
    }
    let (mode, count) = parse_mode(mode)?;
    let name = name.trim();
    check_entry_name(name)?;
    Ok(ManifestEntry {
        sha256,
        mode,
        count,
        name: name.to_string(),
    })
}

impl Manifest {
    /// Parses manifest text; `path` only names the file in errors. Blank lines and `#`
    /// comments are skipped.
    pub(crate) fn parse(text: &str, path: &Path) -> Result<Self, ManifestError> {
        let mut entries: Vec<ManifestEntry> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let syntax = |message: String| ManifestError::Syntax {
                path: path.to_path_buf(),
                line: i + 1,
                message,
            };
            let entry = parse_line(line).map_err(syntax)?;
            if entries.iter().any(|e| e.name == entry.name) {
                return Err(syntax(format!("{} is listed twice", entry.name)));
            }
            entries.push(entry);
        }
        Ok(Self { entries })
    }

    pub fn load(path: &Path) -> Result<Self, ManifestError> {
        let text = std::fs::read_to_string(path).map_err(|source| ManifestError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// The entry for `file` of instance `label`: keyed `<label>/<file>`, else bare `<file>`.
    pub(crate) fn lookup(&self, label: &str, file: &str) -> Option<&ManifestEntry> {
        let keyed = format!("{label}/{file}");
        self.entries
            .iter()
            .find(|e| e.name == keyed)
            .or_else(|| self.entries.iter().find(|e| e.name == file))
    }

    /// The manifest's label closest to `label` by edit distance (case ignored), when it is
    /// near enough to be a likely typo: at most a third of the label's length, at least 1.
    /// None when `label` itself has entries.
    pub fn nearest_label(&self, label: &str) -> Option<&str> {
        let labels = self
            .entries
            .iter()
            .filter_map(|e| e.name.split_once('/').map(|(l, _)| l));
        if labels.clone().any(|l| l == label) {
            return None;
        }
        let wanted = label.to_lowercase();
        let (dist, best) = labels
            .map(|l| (strsim::levenshtein(&wanted, &l.to_lowercase()), l))
            .min_by_key(|&(d, l)| (d, l.len()))?;
        (dist <= (label.chars().count() / 3).max(1)).then_some(best)
    }

    /// Adds entries, replacing those of the same name.
    pub fn merge(&mut self, entries: impl IntoIterator<Item = ManifestEntry>) {
        for e in entries {
            match self.entries.iter_mut().find(|x| x.name == e.name) {
                Some(x) => *x = e,
                None => self.entries.push(e),
            }
        }
    }

    /// The manifest text, sorted by name.
    pub(crate) fn to_text(&self) -> String {
        let mut sorted: Vec<&ManifestEntry> = self.entries.iter().collect();
        sorted.sort_by(|a, b| a.name.cmp(&b.name));
        let mut out = String::new();
        for e in sorted {
            let _ = writeln!(out, "{}", e.line());
        }
        out
    }

    /// Writes the manifest (sorted) through a temporary file and a rename.
    pub fn write(&self, path: &Path) -> Result<(), ManifestError> {
        let err = |source| ManifestError::Write {
            path: path.to_path_buf(),
            source,
        };
        // A fresh temporary file (a planted `.tmp` link is removed, not followed).
        crate::record::pyjson::write_atomic(path, self.to_text().as_bytes()).map_err(err)
    }
}

/// The manifest entry for a trusted reference KAT file: `nolen` when it has a blank
/// `X_Len =` line (template mode), else `strict`.
pub(crate) fn entry_for_reference(text: &[u8], name: String) -> ManifestEntry {
    let mode = if text
        .split(|&b| b == b'\n')
        .any(canonical::is_blank_len_line)
    {
        CanonicalMode::NoLen
    } else {
        CanonicalMode::Strict
    };
    ManifestEntry {
        sha256: canonical_sha256(text, mode),
        mode,
        count: None,
        name,
    }
}

/// The reference file for `file` of instance `label` in a `--kat-dir`: `<dir>/<label>/<file>`,
/// else `<dir>/<instance>/<file>` (the instance the file name names), else `<dir>/<file>`.
pub(crate) fn find_reference(dir: &Path, label: &str, file: &str) -> Option<PathBuf> {
    // A submission's KAT folder is named by the instance its files name (`KAT/FIXH-256/`),
    // which an optimized variant's label (`FIXH-256-opt`) is not.
    let instance = ["KAT_2_12_", "KAT_2_23_", "KAT_2_33_", "KAT_Loop_"]
        .iter()
        .find_map(|p| file.strip_prefix(p))
        .and_then(|rest| rest.strip_suffix(".txt"))
        .filter(|i| !i.is_empty() && *i != label && !i.contains('/'));
    std::iter::once(dir.join(label).join(file))
        .chain(instance.map(|i| dir.join(i).join(file)))
        .chain(std::iter::once(dir.join(file)))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests;
