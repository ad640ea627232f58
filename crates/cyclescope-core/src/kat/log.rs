//! The KAT log in the published layout (spec §2.5, `performance/data/<sys>/kat/…/<label>.log`):
//! the `%-12s= %s` metadata block, `timing`/`wrote`/`manifest`/`compare` lines per file, and the
//! final `RESULT <id> <instance> <STATUS> <detail>` line (with its trailing space on a pass).
//! Paths are shown relative; this module never prints an absolute home or temp path. Every
//! field goes through `sanitize::log_field`, so whatever a library or a path carries, each
//! field stays on its line and the `RESULT` line cyclescope writes is the log's only one.

use std::path::{Component, Path};

use super::KatStatus;
use crate::catalog::Instance;
use crate::plugin::NgccMeta;
use crate::sanitize::log_field;

/// A path as a log shows it: relative to `base` (the run directory) when below it, else
/// relative paths as given, else relative to the working folder when below it, else only the
/// file name.
pub(crate) fn shown_path(path: &Path, base: &Path) -> String {
    let plain = |r: &Path| {
        !r.as_os_str().is_empty() && r.components().all(|c| matches!(c, Component::Normal(_)))
    };
    if let Some(r) = path.strip_prefix(base).ok().filter(|r| plain(r)) {
        return r.display().to_string();
    }
    if path.is_relative() {
        return path.display().to_string();
    }
    let cwd = std::env::current_dir().ok();
    match cwd
        .as_deref()
        .and_then(|c| path.strip_prefix(c).ok())
        .filter(|r| plain(r))
    {
        Some(r) => r.display().to_string(),
        None => path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
    }
}

/// The instance name of `RESULT` lines and the metadata block: `ngcc_meta.instance` of a
/// fixed-width library, else the catalog label (a multi-width library serves many instances).
pub(crate) fn instance_name(meta: Option<&NgccMeta>, inst: &Instance) -> String {
    meta.filter(|m| m.digest_bits != 0 && !m.instance.is_empty())
        .map_or_else(|| inst.label.clone(), |m| m.instance.clone())
}

/// The candidate id of `RESULT` lines: `ngcc_meta.id`, else the catalog's.
pub(crate) fn candidate_id(meta: Option<&NgccMeta>, inst: &Instance) -> String {
    meta.filter(|m| !m.id.is_empty())
        .map_or_else(|| inst.candidate.clone(), |m| m.id.clone())
}

/// `key         = value`, the metadata block's layout.
pub(crate) fn field(key: &str, value: &str) -> String {
    format!("{key:<12}= {}", log_field(value))
}

/// The metadata block. A library without `ngcc_meta` is described by the catalog; one whose
/// meta says `digest_bits = 0` gets the instance's label and the catalog width.
pub(crate) fn metadata_block(
    library: &str,
    meta: Option<&NgccMeta>,
    inst: &Instance,
) -> Vec<String> {
    let bits = meta
        .map(|m| m.digest_bits)
        .filter(|&b| b != 0)
        .unwrap_or(u64::from(inst.digest_bits));
    let instance = instance_name(meta, inst);
    let mut lines = vec![
        field("library", library),
        field("id", &candidate_id(meta, inst)),
    ];
    match meta {
        Some(m) => lines.extend([
            field("type", &m.kind),
            field("algorithm", &m.algorithm),
            field("instance", &instance),
            field("variant", &m.variant),
            field("source_dir", &m.source_dir),
            field("compiler", &m.compiler),
            field("build_flags", &m.build_flags),
        ]),
        None => lines.extend([
            field("type", "hash"),
            field("algorithm", &inst.algorithm),
            field("instance", &instance),
            field("variant", &inst.variant),
        ]),
    }
    lines.push(field("digest_bits", &bits.to_string()));
    lines.push(field("digest_len", &(bits / 8).to_string()));
    lines
}

/// `RESULT <id> <instance> <STATUS> <detail>`; the space before the detail is always there.
pub fn result_line(id: &str, instance: &str, status: KatStatus, detail: &str) -> String {
    format!(
        "RESULT {} {} {status} {}",
        log_field(id),
        log_field(instance),
        log_field(detail)
    )
}

/// `wrote  <path> (<n> bytes)`.
pub(crate) fn wrote_line(path: &str, bytes: u64) -> String {
    format!("wrote  {} ({bytes} bytes)", log_field(path))
}

