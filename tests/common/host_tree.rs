//! Writable copies of the fixture sysfs/procfs trees, and a byte-for-byte picture of one, for
//! the tests that change a tree (`tune`) and must find it exactly as it was afterwards.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::output_text;

/// A writable copy of a fixture tree (symbolic links kept as links, as in sysfs).
pub fn fixture_copy(name: &str, into: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/host")
        .join(name);
    let dst = into.join(name);
    let o = Command::new("cp")
        .arg("-a")
        .arg(&src)
        .arg(&dst)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", output_text(&o));
    dst
}

/// Every file (its bytes) and symbolic link (its target) under `dir`, by relative path.
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(dir).unwrap().to_path_buf();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&p).unwrap();
                out.insert(rel, format!("-> {}", target.display()).into_bytes());
            } else if meta.is_dir() {
                out.insert(rel, b"<dir>".to_vec());
                stack.push(p);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}
