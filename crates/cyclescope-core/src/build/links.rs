//! Symbolic links out of a submission tree are refused before any compiler runs: a source,
//! header or instance file whose real path is outside the tree (`hash.c -> /etc/shadow`)
//! would have the compiler quote or embed that file in a build log or a library. A refusal
//! names the link and the folder it points into, never the target's content. Anywhere in the
//! tree, a link out that the compiler could be sent to (`#include "../x/y.h"`) is refused as
//! well: a file of a source or header suffix, or a folder holding one (a linked folder of KAT
//! texts is kept). It reads link targets and folder listings only, never a file's bytes. (The compiler's jail, `jail`,
//! stops what a link check cannot see: `#include "/etc/shadow"`, `.incbin`.)

use std::path::{Path, PathBuf};

use super::BuildError;

/// How deep below the root links are looked for (as deep as instances are).
pub(crate) const MAX_DEPTH: usize = 8;

/// Suffixes of files a compiler reads as source or header.
const COMPILER_READS: [&str; 12] = [
    ".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx", ".inc", ".S", ".s", ".i",
];

/// A link whose real path leaves the tree.
#[derive(Debug, Clone)]
pub(crate) struct OutwardLink {
    link: PathBuf,
    target_folder: PathBuf,
}

impl OutwardLink {
    pub(crate) fn refusal(&self) -> BuildError {
        BuildError::LinkOutOfTree {
            link: self.link.clone(),
            target_folder: self.target_folder.clone(),
        }
    }
}

/// `path`'s link out of `root` (canonical), if its real path is outside. A path that does
/// not resolve (a dangling link) reads nothing and is left to the compiler's own error.
fn outward(root: &Path, path: &Path) -> Option<OutwardLink> {
    let real = std::fs::canonicalize(path).ok()?;
    (!real.starts_with(root)).then(|| OutwardLink {
        link: path.to_path_buf(),
        target_folder: real.parent().unwrap_or(Path::new("/")).to_path_buf(),
    })
}

/// Every file directly in the instance `folder` (headers are found there) must stay inside.
pub(crate) fn check_folder(root: &Path, folder: &Path) -> Result<(), BuildError> {
    if let Some(o) = outward(root, folder) {
        return Err(o.refusal());
    }
    let entries = std::fs::read_dir(folder).map_err(|source| BuildError::Read {
        path: folder.to_path_buf(),
        source,
    })?;
    for entry in entries.flatten() {
        if let Some(o) = outward(root, &entry.path()) {
            return Err(o.refusal());
        }
    }
    Ok(())
}

/// The instance's sources and include folders (and the files in those) must stay inside.
pub(crate) fn check_sources(
    root: &Path,
    sources: &[PathBuf],
    include_dirs: &[PathBuf],
) -> Result<(), BuildError> {
    for s in sources {
        if let Some(o) = outward(root, s) {
            return Err(o.refusal());
        }
    }
    for d in include_dirs {
        check_folder(root, d)?;
    }
    Ok(())
}

/// The links anywhere in the tree that lead out of it and that a compiler could read: files
/// of a source or header suffix, and folders (`#include "linked/x.h"`). Linked folders are
/// not entered.
pub(crate) fn outward_links(root: &Path) -> Vec<OutwardLink> {
    let mut out = Vec::new();
    walk(root, root, 0, &mut out);
    out.sort_by(|a, b| a.link.cmp(&b.link));
    out
}

fn walk(root: &Path, dir: &Path, depth: usize, out: &mut Vec<OutwardLink>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_symlink() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let read = if path.is_dir() {
                holds_sources(&path, 0)
            } else {
                compiler_reads(&name)
            };
            if read && let Some(o) = outward(root, &path) {
                out.push(o);
            }
        } else if kind.is_dir() && depth < MAX_DEPTH {
            walk(root, &path, depth + 1, out);
        }
    }
}

/// Whether a file of this name is one a compiler reads as source or header.
pub(crate) fn compiler_reads(name: &str) -> bool {
    COMPILER_READS.iter().any(|s| name.ends_with(s))
}

/// Whether the folder `dir` (a link's target) holds a file of a source or header suffix, as
/// deep as instances are looked for: a linked folder of KAT texts gives the compiler nothing.
fn holds_sources(dir: &Path, depth: usize) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let path = e.path();
        if path.is_dir() {
            depth < MAX_DEPTH && holds_sources(&path, depth + 1)
        } else {
            compiler_reads(&e.file_name().to_string_lossy())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn links_out_of_the_tree_are_named_and_links_inside_are_not() {
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret.txt");
        std::fs::write(&secret, "s3cr3t").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let inst = root.join("A");
        std::fs::create_dir(&inst).unwrap();
        std::fs::write(inst.join("a.c"), "int a;").unwrap();
        symlink(inst.join("a.c"), inst.join("b.c")).unwrap();
        check_folder(&root, &inst).unwrap();
        assert!(outward_links(&root).is_empty());

        symlink(&secret, inst.join("c.h")).unwrap();
        let err = check_folder(&root, &inst).unwrap_err().to_string();
        assert!(err.contains("c.h links to a file outside"), "{err}");
        let real_outside = std::fs::canonicalize(outside.path()).unwrap();
        assert!(err.contains(&real_outside.display().to_string()), "{err}");
        assert!(!err.contains("s3cr3t"), "{err}");
        assert_eq!(outward_links(&root).len(), 1);

        // A linked folder of headers deeper in the tree counts too; a KAT text file, or a
        // linked folder of texts only, does not.
        let deep = root.join("B/sub");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(outside.path().join("x.h"), "").unwrap();
        symlink(outside.path(), deep.join("inc")).unwrap();
        symlink(&secret, deep.join("KAT.txt")).unwrap();
        let texts = tempfile::tempdir().unwrap();
        std::fs::write(texts.path().join("KAT_2_12_X.txt"), "").unwrap();
        symlink(texts.path(), deep.join("KAT")).unwrap();
        let found: Vec<_> = outward_links(&root).into_iter().map(|o| o.link).collect();
        assert_eq!(found, [inst.join("c.h"), deep.join("inc")]);
    }
}
