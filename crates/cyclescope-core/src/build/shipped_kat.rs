//! The KAT files a submission ships (`KAT_2_12_<instance>.txt`, `KAT_2_23_…`, `KAT_2_33_…`,
//! `KAT_Loop_…`, wherever they sit in the tree): found once per tree, and for each instance
//! the copy nearest to its folder. They become the tree's `kat.sha256` (spec §2.4, mode chosen
//! by their content), the way the harness writes its manifests from reference folders. Files
//! are only listed here, never trusted for more than their text.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::kat::KatFile;

/// How deep below the submission root KAT files are looked for.
const MAX_DEPTH: usize = 8;

/// Every KAT file name of the tree, with the paths that carry it.
#[derive(Debug, Default)]
pub(crate) struct ShippedKats {
    by_name: BTreeMap<String, Vec<PathBuf>>,
}

impl ShippedKats {
    pub(crate) fn index(root: &Path) -> Self {
        let mut by_name: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
        let mut stack = vec![(root.to_path_buf(), 0usize)];
        while let Some((dir, depth)) = stack.pop() {
            // An unreadable folder holds no KAT files we could use; the build goes on.
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let name = entry.file_name().to_string_lossy().into_owned();
                if path.is_dir() {
                    if depth < MAX_DEPTH {
                        stack.push((path, depth + 1));
                    }
                } else if name.starts_with("KAT_") && name.ends_with(".txt") && path.is_file() {
                    by_name.entry(name).or_default().push(path);
                }
            }
        }
        Self { by_name }
    }

    /// The reference files for `instance`, nearest to `folder` first among equal names, in the
    /// official order.
    pub(crate) fn for_instance(&self, instance: &str, folder: &Path) -> Vec<PathBuf> {
        KatFile::ALL
            .iter()
            .filter_map(|f| {
                let paths = self.by_name.get(&f.file_name(instance))?;
                paths
                    .iter()
                    // Ties go to the path that sorts first, so the choice never depends on the
                    // order the file system lists folders in.
                    .max_by(|a, b| {
                        common_prefix(a, folder)
                            .cmp(&common_prefix(b, folder))
                            .then_with(|| b.cmp(a))
                    })
                    .cloned()
            })
            .collect()
    }
}

fn common_prefix(a: &Path, b: &Path) -> usize {
    a.components()
        .zip(b.components())
        .take_while(|(x, y)| x == y)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_copy_wins() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for p in [
            "KAT/A-256/KAT_2_12_A-256.txt",
            "Optimized_Implementation/A-256/KAT_2_12_A-256.txt",
            "KAT/A-256/KAT_2_23_A-256.txt",
            "KAT/B-256/KAT_2_12_B-256.txt",
        ] {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "x").unwrap();
        }
        let kats = ShippedKats::index(root);
        let opt = kats.for_instance("A-256", &root.join("Optimized_Implementation/A-256"));
        assert_eq!(
            opt,
            [
                root.join("Optimized_Implementation/A-256/KAT_2_12_A-256.txt"),
                root.join("KAT/A-256/KAT_2_23_A-256.txt")
            ]
        );
        let reference = kats.for_instance("A-256", &root.join("Reference_Implementation/A-256"));
        assert_eq!(reference[0], root.join("KAT/A-256/KAT_2_12_A-256.txt"));
        assert!(kats.for_instance("C-256", root).is_empty());
    }
}
