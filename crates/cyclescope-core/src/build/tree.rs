//! The output: an ngcc-harness tree, `TREE/<id>/lib/lib<label>.so` with
//! `TREE/<id>/kat.sha256` (made from the submission's own KAT files), the build logs in
//! `TREE/<id>/build/<label>.log`, and `TREE/build.json` with the harness's fields (spec §5.2)
//! plus the compiler, the flags and the build's own status. With `kat` the default KAT runs
//! on every library (in worker processes, as `cyclescope kat` does) and its status and log
//! go into build.json. Every file is written through a temporary name and renamed; entries of
//! instances not built this time are kept.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::discover::Unusable;
use super::{BuildError, BuildStatus, FlagProfile, InstanceBuild, Toolchain};
use crate::catalog::Instance;
use crate::kat::manifest::{Manifest, entry_for_reference};
use crate::kat::{KatOptions, KatStatus, run_kat};
use crate::record::pyjson::{write_atomic, write_json_atomic};

/// What `write_tree` did.
#[derive(Debug)]
pub struct TreeSummary {
    pub tree: PathBuf,
    pub builds: Vec<InstanceBuild>,
    /// Folders that never reached the compiler (bad header, no sources, duplicate label).
    pub unusable: Vec<Unusable>,
    /// The KAT status of each built instance, by label, when checked.
    pub kat: Vec<(String, KatStatus, String)>,
    /// Built instances the submission ships no KAT files for (and cyclescope knows none), with
    /// the manifest that therefore has no line of theirs: their KAT can only be NOKAT.
    pub without_kat_files: Vec<(String, PathBuf)>,
    /// What the compiler's jail could not enforce on this machine: to be said once.
    pub jail_gaps: Vec<super::JailGap>,
    /// Who the compiler ran as (None until `build_tree` says).
    pub compiler_user: Option<super::CompilerUser>,
}

impl TreeSummary {
    /// Labels that did not build, then the names of unusable instance folders.
    pub fn failures(&self) -> Vec<String> {
        self.builds
            .iter()
            .filter(|b| b.status == BuildStatus::Failed)
            .map(|b| b.source.label.clone())
            .chain(self.unusable.iter().map(|(f, _)| {
                let name = f.file_name().map(|n| n.to_string_lossy().into_owned());
                format!(
                    "{} (folder)",
                    name.unwrap_or_else(|| f.display().to_string())
                )
            }))
            .collect()
    }
}

/// Refuses an output folder that cannot be created or written, before anything is built.
pub(crate) fn check_writable(out: &Path) -> Result<(), BuildError> {
    let err = |source| BuildError::OutputNotWritable {
        path: out.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(out).map_err(err)?;
    let probe = out.join(".cyclescope-write-test");
    std::fs::write(&probe, b"").map_err(err)?;
    std::fs::remove_file(&probe).map_err(err)
}

/// What a tree's manifests take beside the shipped KAT files: a given manifest's lines
/// (`--manifest`) and the reference files a KAT folder holds for each instance (`--kat-dir`).
#[derive(Debug, Clone, Copy, Default)]
pub struct GivenReferences<'a> {
    pub manifest: Option<&'a Path>,
    pub kat_dir: Option<&'a Path>,
}

