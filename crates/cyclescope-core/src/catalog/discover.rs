//! Catalogs without a config file: one ad-hoc library (`--lib`), or every `lib*.so` under a
//! folder (`--scan`), including an ngcc-harness tree (`hash-NN/lib/lib<label>.so` next to
//! `hash-NN/kat.sha256`). Metadata comes from a probe the caller supplies (the CLI probes in
//! a worker process, so a library whose initialiser crashes cannot take the caller down).

use std::path::{Path, PathBuf};

use super::{Candidate, Catalog, CatalogError, Instance, Settings};
use crate::plugin::NgccMeta;

/// What probing a library found: its metadata if it exports any, or why it did not load.
pub(crate) type Probe = Result<Option<NgccMeta>, String>;

/// Builds the instance for `--lib PATH [--label L] [--digest-bits N]`. Missing label and
/// width come from `ngcc_meta`, then from the file name (`lib<label>.so`, the number after the
/// algorithm name: `MYSHA-256-O0` is 256 bits wide).
pub fn adhoc_instance(
    library: &Path,
    label: Option<&str>,
    digest_bits: Option<u32>,
    meta: Option<&NgccMeta>,
) -> Result<Instance, String> {
    let stem = library_label(library);
    let label = label
        .map(str::to_string)
        .or_else(|| {
            meta.filter(|m| m.digest_bits != 0)
                .map(|m| m.instance.clone())
        })
        .filter(|l| !l.is_empty())
        .unwrap_or(stem);
    crate::name::SafeName::new("instance label", &label)
        .map_err(|e| format!("{}: {e}", library.display()))?;
    let bits = digest_bits
        .or_else(|| {
            meta.and_then(|m| u32::try_from(m.digest_bits).ok())
                .filter(|&b| b != 0)
        })
        .or_else(|| width_in_label(&label))
        .ok_or_else(|| {
            format!(
                "cannot tell the digest width of {} (no ngcc_meta width, no number after the \
                 algorithm name in {label:?}): pass --digest-bits",
                library.display()
            )
        })?;
    let bits = super::bounds::check_digest_bits(u64::from(bits))
        .map_err(|e| format!("{}: {e}", library.display()))?;
    let inst = Instance {
        candidate: meta
            .map(|m| m.id.clone())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "adhoc".into()),
        algorithm: meta
            .map(|m| m.algorithm.clone())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| label.clone()),
        label,
        library: library.to_path_buf(),
        digest_bits: bits,
        variant: meta
            .map(|m| normalise_variant(&m.variant))
            .unwrap_or_else(|| "reference".into()),
        // Not built here: nothing says with which flags (`--flags-note` or a tree's
        // build.json may say so later).
        flags: super::UNKNOWN_FLAGS.into(),
        kat_manifest: None,
        kat_name: meta
            .filter(|m| m.digest_bits != 0 && !m.instance.is_empty())
            .map(|m| m.instance.clone()),
        abi: crate::plugin::Abi::Iccs,
        oracle: None,
        kat_dir: None,
    };
    // Whatever the source of the names (--label, ngcc_meta, the file name), they become file
    // names: refuse the instance rather than write outside the run directory.
    inst.file_names()
        .map_err(|e| format!("{}: {e}", library.display()))?;
    Ok(inst)
}