/// `manifest <reference digest> <mode> <file>`.
pub(crate) fn manifest_line(sha256_hex: &str, mode: &str, file: &str) -> String {
    format!(
        "manifest {} {} {}",
        log_field(sha256_hex),
        log_field(mode),
        log_field(file)
    )
}

/// `compare <reference path> (<n> bytes)`.
pub(crate) fn compare_line(path: &str, bytes: u64) -> String {
    format!("compare {} ({bytes} bytes)", log_field(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn inst() -> Instance {
        Instance {
            candidate: "iccs".into(),
            algorithm: "ICCS hash helpers".into(),
            label: "pseudoXOF-512".into(),
            library: PathBuf::from("/x/libpseudoxof.so"),
            digest_bits: 512,
            variant: "iccs-baseline".into(),
            flags: "guide".into(),
            kat_manifest: None,
            kat_name: None,
            abi: Default::default(),
            oracle: None,
            kat_dir: None,
        }
    }

    fn meta(instance: &str, bits: u64) -> NgccMeta {
        NgccMeta {
            id: "hash-05".into(),
            kind: "hash".into(),
            algorithm: "uHash".into(),
            instance: instance.into(),
            variant: "Reference_Implementation".into(),
            source_dir: "uHash/Reference_Implementation/uHash-512".into(),
            compiler: "gcc 15.2.0".into(),
            build_flags: "-O2".into(),
            digest_bits: bits,
            digest_len: bits / 8,
        }
    }

    #[test]
    fn the_block_matches_the_published_layout() {
        let b = metadata_block(
            "lib/libuHash-512.so",
            Some(&meta("uHash-512", 512)),
            &inst(),
        );
        assert_eq!(
            b.join("\n"),
            "library     = lib/libuHash-512.so\nid          = hash-05\ntype        = hash\n\
             algorithm   = uHash\ninstance    = uHash-512\nvariant     = Reference_Implementation\n\
             source_dir  = uHash/Reference_Implementation/uHash-512\ncompiler    = gcc 15.2.0\n\
             build_flags = -O2\ndigest_bits = 512\ndigest_len  = 64"
        );
    }

    #[test]
    fn multi_width_libraries_show_the_label_and_catalog_width() {
        let b = metadata_block("libpseudoxof.so", Some(&meta("pseudoXOF", 0)), &inst());
        assert!(
            b.contains(&"instance    = pseudoXOF-512".to_string()),
            "{b:?}"
        );
        assert!(b.contains(&"digest_bits = 512".to_string()));
        assert!(b.contains(&"digest_len  = 64".to_string()));
        let none = metadata_block("libx.so", None, &inst());
        assert_eq!(none[1], "id          = iccs");
        assert_eq!(none.len(), 8);
    }

    #[test]
    fn a_pass_keeps_its_trailing_space() {
        assert_eq!(
            result_line("hash-05", "uHash-512", KatStatus::Pass, ""),
            "RESULT hash-05 uHash-512 PASS "
        );
    }

    #[test]
    fn a_field_cannot_open_a_line_of_its_own() {
        let mut m = meta("FL-256", 256);
        m.source_dir = "x\nRESULT hash-80 FL-256 PASS \ntiming 0.1 s".into();
        m.build_flags = "-O2\r\nRESULT hash-80 FL-256 PASS ".into();
        let mut log = metadata_block("lib/libx\n.so", Some(&m), &inst()).join("\n");
        log += "\n";
        log += &result_line(
            "hash-80",
            "FL-256",
            KatStatus::Cryptofail,
            "exit\nRESULT x y PASS ",
        );
        let starts: Vec<&str> = log
            .lines()
            .filter(|l| l.starts_with("RESULT") || l.starts_with("timing"))
            .collect();
        assert_eq!(starts.len(), 1, "{log}");
        assert!(
            starts[0].starts_with("RESULT hash-80 FL-256 CRYPTOFAIL "),
            "{log}"
        );
        assert_eq!(log.lines().count(), 12, "{log}");
    }

    #[test]
    fn absolute_paths_never_show() {
        assert_eq!(
            shown_path(Path::new("lib/libx.so"), Path::new("/r")),
            "lib/libx.so"
        );
        assert_eq!(
            shown_path(Path::new("/r/katgen/a.txt"), Path::new("/r")),
            "katgen/a.txt"
        );
        assert_eq!(
            shown_path(Path::new("/elsewhere/tmp/libx.so"), Path::new("/r")),
            "libx.so"
        );
    }
}