/// Copies the built libraries into `out`, writes manifests (the shipped KAT files' lines,
/// the given manifest's, and the lines of the reference files the given KAT folder holds for
/// an instance), logs and build.json, and (with `kat`) KAT-checks them.
pub fn write_tree(
    out: &Path,
    builds: Vec<InstanceBuild>,
    unusable: Vec<Unusable>,
    profile: &FlagProfile,
    toolchain: &Toolchain,
    kat: bool,
    references: GivenReferences<'_>,
) -> Result<TreeSummary, BuildError> {
    check_writable(out)?;
    let kat_dir = references.kat_dir;
    let given = references
        .manifest
        .map(|p| {
            Manifest::load(p).map_err(|e| BuildError::Config {
                path: p.to_path_buf(),
                detail: e.to_string(),
            })
        })
        .transpose()?;
    let json_path = out.join("build.json");
    let mut doc = read_build_json(&json_path)?;
    let mut manifests: Vec<(PathBuf, Manifest)> = Vec::new();
    let mut entries = Vec::new();
    let mut without_kat_files = Vec::new();
    for b in &builds {
        let s = &b.source;
        let cand_dir = out.join(&s.candidate);
        let rel_log = format!("{}/build/{}.log", s.candidate, s.label);
        if let Some(log) = &b.log {
            copy_file(log, &out.join(&rel_log))?;
        }
        let key = format!("{}/{}", s.candidate, s.label);
        let rel_lib = format!("{}/lib/lib{}.so", s.candidate, s.label);
        let Some(lib) = b
            .library
            .as_ref()
            .filter(|_| b.status != BuildStatus::Failed)
        else {
            // An earlier build's library must not stand in for the one that failed now.
            match std::fs::remove_file(out.join(&rel_lib)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(BuildError::OutputNotWritable {
                        path: out.join(&rel_lib),
                        source: e,
                    });
                }
                _ => {}
            }
            let error = b
                .error
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default();
            remove_key(&mut doc, "instances", &key);
            insert(
                &mut doc,
                "failed",
                &key,
                json!({
                    "candidate": s.candidate, "label": s.label, "instance": s.instance,
                    "source_dir": s.source_dir, "error": error,
                    "build_log": b.log.as_ref().map(|_| rel_log.clone()),
                }),
            );
            continue;
        };
        let lib_path = out.join(&rel_lib);
        let bytes = copy_file(lib, &lib_path)?;
        let load = crate::plugin::elf_load_bytes(&lib_path).map_err(|e| BuildError::Io {
            what: "cannot read the ELF program headers of",
            path: lib_path.clone(),
            source: std::io::Error::other(e.to_string()),
        })?;
        let manifest_path = cand_dir.join("kat.sha256");
        let manifest = match manifests.iter_mut().find(|(p, _)| *p == manifest_path) {
            Some((_, m)) => m,
            None => {
                let m = if manifest_path.is_file() {
                    Manifest::load(&manifest_path).map_err(|e| BuildError::Config {
                        path: manifest_path.clone(),
                        detail: e.to_string(),
                    })?
                } else {
                    Manifest::default()
                };
                let mut m = m;
                if let Some(g) = &given {
                    m.merge(g.entries.clone());
                }
                manifests.push((manifest_path.clone(), m));
                &mut manifests.last_mut().expect("just pushed").1
            }
        };
        let mut shipped = Vec::new();
        // The reference folder's files for this instance, found as `kat --kat-dir` finds
        // them, count as shipped ones (the submission's own copy of a name wins).
        let from_dir: Vec<PathBuf> = kat_dir
            .map(|d| {
                crate::kat::KatFile::ALL
                    .iter()
                    .map(|f| f.file_name(&s.instance))
                    .filter(|name| {
                        !s.shipped_kat
                            .iter()
                            .any(|p| p.file_name().is_some_and(|n| n == name.as_str()))
                    })
                    .filter_map(|name| crate::kat::manifest::find_reference(d, &s.label, &name))
                    .collect()
            })
            .unwrap_or_default();
        for file in &from_dir {
            let text = std::fs::read(file).map_err(|source| BuildError::Read {
                path: file.clone(),
                source,
            })?;
            let name = file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            manifest.merge([entry_for_reference(&text, format!("{}/{name}", s.label))]);
            shipped.push(Value::from(file.display().to_string()));
        }
        for file in &s.shipped_kat {
            let text = std::fs::read(file).map_err(|source| BuildError::Read {
                path: file.clone(),
                source,
            })?;
            let name = file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            manifest.merge([entry_for_reference(&text, format!("{}/{name}", s.label))]);
            shipped.push(Value::from(s.source_dir_of(file)));
        }
        if shipped.is_empty() && s.manifest_lines.is_empty() && given.is_none() {
            without_kat_files.push((s.label.clone(), manifest_path.clone()));
        }
        if !s.manifest_lines.is_empty() {
            let known = Manifest::parse(&s.manifest_lines.join("\n"), Path::new("<bundled>"))
                .map_err(|e| BuildError::Config {
                    path: manifest_path.clone(),
                    detail: e.to_string(),
                })?;
            manifest.merge(known.entries);
        }
        remove_key(&mut doc, "failed", &key);
        entries.push((key.clone(), lib_path.clone(), manifest_path.clone()));
        insert(
            &mut doc,
            "instances",
            &key,
            json!({
                "candidate": s.candidate,
                "label": s.label,
                "instance": s.instance,
                "variant": s.record_variant(),
                "flags": profile.name,
                "kat": Value::Null,
                "library": rel_lib,
                "library_sha256": hex::encode(Sha256::digest(&bytes)),
                "elf_load_bytes": load,
                "kat_log": Value::Null,
                "kat_log_sha256": Value::Null,
                "compiler": toolchain.identity(),
                "build_flags": profile.flags_text(),
                "build": if b.status == BuildStatus::Cached { "cached" } else { "built" },
                "build_log": rel_log,
                "build_warnings": b.warnings.len(),
                "source_dir": s.source_dir,
                "shipped_kat": shipped,
            }),
        );
    }
    for (path, m) in &manifests {
        m.write(path).map_err(|e| BuildError::Io {
            what: "cannot write",
            path: path.clone(),
            source: std::io::Error::other(e.to_string()),
        })?;
    }
    let mut kat_results = Vec::new();
    if kat {
        // Every built instance first: each one's oracle (its other variant) is among them.
        let built: Vec<(String, Instance)> = builds
            .iter()
            .filter(|b| b.status != BuildStatus::Failed)
            .filter_map(|b| {
                let s = &b.source;
                let key = format!("{}/{}", s.candidate, s.label);
                let (_, lib, manifest) = entries.iter().find(|(k, _, _)| *k == key)?;
                let inst = Instance {
                    candidate: s.candidate.clone(),
                    algorithm: s.algorithm.clone(),
                    label: s.label.clone(),
                    library: lib.clone(),
                    digest_bits: s.digest_bits,
                    variant: s.record_variant(),
                    flags: profile.name.clone(),
                    kat_manifest: Some(manifest.clone()),
                    kat_name: Some(s.instance.clone()),
                    abi: crate::plugin::Abi::Iccs,
                    oracle: None,
                    kat_dir: None,
                };
                Some((key, inst))
            })
            .collect();
        let peers: Vec<Instance> = built.iter().map(|(_, i)| i.clone()).collect();
        for (key, inst) in built {
            let mut opts = KatOptions::new(out);
            opts.peers = peers.clone();
            let (status, detail, log) = match run_kat(&inst, &opts, &mut |_| {}) {
                Ok(r) => (r.status, r.detail().to_string(), Some(r.log_path.clone())),
                Err(e) => (KatStatus::Crash, e.to_string(), None),
            };
            if let Some(Value::Object(entry)) =
                doc.get_mut("instances").and_then(|i| i.get_mut(&key))
            {
                entry.insert("kat".into(), Value::from(status.as_str()));
                if let Some(log) = &log {
                    let rel = log.strip_prefix(out).unwrap_or(log);
                    let sha = std::fs::read(log)
                        .map(|b| hex::encode(Sha256::digest(&b)))
                        .ok();
                    entry.insert("kat_log".into(), Value::from(rel.to_string_lossy()));
                    entry.insert(
                        "kat_log_sha256".into(),
                        sha.map_or(Value::Null, Value::from),
                    );
                }
            }
            kat_results.push((inst.label.clone(), status, detail));
        }
    }
    write_json_atomic(&json_path, &doc).map_err(super::io_err("cannot write", &json_path))?;
    Ok(TreeSummary {
        tree: out.to_path_buf(),
        builds,
        unusable,
        kat: kat_results,
        without_kat_files,
        jail_gaps: Vec::new(),
        compiler_user: None,
    })
}