/// Scans `dir` (recursively, a few levels) for `lib*.so`. Libraries whose width cannot be
/// told are skipped and reported in the second return value.
pub fn scan_dir(
    dir: &Path,
    probe: impl Fn(&Path) -> Probe,
) -> Result<(Catalog, Vec<String>), CatalogError> {
    let mut libs = Vec::new();
    walk(dir, 0, &mut libs).map_err(|source| CatalogError::Scan {
        path: dir.to_path_buf(),
        source,
    })?;
    if libs.is_empty() {
        return Err(CatalogError::NothingFound(dir.to_path_buf()));
    }
    libs.sort();
    let mut skipped = Vec::new();
    let mut candidates: Vec<Candidate> = Vec::new();
    for lib in libs {
        let meta = match probe(&lib) {
            Ok(m) => m,
            Err(e) => {
                skipped.push(format!("{}: {e}", lib.display()));
                None
            }
        };
        let mut inst = match adhoc_instance(&lib, None, None, meta.as_ref()) {
            Ok(i) => i,
            Err(e) => {
                skipped.push(e);
                continue;
            }
        };
        // ngcc-harness layout: <tree>/hash-NN/lib/lib<label>.so and <tree>/hash-NN/kat.sha256.
        if let Some(cand_dir) = harness_candidate_dir(&lib) {
            // The harness names a library after its label; ngcc_meta's instance is the KAT
            // name, which two variants of one instance share.
            let stem = library_label(&lib);
            if crate::name::SafeName::new("instance label", &stem).is_ok() {
                inst.label = stem;
            }
            built_by(cand_dir, &mut inst);
            let id = cand_dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned());
            if let Some(id) = id.filter(|_| inst.candidate == "adhoc") {
                inst.candidate = id;
            }
            let manifest = cand_dir.join("kat.sha256");
            if manifest.is_file() {
                inst.kat_manifest = Some(manifest);
            }
        }
        match candidates.iter_mut().find(|c| c.id == inst.candidate) {
            Some(c) => c.instances.push(inst),
            None => candidates.push(Candidate {
                id: inst.candidate.clone(),
                algorithm: inst.algorithm.clone(),
                instances: vec![inst],
            }),
        }
    }
    Ok((
        Catalog {
            source: None,
            settings: Settings::default(),
            candidates,
        },
        skipped,
    ))
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let ty = entry.file_type()?;
        if ty.is_dir() && depth < 4 {
            walk(&path, depth + 1, out)?;
        } else if ty.is_file() || ty.is_symlink() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with("lib") && name.ends_with(".so") {
                out.push(path);
            }
        }
    }
    Ok(())
}

/// The flag class and variant that the tree's `build.json` (harness or `cyclescope build`)
/// records for `inst`, when it has an entry for it.
fn built_by(cand_dir: &Path, inst: &mut Instance) {
    let Some(json) = cand_dir
        .parent()
        .and_then(|tree| std::fs::read(tree.join("build.json")).ok())
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
    else {
        return;
    };
    let id = cand_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    let Some(entry) = id.and_then(|id| json.get("instances")?.get(format!("{id}/{}", inst.label)))
    else {
        return;
    };
    if let Some(f) = entry.get("flags").and_then(|v| v.as_str()) {
        inst.flags = f.to_string();
    }
    if let Some(v) = entry.get("variant").and_then(|v| v.as_str()) {
        inst.variant = v.to_string();
    }
}

fn harness_candidate_dir(lib: &Path) -> Option<&Path> {
    let lib_dir = lib.parent()?;
    (lib_dir.file_name()? == "lib").then_some(())?;
    let cand = lib_dir.parent()?;
    // A tree with a build.json is a harness tree whatever its candidate ids look like
    // (`cyclescope build --id iccs-c`).
    if cand
        .parent()
        .is_some_and(|t| t.join("build.json").is_file())
    {
        return Some(cand);
    }
    let name = cand.file_name()?.to_str()?;
    let digits = name.strip_prefix("hash-")?;
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some(cand)
}

/// `lib<label>.so` → `<label>`.
fn library_label(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = name.strip_suffix(".so").unwrap_or(&name);
    name.strip_prefix("lib").unwrap_or(name).to_string()
}

/// The digest width a label names: the number after the algorithm name, as its own word
/// (`MYSHA-256`, `SHA3-256`, `sha3_256`) or ending the name (`FEILIAN512`). What follows it is
/// a variant (`-O0`, `-bug`, `-opt`), never the width; a digit inside the name (`SHA3`) is not
/// one either when a word of digits follows.
fn width_in_label(label: &str) -> Option<u32> {
    let mut words = label.split(['-', '_']);
    let name = words.next()?;
    let digits = |w: &str| !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit());
    if let Some(w) = words.find(|w| digits(w)) {
        return w.parse().ok();
    }
    let tail = name.len() - name.bytes().rev().take_while(u8::is_ascii_digit).count();
    name[tail..].parse().ok()
}

