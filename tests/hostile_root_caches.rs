//! The folders cyclescope keeps between runs (the tuning journal's, the cache's) and the CPU
//! lock folder of a user without a runtime folder, planted by another user as links: root
//! never writes through another user's link, and a user that is not root never locks through
//! one. Run as root, as CI does: the planted links are given to `nobody` with `lchown`, or,
//! for `nobody`'s own lock folder, left to root.

mod common;

use std::path::{Path, PathBuf};

/// `nobody`.
const OTHER: u32 = 65534;

/// A folder of root's with one file in it, and `link` planted to it as another user's.
fn planted(dir: &Path, link: &Path) -> PathBuf {
    let target = dir.join("roots-folder");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("keep"), b"kept\n").unwrap();
    std::os::unix::fs::symlink(&target, link).unwrap();
    std::os::unix::fs::lchown(link, Some(OTHER), Some(OTHER)).unwrap();
    target
}

fn assert_untouched(target: &Path) {
    let names: Vec<String> = std::fs::read_dir(target)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["keep"], "{}", target.display());
}

/// The journal's folder (`$XDG_DATA_HOME/cyclescope`) and the cache's (`$XDG_CACHE_HOME/…`)
/// as another user's links: the run goes on, says why it keeps no journal, and writes
/// nothing where the links point (both were written through before).
#[test]
fn journal_and_cache_folders_behind_another_users_link_are_not_written() {
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let (data, cache) = (t.path().join("data"), t.path().join("cache"));
    std::fs::create_dir(&data).unwrap();
    std::fs::create_dir(&cache).unwrap();
    let journal_target = planted(&t.path().join("data"), &data.join("cyclescope"));
    let cache_target = {
        let d = t.path().join("c");
        std::fs::create_dir(&d).unwrap();
        planted(&d, &cache.join("cyclescope"))
    };
    let o = common::cyclescope()
        .args(common::QUICK_BUNDLED_RUN)
        .arg("--out")
        .arg(t.path().join("out"))
        .env("XDG_DATA_HOME", &data)
        .env("XDG_CACHE_HOME", &cache)
        .env_remove("CYCLESCOPE_CACHE_DIR")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let said = common::output_text(&o);
    assert!(o.status.success(), "{said}");
    assert!(
        said.contains(&format!(
            "{} is a symbolic link",
            data.join("cyclescope").display()
        )),
        "{said}"
    );
    assert_untouched(&journal_target);
    assert_untouched(&cache_target);
}

/// A user without `XDG_RUNTIME_DIR` locks its CPUs in `cyclescope-cpus-<uid>` in the temporary
/// folder; another user (root, here) made that name first as a link: the run is refused by
/// name before it locks or writes anything there.
#[test]
fn a_lock_folder_another_user_planted_for_a_user_without_a_runtime_folder_is_refused() {
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    let t = common::open_tempdir();
    let target = t.path().join("roots-folder");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("keep"), b"kept\n").unwrap();
    let fallback = t.path().join(format!("cyclescope-cpus-{OTHER}"));
    std::os::unix::fs::symlink(&target, &fallback).unwrap();
    let o = common::cyclescope_as_nobody(t.path())
        .args(common::QUICK_BUNDLED_RUN)
        .arg("--out")
        .arg(t.path().join("out"))
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove(cyclescope_core::cpu::lock::LOCK_DIR_ENV)
        .env("TMPDIR", t.path())
        .env("HOME", t.path())
        .env("XDG_DATA_HOME", t.path().join("data"))
        .env("XDG_CACHE_HOME", t.path().join("cache"))
        .current_dir(t.path())
        .output()
        .unwrap();
    let said = common::output_text(&o);
    assert_eq!(o.status.code(), Some(2), "{said}");
    assert!(
        said.contains(&format!("{} is a symbolic link", fallback.display())),
        "{said}"
    );
    assert_untouched(&target);
}
