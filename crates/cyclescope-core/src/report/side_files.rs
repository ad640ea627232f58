//! The side files a harness tree publishes next to its datasets (`performance/systems.csv`,
//! `kat_issues.csv`, `summary_notes.csv`) and the `ID;Algorithm;URL` candidate list. Owns
//! parsing them (`;`-separated, `#` comments, a header line). A missing file is an empty
//! table: cyclescope's own runs have none. Never reads records or renders anything.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use regex::Regex;

use super::dataset::ReportError;

/// A row of `systems.csv`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct System {
    pub id: String,
    pub(crate) arch: String,
    pub(crate) hostname: String,
    pub(crate) description: String,
}

/// A row of `kat_issues.csv` or `summary_notes.csv`: a candidate, a label pattern, and text
/// (for KAT issues, `action` is `measure` or `exclude`).
#[derive(Debug, Clone)]
pub(crate) struct LabelNote {
    pub(crate) candidate: String,
    pub label: Regex,
    pub(crate) text: String,
}

impl LabelNote {
    pub(crate) fn applies(&self, candidate: &str, label: &str) -> bool {
        self.candidate == candidate && self.label.is_match(label)
    }
}

/// A candidate's published name and NICCS page.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CandidateInfo {
    pub(crate) algorithm: String,
    pub(crate) url: String,
}

/// The side files of one harness tree (all empty when there is none).
#[derive(Debug, Clone, Default)]
pub(crate) struct SideFiles {
    pub(crate) systems: Vec<System>,
    pub(crate) kat_issues: Vec<LabelNote>,
    pub(crate) summary_notes: Vec<LabelNote>,
}

impl SideFiles {
    /// Reads the side files of `dir` (`None`: no side files).
    pub(crate) fn read(dir: Option<&Path>) -> Result<Self, ReportError> {
        let Some(dir) = dir else {
            return Ok(Self::default());
        };
        let systems = rows(&dir.join("systems.csv"), 4)?
            .into_iter()
            .map(|(_, f)| System {
                id: f[0].clone(),
                arch: f[1].clone(),
                hostname: f[2].clone(),
                description: f[3].clone(),
            })
            .collect();
        let kat_issues = notes(&dir.join("kat_issues.csv"), true)?;
        let summary_notes = notes(&dir.join("summary_notes.csv"), false)?;
        Ok(Self {
            systems,
            kat_issues,
            summary_notes,
        })
    }

    pub(crate) fn system(&self, id: &str) -> Option<&System> {
        self.systems.iter().find(|s| s.id == id)
    }
}

/// Reads an `ID;Algorithm;URL` file (`None` or a missing file: no names).
pub(crate) fn read_candidates(
    path: Option<&Path>,
) -> Result<BTreeMap<String, CandidateInfo>, ReportError> {
    let Some(path) = path else {
        return Ok(BTreeMap::new());
    };
    Ok(rows(path, 3)?
        .into_iter()
        .map(|(_, f)| {
            (
                f[0].clone(),
                CandidateInfo {
                    algorithm: f[1].clone(),
                    url: f[2].clone(),
                },
            )
        })
        .collect())
}

fn notes(path: &Path, with_action: bool) -> Result<Vec<LabelNote>, ReportError> {
    let width = if with_action { 4 } else { 3 };
    rows(path, width)?
        .into_iter()
        .map(|(line, f)| {
            let label = Regex::new(&f[1]).map_err(|e| ReportError::Malformed {
                path: path.to_path_buf(),
                detail: format!("line {line}: label pattern {:?}: {e}", f[1]),
            })?;
            Ok(LabelNote {
                candidate: f[0].clone(),
                label,
                text: f[width - 1].clone(),
            })
        })
        .collect()
}

/// Data rows with their line numbers; the last field takes any further `;`.
fn rows(path: &Path, width: usize) -> Result<Vec<(usize, Vec<String>)>, ReportError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(ReportError::Read {
                path: PathBuf::from(path),
                source,
            });
        }
    };
    let mut out = Vec::new();
    let mut header_seen = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        if !header_seen {
            header_seen = true;
            continue;
        }
        let fields: Vec<String> = line.splitn(width, ';').map(str::to_string).collect();
        if fields.len() != width {
            return Err(ReportError::Malformed {
                path: path.to_path_buf(),
                detail: format!("line {}: expected {width} `;`-separated fields", i + 1),
            });
        }
        out.push((i + 1, fields));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_comments_header_and_patterns() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("systems.csv"),
            "# c\nID;Arch;Hostname;Description\narm_1;aarch64;vivo;Oryon; one core\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("summary_notes.csv"),
            "ID;Label;Note\nhash-05;.*;secret-indexed S-box\n",
        )
        .unwrap();
        let side = SideFiles::read(Some(dir.path())).unwrap();
        assert_eq!(side.system("arm_1").unwrap().description, "Oryon; one core");
        assert!(side.summary_notes[0].applies("hash-05", "uHash-512"));
        assert!(!side.summary_notes[0].applies("hash-06", "uHash-512"));
        assert!(side.kat_issues.is_empty());
        std::fs::write(
            dir.path().join("kat_issues.csv"),
            "ID;Label;Action;Cause\nx;(;a;b\n",
        )
        .unwrap();
        assert!(SideFiles::read(Some(dir.path())).is_err());
    }
}
