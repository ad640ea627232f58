//! Refusals against real files owned by another uid (the tests run as root, as CI does, so
//! they can give a file to `nobody`).

use super::*;
use std::os::unix::fs::PermissionsExt;

/// `nobody`: the other user planting names.
const OTHER: u32 = 65534;

fn give_away(path: &Path) {
    std::os::unix::fs::lchown(path, Some(OTHER), Some(OTHER)).unwrap();
}

/// A file of ours with known content and mode, to prove it is left untouched.
fn victim(dir: &Path) -> PathBuf {
    let v = dir.join("victim");
    std::fs::write(&v, b"precious\n").unwrap();
    std::fs::set_permissions(&v, std::fs::Permissions::from_mode(0o640)).unwrap();
    v
}

fn untouched(v: &Path) {
    assert_eq!(std::fs::read(v).unwrap(), b"precious\n");
    let mode = std::fs::metadata(v).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o640);
}

#[test]
fn a_lock_file_that_is_a_link_another_users_or_hard_linked_is_refused_untouched() {
    let t = tempfile::tempdir().unwrap();
    let v = victim(t.path());
    let link = t.path().join(".cpu1.lock");
    std::os::unix::fs::symlink(&v, &link).unwrap();
    give_away(&link);
    let e = open_lock_file(&link).unwrap_err();
    assert!(matches!(e, OwnedError::Symlink { .. }), "{e}");
    assert!(
        e.to_string().contains(".cpu1.lock is a symbolic link"),
        "{e}"
    );
    untouched(&v);

    let theirs = t.path().join(".cpu2.lock");
    std::fs::write(&theirs, b"precious\n").unwrap();
    give_away(&theirs);
    let e = open_lock_file(&theirs).unwrap_err();
    assert!(
        e.to_string().contains(".cpu2.lock belongs to uid 65534"),
        "{e}"
    );

    let hard = t.path().join(".cpu3.lock");
    std::fs::hard_link(&v, &hard).unwrap();
    let e = open_lock_file(&hard).unwrap_err();
    assert!(matches!(e, OwnedError::HardLinked { links: 2, .. }), "{e}");
    untouched(&v);

    let fifo = t.path().join(".cpu4.lock");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let e = open_lock_file(&fifo).unwrap_err();
    assert!(matches!(e, OwnedError::NotRegular { .. }), "{e}");

    // Honest use: a fresh one is made, and an existing one of ours is opened again.
    let ours = t.path().join(".cpu5.lock");
    open_lock_file(&ours).unwrap();
    open_lock_file(&ours).unwrap();
}

#[test]
fn the_private_folder_is_made_0700_and_refused_when_not_ours_open_or_a_link() {
    let t = tempfile::tempdir().unwrap();
    let fresh = t.path().join("cyclescope-cpus-0");
    private_folder(&fresh).unwrap();
    let mode = std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    private_folder(&fresh).unwrap();

    let theirs = t.path().join("theirs");
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&theirs)
        .unwrap();
    give_away(&theirs);
    let e = private_folder(&theirs).unwrap_err();
    assert!(
        matches!(e, OwnedError::OtherOwner { owner: OTHER, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("theirs belongs to uid 65534"), "{e}");

    let open = t.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let e = private_folder(&open).unwrap_err();
    assert!(
        e.to_string()
            .contains("open is open to other users (mode 0777)"),
        "{e}"
    );

    let link = t.path().join("link");
    std::os::unix::fs::symlink(&fresh, &link).unwrap();
    give_away(&link);
    let e = private_folder(&link).unwrap_err();
    assert!(matches!(e, OwnedError::Symlink { .. }), "{e}");
}

#[test]
fn a_run_folder_that_is_a_link_or_another_users_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let elsewhere = t.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let link = t.path().join("out");
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    give_away(&link);
    let e = create_run_folder(&link).unwrap_err();
    assert!(e.to_string().contains("out is a symbolic link"), "{e}");

    let theirs = t.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    give_away(&theirs);
    let e = check_run_folder(&theirs).unwrap_err();
    assert!(matches!(e, OwnedError::OtherOwner { .. }), "{e}");
    // Nor may a run be made inside a folder another user owns: they could swap it for a link.
    let e = create_run_folder(&theirs.join("run")).unwrap_err();
    assert!(matches!(e, OwnedError::OtherOwner { .. }), "{e}");
    assert!(!theirs.join("run").exists());

    create_run_folder(&t.path().join("mine/run")).unwrap();
    create_run_folder(&t.path().join("mine/run")).unwrap();
}

#[test]
fn an_export_is_never_written_through_a_link() {
    let t = tempfile::tempdir().unwrap();
    let v = victim(t.path());
    let link = t.path().join("results.csv");
    std::os::unix::fs::symlink(&v, &link).unwrap();
    let e = write_own_file(&link, b"a,b\n").unwrap_err();
    assert!(matches!(e, OwnedError::Symlink { .. }), "{e}");
    untouched(&v);
    let ours = t.path().join("pages/index.md");
    write_own_file(&ours, b"long text\n").unwrap();
    write_own_file(&ours, b"short\n").unwrap();
    assert_eq!(std::fs::read(&ours).unwrap(), b"short\n");
}

#[test]
fn a_cache_folder_must_be_ours_and_closed_to_writes() {
    let t = tempfile::tempdir().unwrap();
    let ours = t.path().join("cache");
    own_cache_folder(&ours).unwrap();
    let theirs = t.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    give_away(&theirs);
    let e = own_cache_folder(&theirs).unwrap_err();
    assert!(matches!(e, OwnedError::OtherOwner { .. }), "{e}");
    std::fs::set_permissions(&ours, std::fs::Permissions::from_mode(0o777)).unwrap();
    let e = own_cache_folder(&ours).unwrap_err();
    assert!(matches!(e, OwnedError::OpenToOthers { .. }), "{e}");
}

/// A cache or journal folder reached through another user's link is refused by name, the
/// link on the way included, and nothing is made where it points; the user's own link, or
/// root's, is followed as the user chose.
#[test]
fn a_cache_folder_behind_another_users_link_is_refused_untouched() {
    let t = tempfile::tempdir().unwrap();
    let target = t.path().join("roots-folder");
    std::fs::create_dir(&target).unwrap();
    let planted = t.path().join("cache");
    std::os::unix::fs::symlink(&target, &planted).unwrap();
    give_away(&planted);
    for dir in [planted.clone(), planted.join("cyclescope")] {
        let e = own_cache_folder(&dir).unwrap_err();
        assert!(
            matches!(&e, OwnedError::Symlink { path } if *path == planted),
            "{e}"
        );
    }
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
    let mine = t.path().join("mine");
    std::os::unix::fs::symlink(&target, &mine).unwrap();
    own_cache_folder(&mine.join("cyclescope")).unwrap();
    assert!(target.join("cyclescope").is_dir());
}
