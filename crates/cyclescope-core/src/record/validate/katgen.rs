//! `validate`'s look at the generated KAT text (`katgen/<candidate>/<label>/`): the folders a
//! KAT worker may write hold only the files the generator writes — `KAT_2_12_<name>.txt`, …,
//! regular files no larger than that file's text can be at the widest digest (8192 bits) —
//! so a file a candidate left there, or a text grown past any KAT's size, is named with its
//! size. Reads metadata only; never opens the text.

use std::path::Path;

use super::super::read::{EntryKind, list_dir};
use super::Validation;
use crate::kat::generate::KatFile;

/// Slack on top of the widest text (the parent's own check allows 64 KiB per file).
const MARGIN_BYTES: u64 = 64 << 10;
/// The widest digest a KAT can exercise (`catalog::bounds`).
const WIDEST_BITS: u32 = 8192;

/// Checks every `katgen/<candidate>/<label>/` folder under `root`.
pub(super) fn check(root: &Path, v: &mut Validation) {
    let top = Path::new("katgen");
    for (candidate, kind) in list_dir(root, top).unwrap_or_default() {
        let rel = top.join(&candidate);
        if kind != EntryKind::Dir {
            v.fail(
                &rel,
                "not a folder of KAT text (katgen/<candidate>/<label>/)",
            );
            continue;
        }
        for (label, kind) in list_dir(root, &rel).unwrap_or_default() {
            let rel = rel.join(&label);
            if kind != EntryKind::Dir {
                v.fail(
                    &rel,
                    "not a folder of KAT text (katgen/<candidate>/<label>/)",
                );
                continue;
            }
            for (name, kind) in list_dir(root, &rel).unwrap_or_default() {
                check_file(root, &rel.join(&name), kind, v);
            }
        }
    }
}

fn check_file(root: &Path, rel: &Path, kind: EntryKind, v: &mut Validation) {
    let name = rel
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let meta = std::fs::symlink_metadata(root.join(rel)).ok();
    let size = meta.as_ref().map_or(0, |m| m.len());
    let regular = kind == EntryKind::Other && meta.is_some_and(|m| m.is_file());
    let shown = crate::format::bytes(size);
    let file = KatFile::ALL.into_iter().find(|f| {
        name.strip_prefix(f.tag())
            .and_then(|rest| rest.strip_prefix('_'))
            .is_some_and(|rest| rest.len() > 4 && rest.ends_with(".txt"))
    });
    match (regular, file) {
        (true, Some(f)) => {
            let widest = f.expected_bytes(WIDEST_BITS) + MARGIN_BYTES;
            if size > widest {
                v.fail(
                    rel,
                    format!(
                        "{shown}, more than any {} text can hold ({})",
                        f.tag(),
                        crate::format::bytes(widest)
                    ),
                );
            }
        }
        _ => v.fail(
            rel,
            format!("a file the KAT generator does not write ({shown})"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_kat_text_of_a_possible_size_passes() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("katgen/hash-93/x256");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("KAT_2_12_x256.txt"), b"Msg_Len = 0\n").unwrap();
        let mut v = Validation::default();
        check(root.path(), &mut v);
        assert!(v.ok(), "{:?}", v.findings);

        std::fs::write(dir.join("stash.bin"), vec![0u8; 3000]).unwrap();
        std::fs::write(dir.join("KAT_Loop_x256.txt"), vec![b'0'; 100 << 10]).unwrap();
        std::fs::create_dir(dir.join("KAT_2_23_x256.txt")).unwrap();
        let mut v = Validation::default();
        check(root.path(), &mut v);
        let shown: Vec<String> = v.findings.iter().map(|f| f.to_string()).collect();
        assert_eq!(shown.len(), 3, "{shown:?}");
        let has = |words: &str| shown.iter().any(|f| f.contains(words));
        assert!(has(
            "x256/stash.bin: a file the KAT generator does not write (3 KiB)"
        ));
        assert!(has(
            "KAT_Loop_x256.txt: 100 KiB, more than any KAT_Loop text can hold"
        ));
        assert!(has(
            "KAT_2_23_x256.txt: a file the KAT generator does not write"
        ));
    }
}