/// The harness's `ngcc_meta.variant` says `Reference_Implementation`; records say `reference`.
fn normalise_variant(v: &str) -> String {
    match v {
        "Reference_Implementation" | "" => "reference".into(),
        "Optimized_Implementation" => "optimized".into(),
        other => other.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adhoc_takes_label_and_width_from_the_file_name() {
        let i = adhoc_instance(Path::new("x/libFEILIAN512.so"), None, None, None).unwrap();
        assert_eq!(
            (i.label.as_str(), i.digest_bits, i.candidate.as_str()),
            ("FEILIAN512", 512, "adhoc")
        );
        let err = adhoc_instance(Path::new("x/libfoo.so"), None, None, None).unwrap_err();
        assert!(err.contains("--digest-bits"), "{err}");
        let i = adhoc_instance(Path::new("x/libfoo.so"), Some("foo"), Some(384), None).unwrap();
        assert_eq!(i.digest_bits, 384);
    }

    #[test]
    fn the_width_is_the_number_after_the_algorithm_name_not_a_variant_suffix() {
        for (label, bits) in [
            ("MYSHA-256", Some(256)),
            ("MYSHA-256-O0", Some(256)),
            ("MYSHA-256-bug", Some(256)),
            ("SHA3-256-O3", Some(256)),
            ("sha3_512", Some(512)),
            ("FEILIAN1024", Some(1024)),
            ("FEILIAN512-O0", Some(512)),
            ("Keccak-f1600-256", Some(256)),
            ("MYSHA-bug", None),
            ("blake2b", None),
        ] {
            assert_eq!(width_in_label(label), bits, "{label}");
        }
        let i = adhoc_instance(Path::new("x/libMYSHA-256-O0.so"), None, None, None).unwrap();
        assert_eq!((i.label.as_str(), i.digest_bits), ("MYSHA-256-O0", 256));
        let err = adhoc_instance(Path::new("x/libMYSHA-bug.so"), None, None, None).unwrap_err();
        assert!(
            err.contains("no number after the algorithm name in \"MYSHA-bug\""),
            "{err}"
        );
    }

    #[test]
    fn hostile_names_and_widths_are_refused() {
        let meta = |id: &str, instance: &str, bits: u64| NgccMeta {
            id: id.into(),
            kind: "hash".into(),
            algorithm: "A".into(),
            instance: instance.into(),
            variant: String::new(),
            source_dir: String::new(),
            compiler: String::new(),
            build_flags: String::new(),
            digest_bits: bits,
            digest_len: bits / 8,
        };
        let lib = Path::new("x/libA256.so");
        for (m, label, needle) in [
            (
                Some(meta("../../x", "A256", 256)),
                None,
                "candidate id \"../../x\"",
            ),
            (
                Some(meta("h", "../../x", 256)),
                None,
                "instance label \"../../x\"",
            ),
            (None, Some("/etc/x"), "contains '/'"),
            (Some(meta("h", "A", 4_294_967_288)), None, "8 … 8192"),
        ] {
            let err = adhoc_instance(lib, label, None, m.as_ref()).unwrap_err();
            assert!(err.contains(needle), "{err}");
        }
        let err = adhoc_instance(lib, None, Some(4_294_967_288u64 as u32), None).unwrap_err();
        assert!(err.contains("8 … 8192"), "{err}");
    }

    #[test]
    fn harness_layout_is_recognised() {
        assert_eq!(
            harness_candidate_dir(Path::new("t/hash-10/lib/libFEILIAN512.so")),
            Some(Path::new("t/hash-10"))
        );
        assert_eq!(
            harness_candidate_dir(Path::new("t/other/lib/libX.so")),
            None
        );
        assert_eq!(harness_candidate_dir(Path::new("t/hash-10/libX.so")), None);
    }
}