/// The existing build.json (instances of earlier builds are kept), or a fresh one. A file
/// that is not a build.json is refused rather than overwritten.
fn read_build_json(path: &Path) -> Result<Value, BuildError> {
    if !path.exists() {
        return Ok(json!({"instances": {}, "failed": {}, "optimized": {}}));
    }
    let text = std::fs::read(path).map_err(|source| BuildError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut doc: Value = serde_json::from_slice(&text).map_err(|e| BuildError::Config {
        path: path.to_path_buf(),
        detail: format!("not a build.json ({e}); refusing to overwrite it"),
    })?;
    let Some(obj) = doc.as_object_mut() else {
        return Err(BuildError::Config {
            path: path.to_path_buf(),
            detail: "not a JSON object; refusing to overwrite it".into(),
        });
    };
    for k in ["instances", "failed", "optimized"] {
        obj.entry(k).or_insert_with(|| Value::Object(Map::new()));
    }
    Ok(doc)
}

fn insert(doc: &mut Value, section: &str, key: &str, value: Value) {
    if let Some(Value::Object(m)) = doc.get_mut(section) {
        m.insert(key.to_string(), value);
    }
}

fn remove_key(doc: &mut Value, section: &str, key: &str) {
    if let Some(Value::Object(m)) = doc.get_mut(section) {
        m.remove(key);
    }
}

/// Copies `from` to `to` atomically; returns the bytes.
fn copy_file(from: &Path, to: &Path) -> Result<Vec<u8>, BuildError> {
    let bytes = std::fs::read(from).map_err(|source| BuildError::Read {
        path: from.to_path_buf(),
        source,
    })?;
    write_atomic(to, &bytes).map_err(|source| BuildError::OutputNotWritable {
        path: to.to_path_buf(),
        source,
    })?;
    Ok(bytes)
}
