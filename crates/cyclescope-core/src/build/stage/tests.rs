use super::*;
use std::os::unix::fs::{MetadataExt, symlink};

fn instance(tree: &Path) -> InstanceSource {
    let folder = tree.join("Ref/A");
    InstanceSource {
        candidate: "c".into(),
        algorithm: "a".into(),
        instance: "A".into(),
        label: "A".into(),
        digest_bits: 256,
        variant: "Reference_Implementation".into(),
        sources: vec![folder.join("hash.c")],
        folder,
        tree: tree.to_path_buf(),
        source_dir: "t/Ref/A".into(),
        include_dirs: vec![],
        shipped_kat: vec![],
        manifest_lines: vec![],
    }
}

#[test]
fn the_copy_holds_what_the_compiler_may_read_and_nothing_leaves_the_roots() {
    let Some(id) = Identity::for_workers() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let tree = std::fs::canonicalize(dir.path()).unwrap().join("t");
    for (path, text) in [
        ("Ref/A/hash.c", "#include \"../../common/x.h\"\n"),
        ("Ref/A/notes.txt", "beside the source"),
        ("common/x.h", "int x;"),
        ("docs/readme.txt", "not for the compiler"),
    ] {
        std::fs::create_dir_all(tree.join(path).parent().unwrap()).unwrap();
        std::fs::write(tree.join(path), text).unwrap();
    }
    symlink("../../common", tree.join("Ref/A/inc")).unwrap();
    // Neither a pipe named like a header nor a dangling link stops or hangs the copy.
    nix::unistd::mkfifo(&tree.join("common/pipe.h"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    symlink("nowhere.h", tree.join("common/dangling.h")).unwrap();
    let inst = instance(&tree);
    let work = dir.path().join("work");
    let stage = Stage::create(&inst, &work, id).unwrap();
    let staged = work.join("cyclescope-staged-0");
    for (path, text) in [
        ("Ref/A/hash.c", "#include \"../../common/x.h\"\n"),
        ("Ref/A/notes.txt", "beside the source"),
        ("common/x.h", "int x;"),
        ("Ref/A/inc/x.h", "int x;"),
    ] {
        assert_eq!(std::fs::read_to_string(staged.join(path)).unwrap(), text);
        let meta = std::fs::symlink_metadata(staged.join(path)).unwrap();
        assert_eq!((meta.uid(), meta.mode() & 0o777), (id.uid, 0o600), "{path}");
    }
    assert!(!staged.join("docs").exists());
    assert!(!staged.join("common/pipe.h").exists());
    assert!(!staged.join("common/dangling.h").exists());
    let meta = std::fs::metadata(&work).unwrap();
    assert_eq!((meta.uid(), meta.mode() & 0o777), (id.uid, 0o700));
    assert_eq!(
        stage.path_of(&inst.sources[0]),
        Path::new("cyclescope-staged-0/Ref/A/hash.c")
    );
    let said = "cyclescope-staged-0/Ref/A/hash.c:1:10: error\n";
    let real = format!("{}/Ref/A/hash.c:1:10: error\n", tree.display());
    assert_eq!(stage.restore_paths(said), real);

    // The compiler's output is taken only as a regular file it made, never through a link.
    let secret = dir.path().join("secret");
    std::fs::write(&secret, "root's").unwrap();
    symlink(&secret, work.join("lib.so")).unwrap();
    let to = dir.path().join("taken.so");
    assert!(stage.take("lib.so", &to).is_err());
    assert!(std::fs::read(&to).map_or(true, |b| b.is_empty()));
    drop(stage);
    assert!(!work.exists());

    // A header linked out of the tree since discovery is refused by name, unread.
    symlink(&secret, tree.join("common/y.h")).unwrap();
    let err = Stage::create(&inst, &work, id).unwrap_err().to_string();
    assert!(err.contains("common/y.h links to a file outside"), "{err}");
    assert!(!err.contains("root's"), "{err}");
}
