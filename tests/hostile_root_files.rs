//! Root never writes where another user points it: a run folder that is another user's link or
//! another user's folder is refused by name before anything is written, and a lock file that
//! another user planted as a link in the runs folder (`/tmp`, for a run folder directly under
//! it) is refused by name with the file it points to left as it was. Run as root, as CI does:
//! the planted names are given to `nobody` with `lchown`.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// `nobody`: the other user planting names.
const OTHER: u32 = 65534;

fn give_away(path: &Path) {
    std::os::unix::fs::lchown(path, Some(OTHER), Some(OTHER)).unwrap();
}

/// A quick run of a bundled library into `out`, on CPU 0.
fn run_into(out: &Path) -> std::process::Output {
    common::cyclescope()
        .args(common::QUICK_BUNDLED_RUN)
        .arg("--out")
        .arg(out)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("running cyclescope")
}

/// A file of the victim's, with content and mode to prove it untouched.
fn victim(dir: &Path) -> PathBuf {
    let v = dir.join("profile");
    std::fs::write(&v, b"export PATH=/usr/bin\n").unwrap();
    std::fs::set_permissions(&v, std::fs::Permissions::from_mode(0o600)).unwrap();
    v
}

fn assert_untouched(v: &Path) {
    assert_eq!(std::fs::read(v).unwrap(), b"export PATH=/usr/bin\n");
    let mode = std::fs::metadata(v).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o600, "{}", v.display());
}

#[test]
fn an_out_folder_that_is_another_users_link_is_refused_by_name() {
    let t = tempfile::tempdir().unwrap();
    let target = t.path().join("victims-folder");
    std::fs::create_dir(&target).unwrap();
    let v = victim(&target);
    let link = t.path().join("out");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    give_away(&link);
    let o = run_into(&link);
    let text = common::output_text(&o);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert!(text.contains("out is a symbolic link"), "{text}");
    assert_untouched(&v);
    let left: Vec<_> = std::fs::read_dir(&target).unwrap().flatten().collect();
    assert_eq!(
        left.len(),
        1,
        "nothing written where the link points: {left:?}"
    );
}

#[test]
fn a_run_folder_another_user_owns_is_refused_by_name() {
    let t = tempfile::tempdir().unwrap();
    let theirs = t.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    give_away(&theirs);
    let o = run_into(&theirs);
    let text = common::output_text(&o);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert!(text.contains("theirs belongs to uid 65534"), "{text}");
    assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 0, "{text}");
}

#[test]
fn a_lock_file_planted_as_a_link_in_the_runs_folder_is_refused_and_its_target_untouched() {
    // The runs folder stands for `/tmp`: anyone may make names in it, and the run's CPU lock
    // is taken there as `.cpu<N>.lock`.
    let t = tempfile::tempdir().unwrap();
    let runs = t.path().join("runs");
    std::fs::create_dir(&runs).unwrap();
    std::fs::set_permissions(&runs, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let home = t.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let v = victim(&home);
    // Every CPU: the run's KAT may take any free one before CPU 0 is locked to measure.
    let cpus = std::thread::available_parallelism().map_or(64, |n| n.get().max(64));
    for cpu in 0..cpus {
        let link = runs.join(format!(".cpu{cpu}.lock"));
        std::os::unix::fs::symlink(&v, &link).unwrap();
        give_away(&link);
    }
    let o = run_into(&runs.join("x"));
    let text = common::output_text(&o);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert!(
        text.contains("cannot lock CPU") && text.contains(".lock is a symbolic link"),
        "{text}"
    );
    assert_untouched(&v);
}
