//! The loader's errors on real failing artifacts made at test time (a text file, a copy of a
//! bundled library with a foreign `e_machine`, truncated copies, a missing file, a library
//! without `CryptHash`, a copy whose `ngcc_meta` magic is altered, a width disagreement). Each
//! test checks the error variant and that its message names the file, since that message is
//! what a user acts on.

use std::path::{Path, PathBuf};

use cyclescope_core::catalog::bundled_library;
use cyclescope_core::plugin::{HashLibrary, PluginError};
use iccs_sm3::meta::{NGCC_LINK_ABI, NGCC_META_MAGIC, NGCC_TYPE_HASH};

/// Opens `path`, expecting an error; checks that the message names the file.
fn open_err(path: &Path) -> PluginError {
    let err = HashLibrary::open(path).expect_err("the library should not load");
    let message = err.to_string();
    assert!(
        message.contains(&path.display().to_string()),
        "message does not name {}: {message}",
        path.display()
    );
    err
}

/// A copy of the bundled `lib<name>.so` in `dir`, passed through `edit`.
fn edited_copy(dir: &Path, name: &str, edit: impl FnOnce(&mut Vec<u8>)) -> PathBuf {
    let mut bytes = std::fs::read(bundled_library(name)).expect("bundled library built");
    edit(&mut bytes);
    let path = dir.join(format!("lib{name}.so"));
    std::fs::write(&path, bytes).expect("write copy");
    path
}

#[test]
fn text_file_is_not_elf() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("libtext.so");
    std::fs::write(&path, "this is not a shared object\n").unwrap();
    assert!(matches!(open_err(&path), PluginError::NotElf(_)));
}

#[test]
fn foreign_machine_is_wrong_architecture() {
    let (foreign, foreign_name, host_name) = if cfg!(target_arch = "x86_64") {
        (183u16, "AArch64", "x86-64")
    } else {
        (62u16, "x86-64", "AArch64")
    };
    let dir = tempfile::tempdir().unwrap();
    let path = edited_copy(dir.path(), "pseudoxof", |b| {
        b[18..20].copy_from_slice(&foreign.to_le_bytes());
    });
    let err = open_err(&path);
    assert!(
        matches!(err, PluginError::WrongArchitecture { .. }),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains(foreign_name) && message.contains(host_name),
        "{message}"
    );
}

#[test]
fn truncated_copies_are_bad_elf() {
    for keep in [64, 10] {
        let dir = tempfile::tempdir().unwrap();
        let path = edited_copy(dir.path(), "pseudoxof", |b| b.truncate(keep));
        let err = open_err(&path);
        assert!(matches!(err, PluginError::BadElf { .. }), "{keep}: {err:?}");
    }
}

#[test]
fn missing_file_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("libnothere.so");
    assert!(matches!(open_err(&path), PluginError::Missing(_)));
}

#[test]
fn library_without_crypthash_is_missing_symbol() {
    let path = bundled_library("nosym");
    assert!(path.is_file(), "{} not built", path.display());
    let err = open_err(&path);
    assert!(matches!(err, PluginError::MissingSymbol { .. }), "{err:?}");
    assert!(err.to_string().contains("has no symbol CryptHash"), "{err}");
}

/// Offsets of the `ngcc_meta` header (magic, ABI 1, type hash as u32 LE) in a library file.
fn meta_header_offsets(bytes: &[u8]) -> Vec<usize> {
    let needle: Vec<u8> = [NGCC_META_MAGIC, NGCC_LINK_ABI, NGCC_TYPE_HASH]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(needle[..4], [0x4E, 0x47, 0x47, 0x43]);
    bytes
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle.as_slice())
        .map(|(i, _)| i)
        .collect()
}

#[test]
fn altered_meta_magic_is_bad_metadata() {
    // Control: an unaltered copy loads and has metadata, so the failure below is the magic's.
    let dir = tempfile::tempdir().unwrap();
    let control = edited_copy(dir.path(), "pseudoxof", |_| {});
    let lib = HashLibrary::open(&control).unwrap_or_else(|e| panic!("{e}"));
    assert!(lib.meta().is_some());
    drop(lib);

    let dir = tempfile::tempdir().unwrap();
    let path = edited_copy(dir.path(), "pseudoxof", |b| {
        let offsets = meta_header_offsets(b);
        assert_eq!(offsets.len(), 1, "one static meta block");
        for at in offsets {
            b[at..at + 4].copy_from_slice(&[0x4E, 0x47, 0x47, 0x44]);
        }
    });
    let err = open_err(&path);
    assert!(matches!(err, PluginError::BadMetadata { .. }), "{err:?}");
    assert!(err.to_string().contains("magic"), "{err}");
}

#[test]
fn digest_bits_disagreement_is_reported() {
    let path = bundled_library("sm3hash");
    let lib = HashLibrary::open(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(lib.check_digest_bits(256).is_ok());
    let err = lib.check_digest_bits(512).expect_err("sm3hash is 256 bits");
    assert!(
        matches!(
            err,
            PluginError::DigestBitsDisagree {
                library: 256,
                catalog: 512,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );
}
